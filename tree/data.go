package tree

import "slices"

// Data is one table of rows as the tree grower reads it: attributes in
// name order, each numeric (Num) or categorical (codes into Values), and
// each row's class as an index into Labels (sorted).
type Data struct {
	Attrs  []*Attr
	Class  []int32
	Labels []string
}

// Attr is one attribute column.
type Attr struct {
	Name    string
	Numeric bool
	Num     []float64 // numeric: the values
	Code    []int32   // categorical: each row's index into Values
	Values  []string  // categorical: the distinct values, sorted
}

// Rows is the number of rows.
func (d *Data) Rows() int { return len(d.Class) }

// Encode maps strings to indexes into their sorted distinct values (a
// categorical Attr's Values and Code, or Data's Labels and Class).
func Encode(col []string) (values []string, codes []int32) {
	idx := map[string]int32{}
	for _, v := range col {
		idx[v] = 0
	}
	for v := range idx {
		values = append(values, v)
	}
	slices.Sort(values)
	for i, v := range values {
		idx[v] = int32(i)
	}
	codes = make([]int32, len(col))
	for i, v := range col {
		codes[i] = idx[v]
	}
	return values, codes
}

// row gives the value of attribute a at row i as Split.Holds takes it.
func (a *Attr) row(i int) (float64, string) {
	if a.Numeric {
		return a.Num[i], ""
	}
	return 0, a.Values[a.Code[i]]
}

// Correct counts the rows of d that t classifies as their class (a label
// of d that t does not have counts as wrong); a split on a column d lacks
// sends every row right.
func Correct(t *Tree, d *Data) int {
	byName := map[string]*Attr{}
	for _, a := range d.Attrs {
		byName[a.Name] = a
	}
	right := 0
	for i := range d.Rows() {
		leaf := t.Leaf(func(s *Split) bool {
			a, ok := byName[s.Column]
			return ok && s.Holds(a.row(i))
		})
		if t.Labels[leaf.Label()] == d.Labels[d.Class[i]] {
			right++
		}
	}
	return right
}
