package transform

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// router sends the rows of the original table down a tree grown on its
// recoding, as the miner sent the recoded rows.
type router struct {
	cls    []int32              // each row's label, an index into the tree's labels
	labels int                  // how many labels the tree has
	values map[string][]int32   // recoded column: each row's value index in the key
	images map[string][]float64 // recoded column: each row's recoded value
	strs   map[string][]string  // kept column: each row's text
}

// newRouter prepares raw for routing: the key's row count, every recoded
// column present, numeric and inside the key's domain, the class present
// with labels the tree knows.
func newRouter(t *tree.Tree, k *Key, raw *table.Table) (*router, error) {
	if raw.NumRows() != k.Rows {
		return nil, fmt.Errorf("%w: the table has %d rows, the key was made from %d", ErrDecode, raw.NumRows(), k.Rows)
	}
	rt := &router{labels: len(t.Labels), values: map[string][]int32{}, images: map[string][]float64{}, strs: map[string][]string{}}
	clsCol, err := raw.Column(k.Class)
	if err != nil {
		return nil, fmt.Errorf("%w: class: %w", ErrDecode, err)
	}
	rt.cls = make([]int32, clsCol.Len())
	for r, s := range clsCol.Str {
		i, ok := slices.BinarySearch(t.Labels, s)
		if !ok {
			return nil, fmt.Errorf("%w: class: a row's label is not among the tree's labels", ErrDecode)
		}
		rt.cls[r] = int32(i)
	}
	for _, c := range k.Columns {
		col, err := raw.Column(c.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %w", ErrDecode, c.Name, err)
		}
		if !c.Recoded() {
			rt.strs[c.Name] = col.Str
			continue
		}
		if col.Num == nil {
			return nil, fmt.Errorf("%w: column %q: not numeric in the table, recoded in the key", ErrDecode, c.Name)
		}
		vals := make([]int32, len(col.Num))
		imgs := make([]float64, len(col.Num))
		for r, x := range col.Num {
			i, ok := c.index(x)
			if !ok {
				return nil, fmt.Errorf("%w: column %q, row %d: the value is not in the key's domain (not the table the key was made from)", ErrDecode, c.Name, r+1)
			}
			vals[r], imgs[r] = int32(i), c.Images[i]
		}
		rt.values[c.Name], rt.images[c.Name] = vals, imgs
	}
	return rt, nil
}

// checkCounts compares node n's class counts with the rows that reach it.
func (rt *router) checkCounts(n *tree.Node, path string, rows []int32) error {
	if len(n.Counts) != rt.labels {
		return fmt.Errorf("%w: %s: counts: not one per class label", ErrDecode, path)
	}
	got := make([]uint64, len(n.Counts))
	for _, r := range rows {
		got[rt.cls[r]]++
	}
	if !slices.Equal(got, n.Counts) {
		return fmt.Errorf("%w: %s: the node's class counts are not those of the table's rows that reach it (a tree grown on another table?)", ErrDecode, path)
	}
	return nil
}

// split divides rows by the miner's split s, on the recoded values.
func (rt *router) split(s *tree.Split, rows []int32) (left, right []int32) {
	img, str := rt.images[s.Column], rt.strs[s.Column]
	for _, r := range rows {
		var holds bool
		if img != nil {
			holds = img[r] <= s.Num
		} else {
			holds = str[r] == s.Cat
		}
		if holds {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	return left, right
}
