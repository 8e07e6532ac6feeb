package pgen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// Rule is a single conjunctive rule, one of the global models the paper
// learns from the pooled pseudo-rows (Sharkey, Tian, Zhang, Xu, PinKDD
// 2007, §4 and Figure 6, learnt there with "public-domain Java
// implementations"; this one follows the description of Weka's
// ConjunctiveRule, its code not consulted). A row that satisfies every
// antecedent gets the majority class of Covered, any other row that of
// Default (the rows the rule does not cover).
//
// The rule is grown on two of three stratified folds of the rows and
// pruned on the third (ruleFolds): an antecedent is added greedily while
// one lowers the information of the split into covered and uncovered
// rows (the weighted average of their class entropies), each attribute
// at most once, each antecedent leaving at least ruleMinCover rows
// covered; reduced-error pruning then keeps the prefix of the antecedents
// that classifies the pruning fold best (the shortest among equals).
// Covered and Default are then counted on all the rows. The folds are
// drawn from rng.
//
// It holds counts of the pseudo-rows and thresholds between their
// values, nothing that the published trees and the joint seed do not
// determine.
type Rule struct {
	Labels      []string     `json:"labels"`
	Antecedents []Antecedent `json:"antecedents"`
	Covered     []uint64     `json:"covered"` // rows of each class the rule covers
	Default     []uint64     `json:"default"` // rows of each class it does not
}

// Antecedent is one condition of a rule: Attr <= Num, Attr > Num
// (numeric) or Attr == Cat (categorical). Its JSON has num for a numeric
// one (a threshold of 0 too) and cat for a categorical one (MarshalJSON).
type Antecedent struct {
	Attr string  `json:"attr"`
	Op   string  `json:"op"`
	Num  float64 `json:"num"`
	Cat  string  `json:"cat"`
}

// MarshalJSON writes attr, op and the one value the operator takes.
func (a Antecedent) MarshalJSON() ([]byte, error) {
	if a.Op == tree.OpEQ {
		return json.Marshal(struct {
			Attr string `json:"attr"`
			Op   string `json:"op"`
			Cat  string `json:"cat"`
		}{a.Attr, a.Op, a.Cat})
	}
	return json.Marshal(struct {
		Attr string  `json:"attr"`
		Op   string  `json:"op"`
		Num  float64 `json:"num"`
	}{a.Attr, a.Op, a.Num})
}

// OpGT is a numeric antecedent's other operator, beside tree.OpLE.
const OpGT = ">"

// holds evaluates the antecedent on a value of its attribute.
func (a Antecedent) holds(x float64, s string) bool {
	switch a.Op {
	case tree.OpLE:
		return x <= a.Num
	case OpGT:
		return x > a.Num
	}
	return s == a.Cat
}

const (
	// ruleFolds is the number of folds; the last prunes (Weka's default).
	ruleFolds = 3
	// ruleMinCover is the fewest grow rows an antecedent may leave
	// covered (Weka's default minimum weight, 2).
	ruleMinCover = 2
)

// LearnRule learns a conjunctive rule from d, its folds drawn from rng.
func LearnRule(d *tree.Data, rng *rand.Rand) *Rule {
	nc := len(d.Labels)
	grow, prune := ruleSplit(d.Class, nc, rng)
	ants := growRule(d, grow, nc)
	best, bestRight := 0, -1
	for n := 0; n <= len(ants); n++ {
		cov, unc := ruleCounts(d, ants[:n], grow, nc)
		c, u := int32(tree.Majority(cov)), int32(tree.Majority(orAll(unc, cov)))
		right := 0
		for _, i := range prune {
			want := u
			if covers(d, ants[:n], i) {
				want = c
			}
			if d.Class[i] == want {
				right++
			}
		}
		if right > bestRight {
			best, bestRight = n, right
		}
	}
	all := make([]int, d.Rows())
	for i := range all {
		all[i] = i
	}
	r := &Rule{Labels: d.Labels, Antecedents: ants[:best]}
	r.Covered, r.Default = ruleCounts(d, r.Antecedents, all, nc)
	return r
}

