package quantile

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// bisect runs the coordinator's search with the parties' counts summed in
// the clear (what secure aggregation computes), and returns the results and
// the number of rounds.
func bisect(t testing.TB, columns [][]float64, qs []float64, precision float64) ([]Quantile, int) {
	t.Helper()
	return bisectHint(t, columns, qs, precision, nil)
}

// bisectHint is bisect with params.range.
func bisectHint(t testing.TB, columns [][]float64, qs []float64, precision float64, hint []float64) ([]Quantile, int) {
	t.Helper()
	s, rounds := clearSearch(t, columns, qs, precision, hint)
	return s.results(), rounds
}

// clearSearch is bisectHint's search, finished; it checks that every
// round that finishes a quantile is one mayFinish said could.
func clearSearch(t testing.TB, columns [][]float64, qs []float64, precision float64, hint []float64) (*search, int) {
	t.Helper()
	sorted := make([][]float64, len(columns))
	for i, c := range columns {
		sorted[i] = slices.Sorted(slices.Values(c))
	}
	s := newSearch(qs, precision, hint)
	rounds := 0
	for !s.finished() {
		a := &args{Total: !s.counted, Thresholds: s.thresholds()}
		if a.slots() == 0 {
			t.Fatal("an unfinished search asks nothing")
		}
		pooled := make([]int64, a.slots())
		for _, col := range sorted {
			for i, c := range counts(col, a) {
				pooled[i] += int64(c)
			}
		}
		var total *int64
		if a.Total {
			total = &pooled[0]
			pooled = pooled[1:]
		}
		// Every round that finishes a quantile was known, before its
		// counts, to be one that could (spendBeforeLast counts the
		// release then).
		var open, may []bool
		for i := range s.qs {
			open = append(open, !s.counted || !s.done(s.brackets[i]))
			may = append(may, s.mayFinish(i, a.Thresholds))
		}
		if err := s.apply(total, a.Thresholds, pooled); err != nil {
			t.Fatal(err)
		}
		for i := range s.qs {
			if open[i] && s.done(s.brackets[i]) && !may[i] {
				t.Fatalf("round %d finished quantile %v, which it could not finish by mayFinish", rounds, s.qs[i])
			}
		}
		if rounds++; rounds > maxRounds {
			t.Fatalf("no answer after %d rounds", rounds)
		}
	}
	return s, rounds
}

// lowerQuantile is the reference: sort the pooled column and take the
// ⌈q·N⌉-th value (at least the first), q read from its decimal.
func lowerQuantile(pooled []float64, q string) float64 {
	sorted := slices.Sorted(slices.Values(pooled))
	r, _ := new(big.Rat).SetString(q)
	r.Mul(r, big.NewRat(int64(len(sorted)), 1))
	k := new(big.Int).Quo(r.Num(), r.Denom())
	if !r.IsInt() {
		k.Add(k, big.NewInt(1))
	}
	return sorted[max(k.Int64(), 1)-1]
}

var testQs = []string{"0", "1e-9", "0.001", "0.1", "0.25", "0.5", "0.7", "0.9", "0.999", "1"}

func parseQs(t testing.TB, strs []string) []float64 {
	out := make([]float64, len(strs))
	for i, s := range strs {
		q, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = q
	}
	return out
}

// within reports whether |v − y*| ≤ p, exactly.
func within(v, ystar, p float64) bool {
	d := new(big.Float).SetPrec(2100).SetFloat64(v)
	d.Sub(d, new(big.Float).SetFloat64(ystar))
	return d.Abs(d).Cmp(big.NewFloat(p)) <= 0
}

func gen(n int, seed uint64, f func(r *rand.Rand) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = f(r)
	}
	return out
}

