package pgen

import (
	"math/rand/v2"

	"github.com/cohortdm/cohort/tree"
)

// BaseGen is the paper's BASEGEN, the baseline PGEN is compared with
// (Sharkey, Tian, Zhang, Xu, PinKDD 2007, §4: it "uses the published
// decision tree to predict and label tuples randomly selected from the
// data space"; Figures 5 and 6). The paper says neither how a tuple is
// drawn nor which tree labels it when there are several; here, as "all
// the data sources use the same data generation algorithm" (§4), each
// published tree gives as many rows as it counts, every attribute drawn
// uniformly from its domain (the one Generate draws an attribute off a
// path from: the spec's, or what the trees publish), each labelled with
// the majority class of the tree's leaf it reaches. The rows are pooled
// as Generate pools PGEN's.
//
// It is a baseline for the figures (docs/pgen.md), not a job param: it
// uses less of each published tree than PGEN (the leaves' class counts
// and how many rows each path holds are dropped) and the paper and the
// figures show it no better.
func BaseGen(trees []*tree.Tree, s *Schema, rng *rand.Rand) *tree.Data {
	d, doms := pseudoTable(trees, s)
	byName := map[string]*tree.Attr{}
	for _, a := range d.Attrs {
		byName[a.Name] = a
	}
	for _, t := range trees {
		classOf := classIndex(t, d.Labels)
		for range sum(t.Root.Counts) {
			r := d.Rows()
			for i, at := range d.Attrs {
				doms[i].draw(at, nil, rng)
			}
			leaf := t.Leaf(func(sp *tree.Split) bool {
				a := byName[sp.Column]
				switch {
				case a == nil: // not an attribute of the schema: as tree.Correct
					return false
				case a.Numeric:
					return sp.Holds(a.Num[r], "")
				}
				return sp.Holds(0, a.Values[a.Code[r]])
			})
			d.Class = append(d.Class, classOf[leaf.Label()])
		}
	}
	return d
}
