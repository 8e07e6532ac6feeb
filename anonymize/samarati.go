package anonymize

import (
	"fmt"
	"math"
	"math/big"
	"slices"
)

// Samarati's binary search over the generalisation lattice, the count of
// generalisation strategies, and the minimal nodes with their figures
// (Sun's thesis, ch. 2: §2.3, Theorem 2.1 and Corollary 2.1; P. Samarati,
// "Protecting respondents' identities in microdata release", IEEE TKDE
// 13(6), 2001, §5).

// StrategyCount is the number of generalisation strategies (paths from the
// bottom of the lattice to its top, each step raising one attribute by one
// level) for attributes whose hierarchies have the given numbers of steps:
// Sun's recurrence f(m, n) = f(m−1, n) + f(m, n−1) (Theorem 2.1, and
// Corollary 2.1 for k attributes), whose solution is the multinomial
// coefficient (Σ steps)! / Π steps!. It is returned exactly: on Adult's
// seven quasi-identifiers it is about 9·10⁹, on ten about 6·10²¹.
func StrategyCount(steps []int) (*big.Int, error) {
	total := 0
	for i, s := range steps {
		if s < 0 {
			return nil, fmt.Errorf("%w: steps[%d] is negative", ErrRequirement, i)
		}
		total += s
	}
	out := new(big.Int).MulRange(1, int64(total))
	if total == 0 {
		out.SetInt64(1)
	}
	for _, s := range steps {
		if s > 1 {
			out.Quo(out, new(big.Int).MulRange(1, int64(s)))
		}
	}
	return out, nil
}

// SamaratiResult is the outcome of Samarati's binary search.
type SamaratiResult struct {
	Levels    []int   // the chosen vector: the least NCP at the lowest height
	Height    int     // the lowest height at which a vector satisfies
	Solutions [][]int // every satisfying vector at that height, in lattice order
	Probes    []int   // the heights probed, in order
	NCP       float64
	Classes   int
	MinGroup  int
	Lattice   int // vectors in the lattice
	Checked   int // vectors whose classes were counted
	Gen       *Generalisation
}

