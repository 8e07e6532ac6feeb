package pgen

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

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

// Schema is the horizontal partition's common schema: each attribute's
// kind, the class column's name and any domains the spec gives.
type Schema struct {
	Numeric     map[string]bool // attribute name -> numeric (else categorical)
	ClassColumn string
	// Ranges and Values are attributes' domains where the spec gives them
	// (params.ranges, params.values): public knowledge, from which PGEN
	// draws the values of an attribute off a path.
	Ranges map[string][2]float64
	Values map[string][]string
}

// attrNames lists the schema's attributes in name order.
func (s *Schema) attrNames() []string {
	var out []string
	for a := range s.Numeric {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// FromTable reads a loaded table into Data under the schema. Errors name
// the table and column, never a value.
func FromTable(t *table.Table, s *Schema) (*Data, error) {
	cls, err := t.Column(s.ClassColumn)
	if err != nil {
		return nil, fmt.Errorf("pgen: table %s has no class column %q", t.Name, s.ClassColumn)
	}
	d := &Data{}
	d.Labels, d.Class = encode(cls.Str)
	for _, name := range s.attrNames() {
		c, err := t.Column(name)
		if err != nil {
			return nil, fmt.Errorf("pgen: table %s has no column %q", t.Name, name)
		}
		a := &Attr{Name: name, Numeric: s.Numeric[name]}
		if a.Numeric {
			if c.Num == nil {
				return nil, fmt.Errorf("pgen: table %s column %q is not numeric", t.Name, name)
			}
			a.Num = c.Num
		} else {
			a.Values, a.Code = encode(c.Str)
		}
		d.Attrs = append(d.Attrs, a)
	}
	return d, nil
}

// encode maps strings to indexes into their sorted distinct values.
func encode(col []string) (values []string, codes []int32) {
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
func Correct(t *tree.Tree, d *Data) int {
	byName := map[string]*Attr{}
	for _, a := range d.Attrs {
		byName[a.Name] = a
	}
	right := 0
	for i := range d.Rows() {
		leaf := t.Leaf(func(s *tree.Split) bool {
			a, ok := byName[s.Column]
			return ok && s.Holds(a.row(i))
		})
		if t.Labels[leaf.Label()] == d.Labels[d.Class[i]] {
			right++
		}
	}
	return right
}
