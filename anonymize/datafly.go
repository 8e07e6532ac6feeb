package anonymize

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Datafly with local recoding and the Ordered Greed Framework, after
// Chaytor, "Allowing Privacy Protection Algorithms to Jump Out of Local
// Optimums: An Ordered Greed Framework" (PinKDD 2007, Figs. 5, 9, 10):
// single-level hierarchies (a value or "*"), the records grouped column by
// column in a given order; at every node of that tree the children with
// fewer than k records are suppressed ("*") and merged, and if the merged
// group is still under k, the smallest child with k or more is suppressed
// with it. Sweeney's Datafly orders the columns by decreasing number of
// distinct values; OGF searches the orders with a genetic algorithm whose
// fitness is the number of cells left unsuppressed.

// Suppressed is the value published for a suppressed cell.
const Suppressed = "*"

// DataflyResult is a Datafly publication: Cells[a][r] is the published
// value of column a for record r (the value or "*"), Kept the number of
// cells not suppressed, Order the column order used.
type DataflyResult struct {
	Cells [][]string
	Kept  int
	Order []int
}

// DataflyOrder is Sweeney's column order: decreasing number of distinct
// values, ties by column index.
func DataflyOrder(cols [][]string) []int {
	distinct := make([]int, len(cols))
	for a, c := range cols {
		seen := map[string]bool{}
		for _, v := range c {
			seen[v] = true
		}
		distinct[a] = len(seen)
	}
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return distinct[b] - distinct[a] })
	return order
}

// Datafly anonymises the columns (cols[a][r], every column one value per
// record) for k in the column order given (a permutation of the columns).
func Datafly(cols [][]string, k int, order []int) (*DataflyResult, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("%w: no columns", ErrRequirement)
	}
	n := len(cols[0])
	if k < 1 || k > n {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, n)
	}
	if p := slices.Sorted(slices.Values(order)); len(p) != len(cols) || slices.ContainsFunc(p, func(x int) bool { return x < 0 || x >= len(cols) }) || len(slices.Compact(p)) != len(cols) {
		return nil, fmt.Errorf("%w: order %v is not a permutation of %d columns", ErrRequirement, order, len(cols))
	}
	res := &DataflyResult{Cells: make([][]string, len(cols)), Order: slices.Clone(order)}
	for a, c := range cols {
		if len(c) != n {
			return nil, fmt.Errorf("%w: column %d has %d values for %d records", ErrRequirement, a, len(c), n)
		}
		res.Cells[a] = slices.Clone(c)
	}
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	res.enforce(all, 0, k)
	for _, c := range res.Cells {
		for _, v := range c {
			if v != Suppressed {
				res.Kept++
			}
		}
	}
	return res, nil
}

// enforce is EnforceAnonymity on the node holding rows at depth level.
func (res *DataflyResult) enforce(rows []int32, level, k int) {
	if level == len(res.Order) {
		return
	}
	col := res.Cells[res.Order[level]]
	byValue := map[string][]int32{}
	var values []string
	for _, r := range rows {
		v := col[r]
		if _, ok := byValue[v]; !ok {
			values = append(values, v)
		}
		byValue[v] = append(byValue[v], r)
	}
	slices.Sort(values) // children in value order: no map order decides
	var under []int32
	minIndex, minOver := -1, 0
	for i, v := range values {
		c := byValue[v]
		switch {
		case len(c) < k:
			under = append(under, c...)
		case minIndex < 0 || len(c) < minOver:
			minIndex, minOver = i, len(c)
		}
	}
	if len(under) > 0 && len(under) < k && minIndex >= 0 {
		under = append(under, byValue[values[minIndex]]...)
		byValue[values[minIndex]] = nil
	}
	for _, r := range under {
		col[r] = Suppressed
	}
	for _, v := range values {
		if c := byValue[v]; len(c) >= k {
			res.enforce(c, level+1, k)
		}
	}
	if len(under) > 0 {
		slices.Sort(under)
		res.enforce(under, level+1, k)
	}
}