// Every answer is within precision of the exact lower quantile of the
// pooled column, found by sorting it, over several distributions, with
// duplicates, negative values, an empty party, extreme magnitudes and
// q = 0, tiny and 1.
func TestExactAgainstSorting(t *testing.T) {
	t.Parallel()
	cents := func(x float64) float64 { return math.Round(x*100) / 100 }
	cases := []struct {
		name    string
		columns [][]float64
	}{
		{"uniform", [][]float64{
			gen(300, 1, func(r *rand.Rand) float64 { return cents(r.Float64()*2000 - 1000) }),
			gen(150, 2, func(r *rand.Rand) float64 { return cents(r.Float64()*2000 - 1000) }),
			gen(77, 3, func(r *rand.Rand) float64 { return cents(r.Float64()*2000 - 1000) }),
		}},
		{"normal, one party empty", [][]float64{
			gen(400, 4, func(r *rand.Rand) float64 { return 50 + 10*r.NormFloat64() }),
			nil,
			gen(123, 5, func(r *rand.Rand) float64 { return 60 + 5*r.NormFloat64() }),
		}},
		{"lognormal heavy tail", [][]float64{
			gen(200, 6, func(r *rand.Rand) float64 { return math.Exp(3 * r.NormFloat64()) }),
			gen(200, 7, func(r *rand.Rand) float64 { return math.Exp(3 * r.NormFloat64()) }),
		}},
		{"few distinct values", [][]float64{
			gen(100, 8, func(r *rand.Rand) float64 { return float64(r.IntN(6)) }),
			gen(50, 9, func(r *rand.Rand) float64 { return float64(r.IntN(3)) }),
			gen(10, 10, func(r *rand.Rand) float64 { return 5 }),
		}},
		{"all equal", [][]float64{{42, 42, 42}, {42}, {42, 42}}},
		{"negative only", [][]float64{
			gen(90, 11, func(r *rand.Rand) float64 { return -1 - r.Float64()*1e6 }),
			gen(30, 12, func(r *rand.Rand) float64 { return -r.ExpFloat64() }),
		}},
		{"near zero, both signs", [][]float64{
			gen(60, 13, func(r *rand.Rand) float64 { return (r.Float64() - 0.5) * 0.006 }),
			{-0.0, 0, math.Copysign(0, -1)},
		}},
		{"huge and tiny magnitudes", [][]float64{
			{1e300, -1e300, math.MaxFloat64, -math.MaxFloat64, 5e-324, -5e-324},
			{1e-300, 2.5, -7},
		}},
		{"one row", [][]float64{nil, {-3.25}, nil}},
	}
	qs := parseQs(t, testQs)
	for _, c := range cases {
		var pooled []float64
		for _, col := range c.columns {
			pooled = append(pooled, col...)
		}
		for _, p := range []float64{0.01, 0, 1e-6, 1000} {
			for _, hint := range [][]float64{nil, {-1000, 1000}, {1e6, 2e6}, {-5, -4}, {-0.0, 0.5}} {
				t.Run(fmt.Sprintf("%s/precision=%v/range=%v", c.name, p, hint), func(t *testing.T) {
					s, rounds := clearSearch(t, c.columns, qs, p, hint)
					got := s.results()
					checkReleaseFigures(t, s, pooled)
					for i, q := range testQs {
						ystar := lowerQuantile(pooled, q)
						if got[i].Q != qs[i] {
							t.Errorf("result %d is for q = %v, want %v", i, got[i].Q, qs[i])
						}
						if !within(got[i].Value, ystar, p) {
							t.Errorf("q = %s: %v, exact lower quantile %v, precision %v", q, got[i].Value, ystar, p)
						}
						if p == 0 && got[i].Value != ystar {
							t.Errorf("q = %s: exact search gave %v, want %v", q, got[i].Value, ystar)
						}
					}
					t.Logf("%d rows, %d rounds", len(pooled), rounds)
				})
			}
		}
	}
}

// checkReleaseFigures checks what a finished search tells the policy of
// each value (search.release) against the sorted pooled column: the rank
// ⌈q·N⌉, N, and the rows in the final bracket (lo, hi].
func checkReleaseFigures(t *testing.T, s *search, pooled []float64) {
	t.Helper()
	for i, q := range s.qs {
		rk, rows, in := s.release(i)
		lo, hi := keyValue(s.brackets[i].lo), keyValue(s.brackets[i].hi)
		want := int64(0)
		for _, v := range pooled {
			if v > lo && v <= hi { // as the parties count: -0 == 0
				want++
			}
		}
		if rows != int64(len(pooled)) || rk != rank(q, rows) || in != want || in < 1 {
			t.Errorf("q = %v: rank %d of %d, %d rows in (%v, %v]; want rank %d of %d, %d rows", q, rk, rows, in, lo, hi, rank(q, int64(len(pooled))), len(pooled), want)
		}
	}
}

// Rounds grow with log2(|y*|/precision) plus about 12 for the sign and
// order of magnitude, as the package doc says; a regression in split
// (say, walking down to 2^-1000 near zero) shows up here.
func TestRounds(t *testing.T) {
	t.Parallel()
	col := gen(1000, 20, func(r *rand.Rand) float64 { return 50 + 10*r.NormFloat64() })
	near0 := gen(1000, 21, func(r *rand.Rand) float64 { return r.Float64() })
	cases := []struct {
		col       []float64
		precision float64
		most      int
	}{
		{col, 0.01, 12 + 13 + 2},  // y* ≈ 50: log2(50/0.01) ≈ 12.3
		{col, 1, 12 + 6 + 2},      // log2(50) ≈ 5.6
		{near0, 0.01, 12 + 6 + 2}, // y* ≈ 0.5: log2(50) ≈ 5.6
		{col, 0, 64},
	}
	for _, c := range cases {
		_, rounds := bisect(t, [][]float64{c.col}, []float64{0.5}, c.precision)
		if rounds > c.most {
			t.Errorf("precision %v: %d rounds, want at most %d", c.precision, rounds, c.most)
		}
		t.Logf("precision %v: %d rounds", c.precision, rounds)
	}
	// A range that holds the median saves the rounds that find its order
	// of magnitude: about log2(2046 binades / 15 in [0, 100]) ≈ 7.
	_, without := bisect(t, [][]float64{col}, []float64{0.5}, 0.01)
	_, with := bisectHint(t, [][]float64{col}, []float64{0.5}, 0.01, []float64{0, 100})
	if with > without-5 {
		t.Errorf("range [0, 100]: %d rounds, %d without", with, without)
	}
	t.Logf("range [0, 100]: %d rounds, %d without", with, without)
}

