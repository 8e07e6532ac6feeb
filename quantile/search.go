package quantile

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
)

// This file is the coordinator's bisection: pure, deterministic, and free of
// network and crypto, so that it can be tested against sorting in one
// process (search_test.go) and replayed after a leader change. It uses no
// transcendental functions and no fused float operations: thresholds are
// chosen in integer key space and widths compared exactly, so every leader,
// on any architecture, derives the same thresholds from the same decisions.

// orderKey maps a float64 to a uint64 whose unsigned order is the float
// order (-0 just below +0): the sign bit flipped for non-negative values,
// every bit flipped for negative ones. Every float64 but NaN has a key.
func orderKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 == 0 {
		return b | 1<<63
	}
	return ^b
}

// keyValue is the inverse of orderKey.
func keyValue(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

var (
	// keyNegInf is the initial lower end: no finite value is ≤ -Inf, so
	// its count is 0, below every rank.
	keyNegInf = orderKey(math.Inf(-1))
	// keyMax is the initial upper end: every finite value is ≤ MaxFloat64,
	// so its count is N, at least every rank.
	keyMax = orderKey(math.MaxFloat64)
)

// rank is the position k of the lower q-quantile among n pooled values:
// ⌈q·n⌉, at least 1 (q = 0 is the minimum). q·n is computed exactly from the
// shortest decimal that reads back as q, which is what a spec writes, so
// 0.1 of 10 rows is the 1st value and 0.7 of 10 the 7th, whatever the
// binary rounding of 0.1 or 0.7.
func rank(q float64, n int64) int64 {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(q, 'g', -1, 64))
	if !ok { // unreachable for a finite q
		r = new(big.Rat).SetFloat64(q)
	}
	r.Mul(r, new(big.Rat).SetInt64(n))
	k := new(big.Int).Quo(r.Num(), r.Denom()) // ⌊q·n⌋, r ≥ 0
	if new(big.Rat).SetInt(k).Cmp(r) < 0 {
		k.Add(k, big.NewInt(1))
	}
	return max(k.Int64(), 1)
}

// bracket is one quantile's search interval in key space. Invariant, once
// the pooled count is known: count(≤ value(lo)) < k ≤ count(≤ value(hi)),
// so the exact lower quantile y* (the smallest pooled value with at least k
// values ≤ it) lies in (value(lo), value(hi)]. cLo and cHi are those two
// pooled counts, as the committed rounds gave them (0 at −Inf, N at
// MaxFloat64), so cHi − cLo rows lie in the bracket.
type bracket struct {
	lo, hi   uint64
	cLo, cHi int64
}

// search is the coordinator's state: every requested quantile's bracket,
// advanced by the pooled counts each round commits.
type search struct {
	precision float64
	hint      []float64 // a public range to count at in round 0, or nil
	qs        []float64
	n         int64 // pooled row count, once counted
	counted   bool
	ks        []int64
	brackets  []bracket
}

// newSearch starts the search for qs over the whole float64 line. With a
// hint [a, b], round 0 counts at a and b instead of splitting the line, so
// that every bracket starts as (−Inf, a], (a, b] or (b, MaxFloat64],
// whichever holds y*: a wrong hint costs rounds, never the answer.
func newSearch(qs []float64, precision float64, hint []float64) *search {
	s := &search{precision: precision, hint: hint, qs: qs, ks: make([]int64, len(qs)), brackets: make([]bracket, len(qs))}
	for i := range s.brackets {
		s.brackets[i] = bracket{lo: keyNegInf, hi: keyMax}
	}
	return s
}

// done reports whether b is narrow enough: its width value(hi) − value(lo),
// computed exactly, is at most the precision, or no float lies strictly
// inside it (then value(hi) is y* itself).
func (s *search) done(b bracket) bool {
	if b.hi-b.lo <= 1 {
		return true
	}
	if s.precision == 0 || b.lo == keyNegInf {
		return false
	}
	// float64 differences are exact at 2100 bits: exponents span 2098.
	w := new(big.Float).SetPrec(2100).SetFloat64(keyValue(b.hi))
	w.Sub(w, new(big.Float).SetFloat64(keyValue(b.lo)))
	return w.Cmp(big.NewFloat(s.precision)) <= 0
}

