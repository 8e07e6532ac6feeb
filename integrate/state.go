package integrate

import (
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

// tdsState is what a party's session rebuilds from its aligned table and
// the log: its TDS party (its own leaves) and the public state after every
// committed split.
type tdsState struct {
	party  *anonymize.TDSParty
	pub    *anonymize.TDSPublic
	class  []string
	splits int // committed splits applied
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
	if prm.L > 1 {
		if pub, err = pub.WithClassDiversity(prm.L); err != nil {
			return nil, err
		}
	}
	if !prm.Model.IsZero() {
		if pub, err = pub.WithClassModel(prm.model(), a.class); err != nil {
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

// apply applies one committed split.
func (st *tdsState) apply(s *Split) error {
	inst, err := fromSplit(st.pub, s)
	if err != nil {
		return err
	}
	pub, err := st.pub.Apply(inst)
	if err != nil {
		return err
	}
	st.pub = pub
	st.splits++
	return nil
}
