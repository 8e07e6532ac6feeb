package integrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/table"
)

// The pure part of the job (STYLE habit 1): from a party's aligned columns
// and the committed decisions to its TDS state, and back to the committed
// forms. Nothing here sends or receives.

// aligned is a party's table restricted to the records every party holds,
// in aligned order (ascending encoded id).
type aligned struct {
	cols      map[string][]string // own published columns, aligned
	order     []string            // own published columns in table order
	class     []string
	sensitive []string // the sensitive column, when this party holds it (not the class)
}

// alignTable restricts t to rows (its row indices in aligned order) and
// splits its columns into the class and the published columns. Every
// column other than the id and the class must have a taxonomy.
func alignTable(t *table.Table, rows []int, idCol, classCol, sensCol string, tax map[string]*anonymize.Taxonomy) (*aligned, error) {
	a := &aligned{cols: map[string][]string{}}
	if _, err := t.Column(classCol); err != nil {
		return nil, fmt.Errorf("%w: table %s has no class column %q (every party holds the class, params.class)", anonymize.ErrRequirement, t.Name, classCol)
	}
	for _, c := range t.Columns {
		switch {
		case c.Name == idCol:
			continue
		case c.Name == classCol:
			a.class = pick(c.Str, rows)
			continue
		case sensCol != "" && c.Name == sensCol:
			a.sensitive = pick(c.Str, rows)
			continue
		}
		tx, ok := tax[c.Name]
		if !ok {
			return nil, fmt.Errorf("%w: table %s column %q has no taxonomy in the spec: every published column is generalised (give taxonomies: {%s: PATH}, or leave the column out of the table)", anonymize.ErrRequirement, t.Name, c.Name, c.Name)
		}
		vals := pick(c.Str, rows)
		// coverage, without naming the value: an error reaches the log
		bad, first := 0, -1
		seen := map[string]bool{}
		for i, v := range vals {
			ok, done := seen[v]
			if !done {
				_, err := tx.Leaf(v)
				ok = err == nil
				seen[v] = ok
			}
			if !ok {
				bad++
				if first < 0 {
					first = i
				}
			}
		}
		if bad > 0 {
			return nil, fmt.Errorf("%w: table %s column %q: %d of %d rows hold a value its taxonomy does not cover, the first at table row %d (the values stay on this node)", anonymize.ErrNotCovered, t.Name, c.Name, bad, len(vals), rows[first]+1)
		}
		a.cols[c.Name] = vals
		a.order = append(a.order, c.Name)
	}
	return a, nil
}

func pick(vals []string, rows []int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = vals[r]
	}
	return out
}

// classDigest is SHA-256 of the class labels, length-prefixed, in order.
func classDigest(class []string) []byte {
	h := sha256.New()
	var buf [8]byte
	for _, c := range class {
		binary.BigEndian.PutUint64(buf[:], uint64(len(c)))
		h.Write(buf[:])
		h.Write([]byte(c))
	}
	return h.Sum(nil)
}

// checkSchema checks the committed schema against the party's own table:
// the attributes it owns are its published columns, in table order, and it
// is named the sensitive column's owner exactly when it holds that column
// (a coordinator that names another owner would have this party publish
// its sensitive values unchecked).
func checkSchema(self string, sd *schemaDecision, a *aligned, private bool) error {
	var own []string
	for _, at := range sd.Attrs {
		if at.Owner == self {
			own = append(own, at.Name)
		}
	}
	if !slices.Equal(own, a.order) {
		return fmt.Errorf("the committed schema gives it the columns %v; its table publishes %v", own, a.order)
	}
	if private && (sd.SensitiveOwner == self) != (a.sensitive != nil) {
		return fmt.Errorf("the committed schema names party %q the sensitive column's owner", sd.SensitiveOwner)
	}
	return nil
}

// tdsState is what a party's session rebuilds from its aligned table and
// the log: its TDS party (its own leaves) and the public state after every
// committed split.
type tdsState struct {
	party  *anonymize.TDSParty
	pub    *anonymize.TDSPublic
	class  []string
	splits int // committed splits applied
	// scored is the party's best candidate on the state after splits
	// splits, kept from its score step for its split step.
	scored *scored
	// made is the split this party made in its split step of round
	// madeAt, which the committed split of that round must equal.
	made   *Split
	madeAt int
}