// Samarati is Samarati's binary search on height: if no vector of height h
// satisfies the requirements (and sens, nil: none), none of a lower height
// does, so the lowest height with a satisfying vector is found by bisection
// between 0 and the top, checking at each probed height the vectors of
// that height until one satisfies. Every vector at that lowest height that
// satisfies is minimal (Sun's Def. 2.5: nothing below it, being lower,
// satisfies); of them the one of least NCP is returned (Samarati returns
// any one). Each check counts the vector's classes with the privacy hash
// table, rolled up from a more specific vector already counted.
func Samarati(ds *Dataset, reqs []Requirement, sens *Coded) (*SamaratiResult, error) {
	L, err := requiredLattice(ds, reqs, sens)
	if err != nil {
		return nil, err
	}
	byH := L.heights()
	top := len(byH) - 1
	known := map[int]bool{}
	check := func(i int) bool {
		ok, seen := known[i]
		if !seen {
			ok = L.anonymous(i)
			known[i] = ok
		}
		return ok
	}
	res := &SamaratiResult{Lattice: L.size()}
	exists := func(h int) bool {
		res.Probes = append(res.Probes, h)
		return slices.ContainsFunc(byH[h], check)
	}
	if !exists(top) {
		return nil, fmt.Errorf("%w: not even the top of the lattice satisfies %v", ErrRequirement, reqs)
	}
	lo, hi := 0, top
	for lo < hi {
		mid := (lo + hi) / 2
		if exists(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	pen := L.levelPenalties()
	best, bestNCP := -1, math.Inf(1)
	for _, i := range byH[lo] {
		if !check(i) {
			continue
		}
		res.Solutions = append(res.Solutions, L.levelsOf(i))
		if ncp := L.ncpOf(pen, i); ncp < bestNCP-1e-12 {
			best, bestNCP = i, ncp
		}
	}
	fd := L.result(best, bestNCP)
	res.Height, res.Levels, res.NCP, res.Classes, res.MinGroup, res.Gen = lo, fd.Levels, fd.NCP, fd.Classes, fd.MinGroup, fd.Gen
	res.Checked = L.checks
	return res, nil
}

// heights lists the lattice's vectors by height: byH[h] in lattice order.
func (L *lattice) heights() [][]int {
	top := 0
	for _, r := range L.radix {
		top += r - 1
	}
	byH := make([][]int, top+1)
	for _, i := range L.byHeight() {
		h := sum(L.levelsOf(i))
		byH[h] = append(byH[h], i)
	}
	return byH
}

// ncpOf is the NCP of vector i from the per-level penalties.
func (L *lattice) ncpOf(pen [][]float64, i int) float64 {
	ncp := 0.0
	for a := range L.radix {
		ncp += pen[a][L.level(i, a)]
	}
	return ncp / float64(len(L.ds.Attrs))
}

// NodeFigures are the figures of one level vector of the lattice.
type NodeFigures struct {
	Levels   []int   `json:"levels"`
	Height   int     `json:"height"`
	NCP      float64 `json:"ncp"`
	Classes  int     `json:"classes"`
	MinGroup int     `json:"min_group"`
	DM       float64 `json:"discernibility"`
	WDM      float64 `json:"weighted_discernibility"`
	Degree   float64 `json:"degree"` // Sun's Def. 4.6 degree of anonymisation of the table
}

// Figures computes a level vector's figures: NCP, its classes, the smallest,
// discernibility and weighted discernibility (WeightedDiscernibility with
// priorities prio, nil: equal, and uniform level weights).
func (ds *Dataset) Figures(levels []int, prio []float64) (NodeFigures, error) {
	if len(levels) != len(ds.Attrs) {
		return NodeFigures{}, fmt.Errorf("%w: %d levels for %d attributes", ErrRequirement, len(levels), len(ds.Attrs))
	}
	g := ds.FullDomain(levels)
	sizes := ds.GroupSizes(g)
	f := NodeFigures{Levels: slices.Clone(levels), Height: sum(levels), NCP: ds.NCP(g), Classes: len(sizes), MinGroup: slices.Min(sizes), DM: Discernibility(sizes)}
	var err error
	if f.WDM, f.Degree, err = ds.WeightedDiscernibility(g, prio, 0); err != nil {
		return NodeFigures{}, err
	}
	return f, nil
}

// WeightedDiscernibility is the weighted discernibility metric of Sun's
// Fig. 4.6, which the thesis names but never defines. Decision: each class
// G costs |G|² (Bayardo and Agrawal's discernibility) times its degree of
// anonymisation (Sun's Def. 4.5: the priority-weighted mean over attributes
// of Def. 4.4's degree, AttributeDegree with level weights beta), the mean
// over G's records when their leaves lie at different depths:
//
//	WDM = Σ_G |G|² · Deg(G) = Σ_r |G(r)| · Deg(r).
//
// So a class that generalises the attributes the requester values most
// costs more; with a degree of 1 everywhere (all at the root) it is DM.
// prio holds one priority per attribute (nil: equal). It also returns the
// table's degree (Def. 4.6, the mean of Deg(r)).
func (ds *Dataset) WeightedDiscernibility(g *Generalisation, prio []float64, beta float64) (float64, float64, error) {
	if prio != nil && len(prio) != len(ds.Attrs) {
		return 0, 0, fmt.Errorf("%w: %d priorities for %d attributes", ErrRequirement, len(prio), len(ds.Attrs))
	}
	if prio == nil {
		prio = make([]float64, len(ds.Attrs))
	}
	for i, p := range prio {
		if p < 0 || math.IsNaN(p) {
			return 0, 0, fmt.Errorf("%w: priority of attribute %q is negative", ErrRequirement, ds.Attrs[i].Name)
		}
	}
	key := make([]byte, 0, 4*len(ds.Attrs))
	class := map[string]int{}
	of := make([]int, ds.N)
	var size []int
	for r := range ds.N {
		key = key[:0]
		for a := range ds.Attrs {
			v := g.Node[a][r]
			key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		c, ok := class[string(key)]
		if !ok {
			c = len(size)
			class[string(key)] = c
			size = append(size, 0)
		}
		size[c]++
		of[r] = c
	}
	deg := make([]float64, len(ds.Attrs))
	wdm, total := 0.0, 0.0
	for r := range ds.N {
		for a, at := range ds.Attrs {
			t := at.Tax
			steps := t.Nodes[at.Leaf[r]].Depth - t.Nodes[g.Node[a][r]].Depth
			deg[a] = AttributeDegree(t.MaxLevel()+1, steps, beta)
		}
		d := TupleDegree(deg, prio)
		wdm += float64(size[of[r]]) * d
		total += d
	}
	return wdm, total / float64(max(ds.N, 1)), nil
}

// MinimalVectors is MinimalFullDomain under a joint requirement and a
// sensitive model (nil: none), with each vector's classes rolled up from a
// more specific vector already counted instead of hashed again from the
// records. Vectors are visited by height; one above a minimal vector found
// earlier satisfies (the conditions are monotone) and is not minimal, so it
// is not counted. It also returns how many vectors were counted.
func MinimalVectors(ds *Dataset, reqs []Requirement, sens *Coded) ([][]int, int, error) {
	L, err := requiredLattice(ds, reqs, sens)
	if err != nil {
		return nil, 0, err
	}
	var minimal [][]int
	for _, at := range L.heights() {
		for _, i := range at {
			v := L.levelsOf(i)
			if slices.ContainsFunc(minimal, func(m []int) bool { return dominates(v, m) }) {
				continue
			}
			if L.anonymous(i) {
				minimal = append(minimal, v)
			}
		}
	}
	return minimal, L.checks, nil
}

// MinimalNodes returns every minimal level vector (Sun's Def. 2.5: it
// satisfies k and sens, nil: none, and no other satisfying vector lies
// below it) with its figures, in order of height then lattice order
// (MinimalVectors: the privacy hash table's check, each vector's buckets
// rolled up from a more specific vector's).
func MinimalNodes(ds *Dataset, k int, sens *Coded, prio []float64) ([]NodeFigures, error) {
	all := make([]string, len(ds.Attrs))
	for i, a := range ds.Attrs {
		all[i] = a.Name
	}
	vs, _, err := MinimalVectors(ds, []Requirement{{QID: all, K: k}}, sens)
	if err != nil {
		return nil, err
	}
	out := make([]NodeFigures, 0, len(vs))
	for _, v := range vs {
		f, err := ds.Figures(v, prio)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
