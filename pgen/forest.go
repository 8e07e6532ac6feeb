package pgen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// ForestParams are params.random_forest: a random forest learnt from the
// pooled pseudo-rows (GlobalForest).
type ForestParams struct {
	// Trees is the number of trees, required, in [1, maxForestTrees].
	Trees int `yaml:"trees"`
	// Features is the number of attributes tried at each node; 0 is
	// ⌊log2 M⌋ + 1 for M attributes, Weka's default.
	Features int `yaml:"features"`
}

// maxForestTrees bounds params.random_forest.trees: the forest is in the
// result, every tree of it.
const maxForestTrees = 500

// maxForestJSON bounds the forest's JSON in the result, which the log
// commits as one entry of at most wire.MaxMessageSize: unpruned trees
// grow with the rows (on Adult's 30,162 pseudo-rows from three parties'
// trees at release_k 10, 10 trees of depth 10 take 0.6 MB), so the number
// of trees alone does not bound it.
const maxForestJSON = wire.MaxMessageSize / 4

// checkForestSize refuses a forest whose JSON exceeds limit bytes, naming
// the params that shrink it.
func checkForestSize(f *Forest, limit int) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("pgen: params.random_forest: %w", err)
	}
	if len(b) > limit {
		return fmt.Errorf("pgen: params.random_forest: the forest takes %d bytes of JSON, above the result's %d: ask for fewer trees or a smaller params.max_depth", len(b), limit)
	}
	return nil
}

// Forest is a random forest (Breiman, "Random Forests", Machine Learning
// 45, 2001), one of the global models the paper learns from the pooled
// pseudo-rows (Sharkey, Tian, Zhang, Xu, PinKDD 2007, §4, learnt there
// with "public-domain Java implementations"; this one follows Weka's
// RandomForest). Each tree is grown by
// package tree's grower on a bootstrap sample of the rows (as many rows,
// drawn with replacement), unpruned, trying Features attributes drawn at
// each node (tree.GrowParams.Features). A row's class is the one with the
// largest sum over the trees of its leaf's class frequencies, as Weka's
// RandomForest averages its trees' distributions; ties go to the smaller
// class index.
//
// Its trees' splits and counts are of the pseudo-rows, drawn from the
// joint seed: nothing the published trees and the joint seed do not
// determine.
type Forest struct {
	Labels   []string     `json:"labels"`
	Features int          `json:"features"`
	Trees    []*tree.Tree `json:"trees"`
}

// LearnForest grows a random forest on d: p.Trees trees, with the depth
// and split size of gp (never pruned), bootstrap samples and attribute
// draws from rng.
func LearnForest(d *tree.Data, p ForestParams, gp tree.GrowParams, rng *rand.Rand) *Forest {
	features := p.Features
	if features == 0 {
		features = int(math.Log2(float64(max(len(d.Attrs), 1)))) + 1
	}
	gp.Prune, gp.Features, gp.Rand = false, features, rng
	f := &Forest{Labels: d.Labels, Features: features}
	for range p.Trees {
		f.Trees = append(f.Trees, tree.Grow(bootstrap(d, rng), gp, "", ""))
	}
	return f
}

// bootstrap is d.Rows() rows of d drawn with replacement.
func bootstrap(d *tree.Data, rng *rand.Rand) *tree.Data {
	n := d.Rows()
	pick := make([]int, n)
	for i := range pick {
		pick[i] = rng.IntN(n)
	}
	out := &tree.Data{Labels: d.Labels, Class: make([]int32, n)}
	for i, r := range pick {
		out.Class[i] = d.Class[r]
	}
	for _, a := range d.Attrs {
		b := &tree.Attr{Name: a.Name, Numeric: a.Numeric, Values: a.Values}
		if a.Numeric {
			b.Num = make([]float64, n)
			for i, r := range pick {
				b.Num[i] = a.Num[r]
			}
		} else {
			b.Code = make([]int32, n)
			for i, r := range pick {
				b.Code[i] = a.Code[r]
			}
		}
		out.Attrs = append(out.Attrs, b)
	}
	return out
}

// Classify returns the class index of a row given by holds, which says
// whether the row satisfies a split (as tree.Tree.Leaf takes it).
func (f *Forest) Classify(holds func(*tree.Split) bool) int {
	score := make([]float64, len(f.Labels))
	for _, t := range f.Trees {
		leaf := t.Leaf(holds)
		var n uint64
		for _, c := range leaf.Counts {
			n += c
		}
		for c, k := range leaf.Counts {
			if n > 0 {
				score[c] += float64(k) / float64(n)
			}
		}
	}
	best := 0
	for c := range score {
		if score[c] > score[best] {
			best = c
		}
	}
	return best
}

// GlobalForest is the random forest the coordinator learns with
// params.random_forest: from the pseudo-rows Global grows its tree on,
// its bootstrap samples and attribute draws from the joint seed too
// (under a label of their own), so every member can redo it from the log.
func GlobalForest(trees []*tree.Tree, s *Schema, p ForestParams, gp tree.GrowParams, seed []byte) *Forest {
	gp.NoSplit = Other
	gp.Multiway = false // its attribute draws per node are the binary grower's (Features)
	return LearnForest(pseudoRows(trees, s, seed), p, gp, job.Rand(seed, "pgen/random-forest"))
}

// CorrectForest counts the rows of d that f classifies as their class (a
// label of d that f does not have counts as wrong; a split on a column d
// lacks sends every row right, as in tree.Correct).
func CorrectForest(f *Forest, d *tree.Data) int {
	byName := map[string]*tree.Attr{}
	for _, a := range d.Attrs {
		byName[a.Name] = a
	}
	right := 0
	for i := range d.Rows() {
		c := f.Classify(func(s *tree.Split) bool {
			a, ok := byName[s.Column]
			switch {
			case !ok:
				return false
			case a.Numeric:
				return s.Holds(a.Num[i], "")
			}
			return s.Holds(0, a.Values[a.Code[i]])
		})
		if f.Labels[c] == d.Labels[d.Class[i]] {
			right++
		}
	}
	return right
}