// orAll is unc, or cov + unc when unc is empty: a rule that covers every
// row it was counted on gives a row it does not cover the majority of
// all of them.
func orAll(unc, cov []uint64) []uint64 {
	if sum(unc) == 0 {
		return plus(cov, unc)
	}
	return unc
}

// ruleSplit deals the rows into ruleFolds folds stratified by class, in
// an order drawn from rng, and returns the first folds (to grow on) and
// the last (to prune on). With fewer rows than folds every row grows.
func ruleSplit(class []int32, nc int, rng *rand.Rand) (grow, prune []int) {
	order := rng.Perm(len(class))
	if len(class) < ruleFolds {
		return order, nil
	}
	seen := make([]int, nc)
	for _, i := range order {
		if seen[class[i]]%ruleFolds == ruleFolds-1 {
			prune = append(prune, i)
		} else {
			grow = append(grow, i)
		}
		seen[class[i]]++
	}
	slices.Sort(grow)
	slices.Sort(prune)
	return grow, prune
}

// covers reports whether row i satisfies every antecedent.
func covers(d *tree.Data, ants []Antecedent, i int) bool {
	for _, a := range ants {
		at := d.Attrs[slices.IndexFunc(d.Attrs, func(x *tree.Attr) bool { return x.Name == a.Attr })]
		x, s := 0.0, ""
		if at.Numeric {
			x = at.Num[i]
		} else {
			s = at.Values[at.Code[i]]
		}
		if !a.holds(x, s) {
			return false
		}
	}
	return true
}

// ruleCounts counts the rows of each class among rows that the
// antecedents cover and that they do not.
func ruleCounts(d *tree.Data, ants []Antecedent, rows []int, nc int) (cov, unc []uint64) {
	cov, unc = make([]uint64, nc), make([]uint64, nc)
	for _, i := range rows {
		if covers(d, ants, i) {
			cov[d.Class[i]]++
		} else {
			unc[d.Class[i]]++
		}
	}
	return cov, unc
}

// growRule adds antecedents greedily: at each step the one, on an
// attribute not yet used, whose split of the grow rows into covered and
// uncovered has the least information (info), if it is below the current
// rule's; it stops when none is.
func growRule(d *tree.Data, grow []int, nc int) []Antecedent {
	var ants []Antecedent
	covered := slices.Clone(grow)
	outside := make([]uint64, nc) // grow rows the rule already leaves out
	used := make([]bool, len(d.Attrs))
	cur := info(classCounts(d.Class, covered, nc), outside)
	for {
		var best Antecedent
		bestInfo, at := cur-1e-12, -1
		for j, a := range d.Attrs {
			if used[j] {
				continue
			}
			var cand Antecedent
			var v float64
			if a.Numeric {
				cand, v = bestNumericAnt(a, d.Class, covered, outside, nc)
			} else {
				cand, v = bestCategoricalAnt(a, d.Class, covered, outside, nc)
			}
			if v < bestInfo {
				best, bestInfo, at = cand, v, j
			}
		}
		if at < 0 {
			return ants
		}
		ants, used[at], cur = append(ants, best), true, bestInfo
		kept := covered[:0:0]
		for _, i := range covered {
			if covers(d, []Antecedent{best}, i) {
				kept = append(kept, i)
			} else {
				outside[d.Class[i]]++
			}
		}
		covered = kept
	}
}

// info is the information of a rule's split of the rows: the weighted
// average of the class entropies of the rows it covers and of those it
// does not (bits per row).
func info(cov, unc []uint64) float64 {
	n := sum(cov) + sum(unc)
	if n == 0 {
		return 0
	}
	// Each product converted on its own, never fused into the sum (see
	// entropy).
	return (float64(float64(sum(cov))*entropy(cov)) + float64(float64(sum(unc))*entropy(unc))) / float64(n)
}

func sum(c []uint64) uint64 {
	var n uint64
	for _, x := range c {
		n += x
	}
	return n
}

func classCounts(class []int32, rows []int, nc int) []uint64 {
	c := make([]uint64, nc)
	for _, i := range rows {
		c[class[i]]++
	}
	return c
}

