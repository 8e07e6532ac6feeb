package pgen

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

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
func FromTable(t *table.Table, s *Schema) (*tree.Data, error) {
	cls, err := t.Column(s.ClassColumn)
	if err != nil {
		return nil, fmt.Errorf("pgen: table %s has no class column %q", t.Name, s.ClassColumn)
	}
	d := &tree.Data{}
	d.Labels, d.Class = tree.Encode(cls.Str)
	for _, name := range s.attrNames() {
		c, err := t.Column(name)
		if err != nil {
			return nil, fmt.Errorf("pgen: table %s has no column %q", t.Name, name)
		}
		a := &tree.Attr{Name: name, Numeric: s.Numeric[name]}
		if a.Numeric {
			if c.Num == nil {
				return nil, fmt.Errorf("pgen: table %s column %q is not numeric", t.Name, name)
			}
			a.Num = c.Num
		} else {
			a.Values, a.Code = tree.Encode(c.Str)
		}
		d.Attrs = append(d.Attrs, a)
	}
	return d, nil
}
