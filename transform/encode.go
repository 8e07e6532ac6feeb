package transform

import (
	"cmp"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/table"
)

// Method chooses an attribute's breakpoints.
type Method int

const (
	// MaxMP is ChooseMaxMP (Bu et al., Figure 6): pieces follow the
	// monochromatic runs, which are recoded by random bijections.
	MaxMP Method = iota
	// BP is ChooseBP (Figure 5), the paper's baseline: random breakpoints,
	// every piece recoded monotonically.
	BP
	// Global is no breakpoint: one monotone function for the whole
	// attribute (Figure 9's first bar).
	Global
)

// DefaultBreakpoints is w when Options.Breakpoints is 0: the minimum of
// Bu et al.'s experiments (§6.2.1).
const DefaultBreakpoints = 20

// Options tune a transform. The zero value is the recommended setting:
// ChooseMaxMP with at least 20 breakpoints, no minimum width, the
// monotone invariant, every function family, randomness from crypto/rand.
type Options struct {
	Method Method
	// Breakpoints is w, the number of breakpoints to aim for (MaxMP adds
	// random ones up to w when the monochromatic runs give fewer); 0 means
	// DefaultBreakpoints.
	Breakpoints int
	// MinWidth demotes monochromatic runs of fewer distinct values to
	// non-monochromatic (MaxMP only); 0 or 1: none.
	MinWidth int
	// Direction is the global invariant of every recoded column; "" means
	// Monotone. AntiMonotone reverses each column's order, which reverses
	// the order of tied thresholds too: a miner that breaks ties by the
	// smallest threshold then picks, among splits of equal gain on one
	// column, the mirror of the one it picks on the raw data.
	Direction Direction
	// Families are the F_mono families drawn from; nil means all.
	Families []Family
	// Rand is the source of every random choice; nil means a ChaCha8
	// generator seeded from crypto/rand. Only tests and experiments set it:
	// a key drawn from a guessable seed is no secret.
	Rand *rand.Rand
}

// ErrOptions marks invalid options.
var ErrOptions = errors.New("transform: bad options")

// ErrInput marks a table that cannot be transformed.
var ErrInput = errors.New("transform: bad input")

func (o *Options) resolve() error {
	switch {
	case o.Method < MaxMP || o.Method > Global:
		return fmt.Errorf("%w: method: unknown", ErrOptions)
	case o.Breakpoints < 0:
		return fmt.Errorf("%w: breakpoints: must not be negative", ErrOptions)
	case o.MinWidth < 0:
		return fmt.Errorf("%w: min_width: must not be negative", ErrOptions)
	}
	if o.Breakpoints == 0 {
		o.Breakpoints = DefaultBreakpoints
	}
	switch o.Direction {
	case "":
		o.Direction = Monotone
	case Monotone, AntiMonotone:
	default:
		return fmt.Errorf("%w: direction: want monotone or anti-monotone", ErrOptions)
	}
	if len(o.Families) == 0 {
		o.Families = Families
	}
	for _, f := range o.Families {
		if f < Linear || f > SqrtLog {
			return fmt.Errorf("%w: families: unknown family", ErrOptions)
		}
	}
	if o.Rand == nil {
		var seed [32]byte
		crand.Read(seed[:]) // never fails (crypto/rand's contract since Go 1.24)
		o.Rand = rand.New(rand.NewChaCha8(seed))
	}
	return nil
}

// EncodeColumn draws the recoding of one numeric column x whose rows have
// class indices cls: breakpoints by opt.Method, pieces, a function per
// piece and the layout, checked (see check). The returned key has Kind
// Numeric and the column's name.
func EncodeColumn(name string, x []float64, cls []int32, opt Options) (*ColumnKey, error) {
	if err := opt.resolve(); err != nil {
		return nil, err
	}
	if len(x) == 0 || len(x) != len(cls) {
		return nil, fmt.Errorf("%w: column %q: no rows, or not one class per row", ErrInput, name)
	}
	prof, _ := NewProfile(x, cls)
	var bp []int
	switch opt.Method {
	case MaxMP:
		bp = ChooseMaxMP(prof.Label, opt.Breakpoints, opt.MinWidth, opt.Rand)
	case BP:
		bp = ChooseBP(len(prof.Values), opt.Breakpoints, opt.Rand)
	}
	label := prof.Label
	if opt.Method == MaxMP {
		label = demoteShortRuns(label, opt.MinWidth)
	}
	ps := pieces(label, bp, opt.Method == MaxMP)
	knots := opt.Breakpoints
	if opt.Method == Global {
		knots = 0
	}
	images, err := drawImages(prof.Values, ps, opt.Direction, opt.Families, knots, opt.Rand)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q: %w", ErrInput, name, err)
	}
	c := &ColumnKey{Name: name, Kind: table.Numeric, Direction: opt.Direction, Pieces: ps, Values: prof.Values, Images: images}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("transform: internal error: column %q: %w", name, err)
	}
	return c, nil
}

// Labels returns the sorted distinct values of a class column and each
// row's index among them.
func Labels(class []string) (labels []string, cls []int32) { return rank(class) }

// rank returns the sorted distinct values of x and each element's index
// among them.
func rank[T cmp.Ordered](x []T) (sorted []T, ranks []int32) {
	sorted = slices.Clone(x)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	ranks = make([]int32, len(x))
	for r, v := range x {
		k, _ := slices.BinarySearch(sorted, v)
		ranks[r] = int32(k)
	}
	return sorted, ranks
}

// Transform recodes table t for a miner: every Numeric column other than
// the class is replaced by its recoding (EncodeColumn), every other column
// is kept as it is, rows stay in their order. It returns the recoded
// table, named as t, and the key. Before returning it checks, for every
// recoded column, that sorting the rows by the recoded values gives the
// class string of the original order (or its reverse), the property that
// makes a gini or entropy tree invariant (Bu et al., Lemma 1, Theorem 1).
func Transform(t *table.Table, class string, opt Options) (*table.Table, *Key, error) {
	if err := opt.resolve(); err != nil {
		return nil, nil, err
	}
	clsCol, err := t.Column(class)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: class: %w", ErrInput, err)
	}
	if t.NumRows() == 0 {
		return nil, nil, fmt.Errorf("%w: table %q has no rows", ErrInput, t.Name)
	}
	_, cls := Labels(clsCol.Str)
	out := &table.Table{Name: t.Name}
	k := &Key{Table: t.Name, Class: class, Rows: t.NumRows()}
	for _, col := range t.Columns {
		if col.Name == class || col.Kind != table.Numeric || col.Num == nil {
			kind := col.Kind
			if col.Name == class {
				kind = table.Class
			}
			out.Columns = append(out.Columns, col)
			k.Columns = append(k.Columns, &ColumnKey{Name: col.Name, Kind: kind})
			continue
		}
		ck, err := EncodeColumn(col.Name, col.Num, cls, opt)
		if err != nil {
			return nil, nil, err
		}
		rec := &table.Column{Name: col.Name, Kind: table.Numeric, Num: make([]float64, len(col.Num)), Str: make([]string, len(col.Num))}
		for r, x := range col.Num {
			rec.Num[r], _ = ck.Encode(x)
			rec.Str[r] = strconv.FormatFloat(rec.Num[r], 'g', -1, 64)
		}
		if err := checkClassString(col.Num, rec.Num, cls, ck.Direction); err != nil {
			return nil, nil, fmt.Errorf("transform: internal error: column %q: %w", col.Name, err)
		}
		out.Columns = append(out.Columns, rec)
		k.Columns = append(k.Columns, ck)
	}
	return out, k, nil
}