// plus is a + b, element-wise, in a new slice.
func plus(a, b []uint64) []uint64 {
	out := slices.Clone(a)
	for i, x := range b {
		out[i] += x
	}
	return out
}

// bestCategoricalAnt is the antecedent a == v (v among the covered rows'
// values, never Other) of least information, and that information
// (+Inf when none covers ruleMinCover rows).
func bestCategoricalAnt(a *tree.Attr, class []int32, covered []int, outside []uint64, nc int) (Antecedent, float64) {
	per := make([][]uint64, len(a.Values))
	for _, i := range covered {
		v := a.Code[i]
		if per[v] == nil {
			per[v] = make([]uint64, nc)
		}
		per[v][class[i]]++
	}
	total := classCounts(class, covered, nc)
	best, bestInfo := Antecedent{}, math.Inf(1)
	for v, c := range per {
		if c == nil || sum(c) < ruleMinCover || a.Values[v] == Other {
			continue
		}
		rest := plus(outside, total)
		for k, x := range c {
			rest[k] -= x
		}
		if x := info(c, rest); x < bestInfo {
			best, bestInfo = Antecedent{Attr: a.Name, Op: tree.OpEQ, Cat: a.Values[v]}, x
		}
	}
	return best, bestInfo
}

// bestNumericAnt is the antecedent a <= t or a > t (t halfway between two
// adjacent distinct values of the covered rows) of least information, and
// that information (+Inf when none covers ruleMinCover rows).
func bestNumericAnt(a *tree.Attr, class []int32, covered []int, outside []uint64, nc int) (Antecedent, float64) {
	rows := slices.Clone(covered)
	sort.SliceStable(rows, func(x, y int) bool { return a.Num[rows[x]] < a.Num[rows[y]] })
	total := classCounts(class, rows, nc)
	below := make([]uint64, nc)
	best, bestInfo := Antecedent{}, math.Inf(1)
	for k := 0; k < len(rows)-1; k++ {
		below[class[rows[k]]]++
		lo, hi := a.Num[rows[k]], a.Num[rows[k+1]]
		if lo == hi {
			continue
		}
		above := slices.Clone(total)
		for c, x := range below {
			above[c] -= x
		}
		t := tree.Midpoint(lo, hi)
		if k+1 >= ruleMinCover {
			if x := info(below, plus(outside, above)); x < bestInfo {
				best, bestInfo = Antecedent{Attr: a.Name, Op: tree.OpLE, Num: t}, x
			}
		}
		if len(rows)-k-1 >= ruleMinCover {
			if x := info(above, plus(outside, below)); x < bestInfo {
				best, bestInfo = Antecedent{Attr: a.Name, Op: OpGT, Num: t}, x
			}
		}
	}
	return best, bestInfo
}

// Classify returns the class index for a row given by its attributes'
// values (value as NaiveBayes.Classify takes it): Covered's majority when
// the row satisfies every antecedent, Default's otherwise (a row that
// lacks an antecedent's attribute is not covered). Ties go to the smaller
// class index.
func (r *Rule) Classify(value func(name string) (float64, string, bool)) int {
	for _, a := range r.Antecedents {
		x, s, ok := value(a.Attr)
		if !ok || !a.holds(x, s) {
			return tree.Majority(orAll(r.Default, r.Covered))
		}
	}
	return tree.Majority(r.Covered)
}

// GlobalRule is the conjunctive rule the coordinator learns with
// params.conjunctive_rule: from the pseudo-rows Global grows its tree on,
// its folds drawn from the joint seed too (under a label of their own),
// so every member can redo it from the log.
func GlobalRule(trees []*tree.Tree, s *Schema, seed []byte) *Rule {
	return LearnRule(pseudoRows(trees, s, seed), job.Rand(seed, "pgen/conjunctive-rule"))
}

// CorrectRule counts the rows of d that r classifies as their class (a
// label of d that r does not have counts as wrong).
func CorrectRule(r *Rule, d *tree.Data) int {
	return correct(r.Classify, r.Labels, d)
}