// split is the threshold that halves an unfinished bracket in key space:
// within one binade key space is linear in value, across binades it halves
// the exponent range, so the search first finds the order of magnitude
// (sign and exponent, about 11 rounds from the whole float64 line) and
// then one bit of the value per round. With a precision p > 0 the keys of
// (−p/2, p/2) count as none: a bracket (0, 2] is split near 0.1, not at
// 2^-511, since every value that small is within p of 0 anyway. The result
// lies strictly inside (lo, hi).
func (s *search) split(b bracket) uint64 {
	lo, hi := b.lo, b.hi
	if s.precision > 0 {
		zlo, zhi := orderKey(-s.precision/2), orderKey(s.precision/2)
		switch {
		case lo > zlo && lo < zhi && hi > zhi:
			lo = zhi - 1 // split within [p/2, hi)
		case hi > zlo && hi < zhi && lo < zlo:
			hi = zlo + 1 // split within (lo, −p/2]
		}
	}
	m := lo + (hi-lo)/2
	if m <= b.lo {
		m = b.lo + 1
	}
	if m >= b.hi {
		m = b.hi - 1
	}
	return m
}

// thresholds returns the next round's thresholds, sorted and distinct: the
// split of every unfinished bracket (before the pooled count is known every
// bracket is the whole line, so round 0 asks one, or the hint's two ends).
// It is empty when every quantile is done.
func (s *search) thresholds() []float64 {
	if !s.counted && len(s.hint) > 0 {
		return s.hint
	}
	var keys []uint64
	for i, b := range s.brackets {
		if s.counted && s.done(s.brackets[i]) {
			continue
		}
		keys = append(keys, s.split(b))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	out := make([]float64, len(keys))
	for i, k := range keys {
		out[i] = keyValue(k)
	}
	return out
}

// errCounts means the pooled counts of a round cannot come from any pooled
// column: the aggregation was corrupted.
var errCounts = errors.New("pooled counts are inconsistent")

// apply advances the search by one round's pooled counts: total is the
// pooled row count when the round counted it (round 0), counts[i] the
// pooled count of values ≤ thresholds[i]. Every bracket narrows to the
// thresholds that fall inside it, so a quantile also profits from another
// quantile's thresholds.
func (s *search) apply(total *int64, thresholds []float64, counts []int64) error {
	if len(counts) != len(thresholds) {
		return fmt.Errorf("%w: %d counts for %d thresholds", errCounts, len(counts), len(thresholds))
	}
	if total != nil {
		if *total <= 0 {
			return errors.New("the pooled column is empty: no quantile to find")
		}
		s.n, s.counted = *total, true
		for i, q := range s.qs {
			s.ks[i] = rank(q, s.n)
			s.brackets[i].cHi = s.n
		}
	}
	if !s.counted {
		return errors.New("counts before the pooled row count")
	}
	for i, c := range counts {
		if c < 0 || c > s.n || (i > 0 && (c < counts[i-1] || orderKey(thresholds[i]) <= orderKey(thresholds[i-1]))) {
			// No count, threshold or row count in the text: it may end a
			// job, and the failure names rules, not data.
			return fmt.Errorf("%w: count %d of the round is negative, above the row count or below the one before", errCounts, i)
		}
	}
	for i := range s.brackets {
		b := &s.brackets[i]
		for j, t := range thresholds {
			k := orderKey(t)
			if k <= b.lo || k >= b.hi {
				continue
			}
			if counts[j] < b.cLo || counts[j] > b.cHi {
				return fmt.Errorf("%w: a count inside a bracket lies outside the counts at its ends", errCounts)
			}
			if counts[j] >= s.ks[i] {
				b.hi, b.cHi = k, counts[j]
			} else {
				b.lo, b.cLo = k, counts[j]
			}
		}
	}
	return nil
}

// mayFinish reports whether a round counting at thresholds ts could finish
// quantile i: whether one of the pieces the thresholds inside its bracket
// cut it into is done (apply narrows the bracket to one of them, whatever
// the counts). A bracket already done is finished, not to be finished.
func (s *search) mayFinish(i int, ts []float64) bool {
	b := s.brackets[i]
	if s.counted && s.done(b) {
		return false
	}
	ends := []uint64{b.lo, b.hi}
	for _, t := range ts {
		if k := orderKey(t); k > b.lo && k < b.hi {
			ends = append(ends, k)
		}
	}
	slices.Sort(ends)
	for j := 1; j < len(ends); j++ {
		if s.done(bracket{lo: ends[j-1], hi: ends[j]}) {
			return true
		}
	}
	return false
}

// needsTotal reports whether the next round must count the pooled rows.
func (s *search) needsTotal() bool { return !s.counted }

// finished reports whether every quantile is within precision.
func (s *search) finished() bool {
	if !s.counted {
		return false
	}
	for _, b := range s.brackets {
		if !s.done(b) {
			return false
		}
	}
	return true
}

// release is what an exact value of quantile i discloses, for a party's
// policy (job.Guard.Release): its rank among the pooled rows, how many are
// pooled, and how many lie in the bracket it was found in, all from the
// committed counts; for an unfinished search, the current bracket.
func (s *search) release(i int) (rank, rows, inBracket int64) {
	b := s.brackets[i]
	return s.ks[i], s.n, b.cHi - b.cLo
}

// Quantile is one result: the requested q and a value within precision of
// the exact lower q-quantile of the pooled column.
type Quantile struct {
	Q     float64 `json:"q"`
	Value float64 `json:"value"`
}

func (s *search) results() []Quantile {
	out := make([]Quantile, len(s.qs))
	for i, q := range s.qs {
		out[i] = Quantile{Q: q, Value: shortest(s.brackets[i])}
	}
	return out
}

// shortest is the value reported for a closed bracket: the decimal with
// the fewest significant digits in (lo, hi], as a float64 (hi itself if no
// shorter one lies inside). y* is in the bracket too, so the two differ by
// less than its width, at most the precision; a bracket closed on adjacent
// floats holds only hi = y*, so the exact search returns y*. Nothing is
// lost by it and a median of 12.3 reads 12.3, not 12.301757812499998.
// Exact rational arithmetic keeps it deterministic.
func shortest(b bracket) float64 {
	hi := keyValue(b.hi)
	if b.hi-b.lo > 1 && b.lo != keyNegInf {
		lo := keyValue(b.lo)
		h := new(big.Rat).SetFloat64(hi)
		ten := big.NewInt(10)
		// ⌊hi / 10^e⌋ · 10^e and the next multiple of 10^e, from the
		// coarsest e down: the first that reads back as a float in (lo, hi]
		// is the shortest.
		_, exp := math.Frexp(max(math.Abs(lo), math.Abs(hi))) // < 2^exp ≤ 10^e0
		for e := exp*30103/100000 + 1; e >= -324; e-- {
			unit := new(big.Rat).SetInt(new(big.Int).Exp(ten, big.NewInt(int64(abs(e))), nil))
			if e < 0 {
				unit.Inv(unit)
			}
			q := new(big.Rat).Quo(h, unit)
			n := new(big.Int).Div(q.Num(), q.Denom()) // Euclidean: the floor, as Denom > 0
			if f, ok := decimalIn(n, unit, lo, hi); ok {
				hi = f
				break
			}
			if f, ok := decimalIn(n.Add(n, big.NewInt(1)), unit, lo, hi); ok {
				hi = f // a decimal just above hi that reads back as hi
				break
			}
		}
	}
	if hi == 0 {
		hi = 0 // not -0, which JSON would print as -0
	}
	return hi
}

// decimalIn returns n·unit as a float64 and whether it lies in (lo, hi].
func decimalIn(n *big.Int, unit *big.Rat, lo, hi float64) (float64, bool) {
	c := new(big.Rat).SetInt(n)
	f, _ := c.Mul(c, unit).Float64()
	return f, f > lo && f <= hi
}

func abs(e int) int {
	if e < 0 {
		return -e
	}
	return e
}