// scored is a party's best candidate of one round, or none.
type scored struct {
	round int
	c     anonymize.Candidate
	ok    bool
}

// best is the party's best valid and beneficial specialisation in round r
// (anonymize.Best), on the state after r splits: computed once per round,
// so the winner's split step checks its candidate without scoring again.
func (st *tdsState) best(r int) (anonymize.Candidate, bool) {
	if st.scored == nil || st.scored.round != r {
		c, ok := anonymize.Best(st.party, st.pub)
		st.scored = &scored{round: r, c: c, ok: ok}
	}
	return st.scored.c, st.scored.ok
}

// newState starts TDS from the alignment decision.
func newState(self string, a *aligned, records int, attrAll []Attr, prm *Params, tax map[string]*anonymize.Taxonomy) (*tdsState, error) {
	reqs := prm.Requirements
	attrs := make([]anonymize.TDSAttr, len(attrAll))
	for i, at := range attrAll {
		tx, ok := tax[at.Name]
		if !ok {
			return nil, fmt.Errorf("%w: attribute %q has no taxonomy", anonymize.ErrRequirement, at.Name)
		}
		attrs[i] = anonymize.TDSAttr{Name: at.Name, Owner: at.Owner, Tax: tx}
	}
	if len(a.class) != records {
		return nil, fmt.Errorf("integrate: party %s holds %d aligned records, the job %d", self, len(a.class), records)
	}
	pub, err := anonymize.NewTDSPublic(attrs, reqs, a.class)
	if err != nil {
		return nil, err
	}
	m := prm.model()
	if m.L > 1 {
		if pub, err = pub.WithClassDiversity(m.L); err != nil {
			return nil, err
		}
	}
	beyond := m // the model without distinct l
	beyond.L = 0
	if !beyond.IsZero() {
		if pub, err = pub.WithClassModel(m, a.class); err != nil {
			return nil, err
		}
	}
	party, err := anonymize.NewTDSParty(self, pub, a.cols)
	if err != nil {
		return nil, err
	}
	return &tdsState{party: party, pub: pub, class: a.class}, nil
}

// toSplit turns the winner's SplitInstruction into its committed form.
func toSplit(pub *anonymize.TDSPublic, s anonymize.SplitInstruction) (Split, error) {
	width := 1
	if len(s.Children) > 256 {
		width = 2
	}
	if len(s.Children) > 1<<16 {
		return Split{}, fmt.Errorf("%w: column %q: node %d has %d children (at most 65536)", anonymize.ErrTaxonomy, pub.Attrs[s.Attr].Name, s.Node, len(s.Children))
	}
	pos := map[int32]int{}
	for ci, rs := range s.Records {
		for _, r := range rs {
			pos[r] = ci
		}
	}
	out := Split{Attr: s.Attr, Node: s.Node, Width: width}
	for r, v := range pub.Gen[s.Attr] {
		if int(v) != s.Node {
			continue
		}
		ci, ok := pos[int32(r)]
		if !ok {
			return Split{}, fmt.Errorf("integrate: split of attribute %d node %d misses record %d", s.Attr, s.Node, r)
		}
		if width == 1 {
			out.Child = append(out.Child, byte(ci))
		} else {
			out.Child = append(out.Child, byte(ci>>8), byte(ci))
		}
	}
	return out, nil
}

// fromSplit expands a committed split against the public state it applies
// to: the records at the node, in ascending order, go to their children.
func fromSplit(pub *anonymize.TDSPublic, s *Split) (anonymize.SplitInstruction, error) {
	if err := s.check(); err != nil {
		return anonymize.SplitInstruction{}, err
	}
	if s.Attr >= len(pub.Attrs) {
		return anonymize.SplitInstruction{}, fmt.Errorf("integrate: split of attribute %d: the job has %d", s.Attr, len(pub.Attrs))
	}
	t := pub.Attrs[s.Attr].Tax
	if s.Node >= len(t.Nodes) || t.IsLeaf(s.Node) {
		return anonymize.SplitInstruction{}, fmt.Errorf("integrate: split of column %q: node %d cannot be specialised", pub.Attrs[s.Attr].Name, s.Node)
	}
	kids := t.Nodes[s.Node].Children
	inst := anonymize.SplitInstruction{Attr: s.Attr, Node: s.Node, Children: slices.Clone(kids), Records: make([][]int32, len(kids))}
	i := 0
	for r, v := range pub.Gen[s.Attr] {
		if int(v) != s.Node {
			continue
		}
		if i >= s.len() {
			return anonymize.SplitInstruction{}, fmt.Errorf("integrate: split of column %q node %q: %d positions for more records", pub.Attrs[s.Attr].Name, t.Nodes[s.Node].Label, s.len())
		}
		ci := s.child(i)
		if ci >= len(kids) {
			return anonymize.SplitInstruction{}, fmt.Errorf("integrate: split of column %q node %q: child %d of %d", pub.Attrs[s.Attr].Name, t.Nodes[s.Node].Label, ci, len(kids))
		}
		inst.Records[ci] = append(inst.Records[ci], int32(r))
		i++
	}
	if i != s.len() {
		return anonymize.SplitInstruction{}, fmt.Errorf("integrate: split of column %q node %q: %d positions for %d records", pub.Attrs[s.Attr].Name, t.Nodes[s.Node].Label, s.len(), i)
	}
	return inst, nil
}