// OGFOptions are the genetic algorithm's settings (Chaytor's Table 2 by
// default: population 10, mutation rate 10 %, at most 15,000 generations,
// stop after 10 without improvement).
type OGFOptions struct {
	Population, MaxGenerations, Patience int
	MutationRate                         float64
	Seed                                 uint64
}

func (o *OGFOptions) defaults() {
	if o.Population < 2 {
		o.Population = 10
	}
	if o.MaxGenerations <= 0 {
		o.MaxGenerations = 15000
	}
	if o.Patience <= 0 {
		o.Patience = 10
	}
	if o.MutationRate <= 0 {
		o.MutationRate = 0.1
	}
}

// OGFResult is the best order found and its publication.
type OGFResult struct {
	Best        *DataflyResult
	Generations int
	Evaluations int
}

// OGF is the Ordered Greed Framework around Datafly: a population of
// random column orders; each generation the two fittest are crossed
// (ordered crossover), the child replaces the worst if fitter, and each
// member is mutated (two positions swapped) with the mutation rate; fitness
// (cells kept) is cached per order. Deterministic given the seed.
func OGF(cols [][]string, k int, opt OGFOptions) (*OGFResult, error) {
	opt.defaults()
	rng := rand.New(rand.NewPCG(opt.Seed, 0x0f))
	cache := map[string]*DataflyResult{}
	res := &OGFResult{}
	eval := func(order []int) (*DataflyResult, error) {
		key := fmt.Sprint(order)
		if d, ok := cache[key]; ok {
			return d, nil
		}
		d, err := Datafly(cols, k, order)
		if err != nil {
			return nil, err
		}
		cache[key] = d
		res.Evaluations++
		return d, nil
	}
	pop := make([]*DataflyResult, opt.Population)
	for i := range pop {
		d, err := eval(rng.Perm(len(cols)))
		if err != nil {
			return nil, err
		}
		pop[i] = d
	}
	byFitness := func() {
		slices.SortStableFunc(pop, func(a, b *DataflyResult) int { return b.Kept - a.Kept })
	}
	byFitness()
	res.Best = pop[0]
	stale := 0
	for res.Generations = 0; res.Generations < opt.MaxGenerations && stale < opt.Patience; res.Generations++ {
		child, err := eval(orderedCrossover(pop[0].Order, pop[1].Order, rng))
		if err != nil {
			return nil, err
		}
		if child.Kept > pop[len(pop)-1].Kept {
			pop[len(pop)-1] = child
		}
		for i := range pop {
			if rng.Float64() < opt.MutationRate {
				o := slices.Clone(pop[i].Order)
				a, b := rng.IntN(len(o)), rng.IntN(len(o))
				o[a], o[b] = o[b], o[a]
				if pop[i], err = eval(o); err != nil {
					return nil, err
				}
			}
		}
		byFitness()
		if pop[0].Kept > res.Best.Kept { // the best ever is kept even if mutation loses it
			res.Best, stale = pop[0], 0
		} else {
			stale++
		}
	}
	return res, nil
}

// orderedCrossover is OX: a slice of the first parent kept in place, the
// other positions filled with the second parent's remaining columns in its
// order.
func orderedCrossover(p1, p2 []int, rng *rand.Rand) []int {
	n := len(p1)
	a, b := rng.IntN(n), rng.IntN(n)
	if a > b {
		a, b = b, a
	}
	child := make([]int, n)
	used := make([]bool, n)
	for i := a; i <= b; i++ {
		child[i] = p1[i]
		used[p1[i]] = true
	}
	j := 0
	for i := range n {
		if i >= a && i <= b {
			continue
		}
		for used[p2[j]] {
			j++
		}
		child[i] = p2[j]
		used[p2[j]] = true
	}
	return child
}
