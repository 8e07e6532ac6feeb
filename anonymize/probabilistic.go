package anonymize

import (
	"fmt"
	"math"
	"slices"
)

// Probabilistic (1−β, k)-anonymity and the quantile transformation (Lodha
// and Thomas, "Probabilistic Anonymity", PinKDD 2007, §3 Def. 4, Theorem 4
// and §3.1; §4.1 Defs. 8–9 and Theorem 5; §4.2).

// ProbabilisticPartitions is the largest number D′ of equiprobable value
// combinations a generalisation may leave so that a row matches at least k
// rows of a universe of n rows with probability at least 1 − β (Theorem 4,
// from the Chernoff bound in its proof):
//
//	D′ = n/(k−1) · (1 + x − √(x² + 2x)),  x = −ln β / (k−1).
//
// (0.9, 100)-anonymity over the U.S. (n = 3·10⁸) gives 2.44·10⁶ (their
// Example 6 rounds it to n/125 = 2.4·10⁶).
func ProbabilisticPartitions(n float64, k int, beta float64) (float64, error) {
	switch {
	case k < 2:
		return 0, fmt.Errorf("%w: k must be at least 2", ErrRequirement)
	case !(beta > 0 && beta < 1):
		return 0, fmt.Errorf("%w: beta must be in (0, 1)", ErrRequirement)
	case !(n >= float64(k)) || math.IsInf(n, 0):
		return 0, fmt.Errorf("%w: the universe must hold at least k rows", ErrRequirement)
	}
	x := -math.Log(beta) / float64(k-1)
	return n / float64(k-1) * (1 + x - math.Sqrt(x*x+2*x)), nil
}

// AllocateDistinct splits D′ combinations among columns (§3.1, Eq. 1): it
// minimises Σ w_i/d′_i (the rank difference a column with d′_i buckets
// costs, weighted) subject to Π d′_i = D′, so d′_i = w_i·(D′/Π w)^(1/m). A
// column whose share reaches its own distinct count d_i is left as it is
// and the others are solved again for D′/d_i (O(m²)). It returns d′_i,
// equal to d_i for the columns left untouched.
func AllocateDistinct(weights, distinct []float64, dPrime float64) ([]float64, error) {
	if len(weights) != len(distinct) || len(weights) == 0 {
		return nil, fmt.Errorf("%w: %d weights for %d columns", ErrRequirement, len(weights), len(distinct))
	}
	for i := range weights {
		if !(weights[i] > 0) || !(distinct[i] >= 1) {
			return nil, fmt.Errorf("%w: weights[%d] must be positive and distinct[%d] at least 1", ErrRequirement, i, i)
		}
	}
	if !(dPrime >= 1) {
		return nil, fmt.Errorf("%w: D′ must be at least 1", ErrRequirement)
	}
	out := make([]float64, len(weights))
	fixed := make([]bool, len(weights))
	for {
		prod, m := 1.0, 0
		for i, w := range weights {
			if !fixed[i] {
				prod *= w
				m++
			}
		}
		if m == 0 {
			return out, nil
		}
		d := math.Pow(dPrime/prod, 1/float64(m))
		changed := false
		for i, w := range weights {
			if fixed[i] {
				continue
			}
			out[i] = d * w
			if out[i] >= distinct[i] {
				fixed[i], out[i], changed = true, distinct[i], true
				dPrime /= distinct[i]
			}
		}
		if !changed {
			return out, nil
		}
		// re-solve from the start: fixing a column changes every share
		for i := range out {
			if !fixed[i] {
				out[i] = 0
			}
		}
	}
}

// ProbabilisticResult is a full-domain generalisation planned for
// probabilistic (1−β, k)-anonymity, and what it gives on the table itself.
type ProbabilisticResult struct {
	DPrime   float64   // the combinations allowed (ProbabilisticPartitions)
	Allowed  []float64 // d′_i per attribute (AllocateDistinct)
	Distinct []int     // distinct values per attribute in the data at its level
	Levels   []int
	Combos   int     // distinct generalised tuples in the data
	NCP      float64 // of the generalisation
	Classes  int
	MinGroup int
	// Covered is the fraction of records in classes of at least k on the
	// table itself (the targeted adversary's view, with the table as the
	// universe): the empirical 1 − β.
	Covered float64
	Gen     *Generalisation
}