// apply applies one committed split, once it has checked that it is one
// the winner could have made: the split attribute's owner, that it is its
// own split of the node; every party, that every class of every
// requirement whose QID holds the split attribute keeps k records (and,
// with params.l, l class labels), which it can count on the public
// generalisation and the shared class. A coordinator that commits another
// partition (one that singles records out) is refused before any party
// computes on it.
func (st *tdsState) apply(s *Split) error {
	inst, err := fromSplit(st.pub, s)
	if err != nil {
		return err
	}
	if _, own := st.party.Leaf[s.Attr]; own {
		m, err := st.split(s.Attr, s.Node)
		if err != nil || m.Width != s.Width || !bytes.Equal(m.Child, s.Child) {
			return fmt.Errorf("%w: the split of attribute %d node %d is not the one this party made", anonymize.ErrViolation, s.Attr, s.Node)
		}
	}
	pub, err := st.pub.Apply(inst)
	if err != nil {
		return err
	}
	if err := keepsK(pub, s.Attr); err != nil {
		return err
	}
	st.pub = pub
	st.splits++
	return nil
}

// split is this party's split of one of its nodes on the current state
// (anonymize.Split in its committed form), made once per round: the split
// step makes it, and applying the committed split compares with it.
func (st *tdsState) split(attr, node int) (Split, error) {
	if m := st.made; m != nil && st.madeAt == st.splits && m.Attr == attr && m.Node == node {
		return *m, nil
	}
	inst, err := anonymize.Split(st.party, st.pub, anonymize.Candidate{Party: st.party.Name, Attr: attr, Node: node})
	if err != nil {
		return Split{}, err
	}
	m, err := toSplit(st.pub, inst)
	if err != nil {
		return Split{}, err
	}
	st.made, st.madeAt = &m, st.splits
	return m, nil
}

// keepsK checks the requirements whose QID holds attribute a on the public
// state: every class at least k records and, with ClassL, as many class
// labels.
func keepsK(pub *anonymize.TDSPublic, a int) error {
	name := pub.Attrs[a].Name
	for _, r := range pub.Reqs {
		if !slices.Contains(r.QID, name) {
			continue
		}
		idx := make([]int, len(r.QID))
		for i, q := range r.QID {
			if idx[i] = slices.IndexFunc(pub.Attrs, func(at anonymize.TDSAttr) bool { return at.Name == q }); idx[i] < 0 {
				return fmt.Errorf("%w: requirement %s: no attribute %q", anonymize.ErrRequirement, r, q)
			}
		}
		size := map[string]int{}
		labels := map[string]map[int32]bool{}
		key := make([]byte, 0, 4*len(idx))
		for rec, c := range pub.Class {
			key = key[:0]
			for _, i := range idx {
				key = binary.BigEndian.AppendUint32(key, uint32(pub.Gen[i][rec]))
			}
			size[string(key)]++
			if pub.ClassL > 1 {
				if labels[string(key)] == nil {
					labels[string(key)] = map[int32]bool{}
				}
				labels[string(key)][c] = true
			}
		}
		for k, n := range size {
			if n < r.K || pub.ClassL > 1 && len(labels[k]) < pub.ClassL {
				return fmt.Errorf("%w: the split leaves a class of %d records on %s", anonymize.ErrViolation, n, r)
			}
		}
	}
	return nil
}