func TestRank(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q    float64
		n, k int64
	}{
		{0, 5, 1}, {1e-9, 5, 1}, {0.1, 10, 1}, {0.7, 10, 7}, {0.3, 10, 3}, {0.5, 3, 2}, {0.5, 4, 2},
		{1, 5, 5}, {0.9, 1, 1}, {0.999, 1000, 999}, {0.999, 1001, 1000}, {1.0 / 3, 3, 1},
	}
	for _, c := range cases {
		if k := rank(c.q, c.n); k != c.k {
			t.Errorf("rank(%v, %d) = %d, want %d", c.q, c.n, k, c.k)
		}
	}
}

func TestOrderKey(t *testing.T) {
	t.Parallel()
	vals := []float64{math.Inf(-1), -math.MaxFloat64, -1, -5e-324, math.Copysign(0, -1), 0, 5e-324, 1, math.MaxFloat64, math.Inf(1)}
	for i, v := range vals {
		if back := keyValue(orderKey(v)); math.Float64bits(back) != math.Float64bits(v) {
			t.Errorf("keyValue(orderKey(%v)) = %v", v, back)
		}
		if i > 0 && orderKey(vals[i-1]) >= orderKey(v) {
			t.Errorf("orderKey(%v) ≥ orderKey(%v)", vals[i-1], v)
		}
	}
}

// Counts that no pooled column can produce, or an empty pooled column,
// stop the search with an error instead of a wrong answer.
func TestApplyRefusesImpossibleCounts(t *testing.T) {
	t.Parallel()
	zero, ten := int64(0), int64(10)
	s := newSearch([]float64{0.5}, 0.01, nil)
	if err := s.apply(&zero, []float64{0}, []int64{0}); err == nil {
		t.Error("an empty pooled column gave no error")
	}
	for _, c := range []struct {
		th     []float64
		counts []int64
	}{
		{[]float64{1, 2}, []int64{5, 4}}, // decreasing
		{[]float64{1}, []int64{11}},      // above N
		{[]float64{1}, []int64{-1}},      // negative
		{[]float64{2, 1}, []int64{1, 2}}, // unsorted thresholds
		{[]float64{1, 2}, []int64{1}},    // too few counts
		{[]float64{0, math.Copysign(0, -1)}, []int64{1, 1}},
	} {
		s := newSearch([]float64{0.5}, 0.01, nil)
		if err := s.apply(&ten, c.th, c.counts); err == nil {
			t.Errorf("counts %v at %v accepted", c.counts, c.th)
		} else if len(c.counts) == len(c.th) && !errors.Is(err, errCounts) {
			t.Errorf("counts %v at %v: %v", c.counts, c.th, err)
		}
	}
	// Across rounds: a count inside a bracket must lie between the counts
	// committed at its ends.
	s = newSearch([]float64{0.5}, 0.01, nil)
	if err := s.apply(&ten, []float64{5}, []int64{3}); err != nil {
		t.Fatal(err)
	}
	if err := s.apply(nil, []float64{7}, []int64{2}); !errors.Is(err, errCounts) {
		t.Errorf("a count below the count at the bracket's lower end: %v", err)
	}
}

func TestShortest(t *testing.T) {
	t.Parallel()
	b := func(lo, hi float64) bracket { return bracket{lo: orderKey(lo), hi: orderKey(hi)} }
	next := math.Nextafter
	cases := []struct {
		b    bracket
		want float64
	}{
		{b(41.995, 42.005), 42},
		{b(1.2299, 1.2301), 1.23},
		{b(-33.2119, -33.2022), -33.21},
		{b(-0.004, 0.003), 0},
		{b(999.999, 1000.001), 1000},
		{b(1e300, 1.0000001e300), 1.0000001e300},
		{b(12.301757812499, 12.3117), 12.31},
		{b(next(0.1, 0), 0.1), 0.1},
		{b(2.5, next(2.5, 3)), next(2.5, 3)}, // adjacent floats: hi
		{bracket{lo: keyNegInf, hi: orderKey(-math.MaxFloat64)}, -math.MaxFloat64},
	}
	for _, c := range cases {
		if got := shortest(c.b); got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("shortest(%v, %v] = %v, want %v", keyValue(c.b.lo), keyValue(c.b.hi), got, c.want)
		}
	}
}