// ProbabilisticAnonymise plans (1−β, k)-anonymity for ds against a
// universe of n rows (n ≤ 0: the table's own rows, the targeted adversary
// of their §3): D′ from Theorem 4, split among the attributes by
// AllocateDistinct (weights nil: equal), and every attribute generalised
// to the lowest level of its hierarchy that leaves at most d′_i distinct
// values in the data (§4.2, the rule for categorical attributes; here for
// every attribute, numeric ones included, through its interval
// hierarchy). The guarantee is probabilistic and against the universe: the
// table's own smallest class can be below k, and Covered says how many
// records are in classes of at least k. A D′ below 1 (a small universe,
// where Theorem 4's bound is loose) leaves one combination: every
// attribute at its root, where every row matches all n ≥ k rows.
func ProbabilisticAnonymise(ds *Dataset, k int, beta, n float64, weights []float64) (*ProbabilisticResult, error) {
	if n <= 0 {
		n = float64(ds.N)
	}
	if weights == nil {
		weights = make([]float64, len(ds.Attrs))
		for i := range weights {
			weights[i] = 1
		}
	}
	dp, err := ProbabilisticPartitions(n, k, beta)
	if err != nil {
		return nil, err
	}
	L, err := newLattice(ds, nil)
	if err != nil {
		return nil, err
	}
	dp = max(dp, 1)
	distinct := make([]float64, len(ds.Attrs))
	for a := range ds.Attrs {
		distinct[a] = float64(L.distinct[a][0])
	}
	allowed, err := AllocateDistinct(weights, distinct, dp)
	if err != nil {
		return nil, err
	}
	res := &ProbabilisticResult{DPrime: dp, Allowed: allowed, Levels: make([]int, len(ds.Attrs)), Distinct: make([]int, len(ds.Attrs))}
	for a := range ds.Attrs {
		l := 0
		for l < len(L.distinct[a])-1 && float64(L.distinct[a][l]) > allowed[a]+1e-9 {
			l++
		}
		res.Levels[a], res.Distinct[a] = l, L.distinct[a][l]
	}
	res.Gen = ds.FullDomain(res.Levels)
	res.NCP = ds.NCP(res.Gen)
	sizes := ds.GroupSizes(res.Gen)
	res.Combos, res.Classes, res.MinGroup = len(sizes), len(sizes), slices.Min(sizes)
	in := 0
	for _, s := range sizes {
		if s >= k {
			in += s
		}
	}
	res.Covered = float64(in) / float64(ds.N)
	return res, nil
}

// QuantileTransform is Def. 9: n = q·k + r values cut, in sorted order,
// into q contiguous groups of k + ⌊r/q⌋ or k + ⌈r/q⌉ values, each value
// mapped to its group's median (the lower middle value of an even group).
// It has the least rank difference of all k-anonymous transformations
// (Theorem 5). It returns the groups (indices into values, sorted by
// value) and the value each index maps to.
func QuantileTransform(values []float64, k int) ([][]int, []float64, error) {
	n := len(values)
	if k < 1 || k > n {
		return nil, nil, fmt.Errorf("%w: k must be in [1, number of values]", ErrRequirement)
	}
	idx := sortedIndex(values)
	q, r := n/k, n%k
	out := make([]float64, n)
	var groups [][]int
	start := 0
	for g := range q {
		size := k + r/q
		if g < r%q { // the first r mod q groups take one more
			size++
		}
		grp := slices.Clone(idx[start : start+size])
		med := values[grp[(size-1)/2]]
		for _, i := range grp {
			out[i] = med
		}
		groups = append(groups, grp)
		start += size
	}
	return groups, out, nil
}

// RankDifference is Def. 8, Σ |π(f(s_i)) − π(s_i)|, for a transformation
// given as groups (indices into values) each mapped to its median element:
// π ranks the values ascending, equal values in input order (their
// "consecutive ranks" for a multiset), and f(s_i) is the element at the
// middle (the lower middle of an even group) of s_i's group in that order.
func RankDifference(values []float64, groups [][]int) (int, error) {
	rank := make([]int, len(values))
	for p, i := range sortedIndex(values) {
		rank[i] = p + 1
	}
	seen := make([]bool, len(values))
	total := 0
	for _, g := range groups {
		rs := make([]int, 0, len(g))
		for _, i := range g {
			if i < 0 || i >= len(values) || seen[i] {
				return 0, fmt.Errorf("%w: groups must partition the values", ErrRequirement)
			}
			seen[i] = true
			rs = append(rs, rank[i])
		}
		slices.Sort(rs)
		med := rs[(len(rs)-1)/2]
		for _, r := range rs {
			total += max(r-med, med-r)
		}
	}
	if slices.Contains(seen, false) {
		return 0, fmt.Errorf("%w: groups must partition the values", ErrRequirement)
	}
	return total, nil
}

func sortedIndex(values []float64) []int {
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(values[a], values[b]) })
	return idx
}
