package coherence

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Role is what an item is to an attacker (Xu, ch. 4, §4.1).
type Role uint8

const (
	// Kept items are neither public nor private: an attacker is assumed
	// not to know them and they are not sensitive, so they are published
	// as they are and take no part in moles. They count in nuggets and in
	// the loss of items. (The thesis's experiments make a fraction δ of
	// the items public; the others are kept.)
	Kept Role = iota
	// Public items may be known to an attacker; only they are suppressed.
	Public
	// Private items are sensitive; they are published as they are.
	Private
)

func (r Role) String() string {
	switch r {
	case Public:
		return "public"
	case Private:
		return "private"
	}
	return "kept"
}

// Labelled is a database whose items each have a role.
type Labelled struct {
	*Database
	Roles []Role
}

// RoleSpec says which items are private and which public.
type RoleSpec struct {
	// Private lists private items by label; labels that do not occur are
	// ignored.
	Private []string
	// ThesisRule adds the thesis's synthetic private items (see
	// ThesisPrivates) instead.
	ThesisRule bool
	// Public lists the public items by label. With neither Public nor
	// PublicFraction, every item that is not private is public.
	Public []string
	// PublicFraction makes round(fraction × |Ω|) of the items Ω that are
	// not private public, drawn with Seed: the first ones of a shuffle
	// (math/rand/v2, PCG seeded with (Seed, 0)) of Ω in item order.
	PublicFraction float64
	Seed           uint64
}

// Errors of Label.
var (
	// ErrRoles means the roles asked for are contradictory.
	ErrRoles = errors.New("coherence: bad item roles")
	// ErrPublicPrivate means an item is listed both public and private.
	ErrPublicPrivate = fmt.Errorf("%w: an item is listed both public and private", ErrRoles)
	// ErrThesisLabels means the thesis's private items cannot be labelled
	// in the data's format.
	ErrThesisLabels = fmt.Errorf("%w: the thesis's private items cannot be labelled", ErrRoles)
)

// Label gives db's items their roles. With the thesis rule the returned
// database is a new one that holds the private copies; otherwise it is db.
// f is the format the data will be written in (it decides the labels of
// the thesis's private items).
func Label(db *Database, spec RoleSpec, f Format) (*Labelled, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	l := &Labelled{Database: db}
	if spec.ThesisRule {
		var err error
		if l, err = ThesisPrivates(db, f); err != nil {
			return nil, err
		}
	} else {
		l.Roles = make([]Role, len(db.Items))
		ids := labelIndex(db)
		for _, lab := range spec.Private {
			if id, ok := ids[lab]; ok {
				l.Roles[id] = Private
			}
		}
	}
	var omega []int32 // the items that may be public
	for id, r := range l.Roles {
		if r != Private {
			omega = append(omega, int32(id))
		}
	}
	switch {
	case len(spec.Public) > 0:
		ids := labelIndex(l.Database)
		for _, lab := range spec.Public {
			id, ok := ids[lab]
			if !ok {
				continue
			}
			if l.Roles[id] == Private {
				return nil, ErrPublicPrivate
			}
			l.Roles[id] = Public
		}
	case spec.PublicFraction != 0:
		rng := rand.New(rand.NewPCG(spec.Seed, 0))
		rng.Shuffle(len(omega), func(i, j int) { omega[i], omega[j] = omega[j], omega[i] })
		n := int(spec.PublicFraction*float64(len(omega)) + 0.5)
		for _, id := range omega[:n] {
			l.Roles[id] = Public
		}
	default:
		for _, id := range omega {
			l.Roles[id] = Public
		}
	}
	return l, nil
}

// check refuses roles asked for in two ways at once.
func (spec RoleSpec) check() error {
	switch {
	case spec.ThesisRule && len(spec.Private) > 0:
		return fmt.Errorf("%w: give private items or the thesis rule, not both", ErrRoles)
	case len(spec.Public) > 0 && spec.PublicFraction != 0:
		return fmt.Errorf("%w: give public items or a public fraction, not both", ErrRoles)
	case spec.PublicFraction < 0 || spec.PublicFraction > 1:
		return fmt.Errorf("%w: the public fraction must be in [0, 1]", ErrRoles)
	}
	return nil
}

func labelIndex(db *Database) map[string]int32 {
	ids := make(map[string]int32, len(db.Items))
	for i, lab := range db.Items {
		ids[lab] = int32(i)
	}
	return ids
}

// ThesisPrivates builds the private items of the thesis's experiments
// (Xu, ch. 4, §4.5.1): to each transaction T it adds one private item, a
// copy of the item of T with the largest support among T's items of
// support below 50 % (ties to the item that appears first in the file), or
// the special private item s* when T has no such item. The original items
// stay, all public. A copy of item v is labelled base+v in a FIMI file,
// base the smallest power of ten above every item, and s* is 2·base; in a
// CSV file the copy is labelled v' and s* is s*.
func ThesisPrivates(db *Database, f Format) (*Labelled, error) {
	sup := db.Supports()
	n := len(db.Trans)
	copyLabel, star, err := thesisLabels(db, f)
	if err != nil {
		return nil, err
	}
	out := &Database{Items: slices.Clone(db.Items), Trans: make([][]int32, n)}
	roles := make([]Role, len(db.Items), len(db.Items)+16)
	for i := range roles {
		roles[i] = Public
	}
	copies := map[int32]int32{} // original item → its private copy
	newItem := func(label string) int32 {
		out.Items = append(out.Items, label)
		roles = append(roles, Private)
		return int32(len(out.Items) - 1)
	}
	starID := int32(-1)
	for t, tr := range db.Trans {
		best := int32(-1)
		for _, it := range tr {
			if 2*sup[it] < n && (best < 0 || sup[it] > sup[best] || sup[it] == sup[best] && it < best) {
				best = it
			}
		}
		var priv int32
		switch {
		case best >= 0:
			c, ok := copies[best]
			if !ok {
				c = newItem(copyLabel(best))
				copies[best] = c
			}
			priv = c
		default:
			if starID < 0 {
				starID = newItem(star)
			}
			priv = starID
		}
		out.Trans[t] = append(slices.Clip(tr), priv)
	}
	return &Labelled{Database: out, Roles: roles}, nil
}

// thesisLabels returns how the thesis's private items are labelled in
// format f, or an error when a label would clash with an item's.
func thesisLabels(db *Database, f Format) (func(int32) string, string, error) {
	if f == FIMI {
		var top uint64
		for _, lab := range db.Items {
			v, err := strconv.ParseUint(lab, 10, 64)
			if err != nil {
				return nil, "", fmt.Errorf("%w: the thesis rule in a FIMI file needs integer items", ErrThesisLabels)
			}
			top = max(top, v)
		}
		base := uint64(10)
		for base <= top {
			if base > (1<<63)/10 {
				return nil, "", fmt.Errorf("%w: items too large for the copies' labels", ErrThesisLabels)
			}
			base *= 10
		}
		return func(it int32) string {
			v, _ := strconv.ParseUint(db.Items[it], 10, 64)
			return strconv.FormatUint(base+v, 10)
		}, strconv.FormatUint(2*base, 10), nil
	}
	ids := labelIndex(db)
	for _, lab := range db.Items {
		if _, ok := ids[lab+"'"]; ok || lab == "s*" {
			return nil, "", fmt.Errorf("%w: an item's label clashes with theirs (v' and s*)", ErrThesisLabels)
		}
	}
	return func(it int32) string { return db.Items[it] + "'" }, "s*", nil
}
