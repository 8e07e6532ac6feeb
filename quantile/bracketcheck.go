package quantile

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/mpc"
	"github.com/cohortdm/cohort/mpc/mpcjob"
)

// This file is the check a counting round's pooled counts pass before
// they are aggregated and decrypted (issue 30): every quantile's bracket
// after the round must hold at least every party's floors.min_k rows.
// The bracket a round leaves (the piece of the current bracket, cut at
// the round's thresholds inside it, whose upper count first reaches the
// rank) is known only from the round's counts; once they are in the log
// they pin its rows down, released or not. So the parties first compute,
// on Shamir shares of their counts at those thresholds and of their own
// floors (package mpc), whether any such bracket holds fewer rows than
// any party's floor, and open that one bit. A party whose floor a bracket
// would break refuses the round before anything is decrypted.

// bracketBits is the width of the check's signed values, all within
// ±(2N + 2) for N pooled rows (counts, ranks and floors clamped to N + 1,
// and their differences): the comparisons' rounds grow with it.
func bracketBits(n int64) int {
	return min(max(bits.Len64(uint64(2*n+2))+1, 2), mpc.MaxBits)
}

// checkNextBrackets runs the check for a round at a.Thresholds, given
// this party's counts at them (local, the round's count vector without the
// row count). It runs once the pooled row count is known (each bracket's
// rank with it) over at least three parties, the fewest an honest majority
// can compute among; with two, each party's counts are the pooled counts
// less its own anyway.
func (s *session) checkNextBrackets(ctx context.Context, step job.Step, srch *search, a *args, local []float64) error {
	pieces := nextPieces(srch, a.Thresholds)
	if len(pieces) == 0 || len(step.Parties) < 3 {
		return nil
	}
	k, err := s.p.Guard().MinK()
	if err != nil {
		return err
	}
	// A floor above every row breaks every bracket as N + 1 does, and
	// keeps the computation's values within 2N + 2.
	k = int(min(int64(k), srch.n+1))
	input := make([]mpc.Elem, 0, len(a.Thresholds)+1)
	for _, c := range local {
		input = append(input, mpc.FromInt(int64(c)))
	}
	input = append(input, mpc.FromInt(int64(k)))
	net, self, err := mpcjob.New(s.p, step.Sub("brackets"))
	if err != nil {
		return err
	}
	n := len(step.Parties)
	party, err := mpc.NewParty(self, n, (n-1)/2, net, rand.Reader)
	if err != nil {
		return err
	}
	ok, err := bracketsHold(ctx, party, input, pieces, bracketBits(srch.n))
	if err != nil {
		return fmt.Errorf("party %s: count round %d: the brackets' check: %w", s.p.Self(), step.Round, err)
	}
	if !ok {
		return fmt.Errorf("party %s refuses count round %d: its counts would leave a quantile's bracket with fewer rows than a party's floors.min_k",
			s.p.Self(), step.Round)
	}
	return nil
}

// piece is one quantile's candidate next bracket: the rows between two
// of the round's counts, or between a count and a bracket's end, whose
// counts are public (lo, hi: an index into the round's thresholds, or −1
// with the public count cLo, cHi). rank is the quantile's rank: the
// bracket is the first piece whose upper count reaches it.
type piece struct {
	lo, hi   int
	cLo, cHi int64
}

// quantilePieces are the pieces of one unfinished quantile's bracket.
type quantilePieces struct {
	rank   int64
	pieces []piece
}

// nextPieces cuts every unfinished bracket at the thresholds inside it.
func nextPieces(srch *search, thresholds []float64) []quantilePieces {
	if !srch.counted {
		return nil
	}
	var out []quantilePieces
	for i, b := range srch.brackets {
		if srch.done(b) {
			continue
		}
		var inside []int
		for j, t := range thresholds {
			if k := orderKey(t); k > b.lo && k < b.hi {
				inside = append(inside, j)
			}
		}
		if len(inside) == 0 {
			continue
		}
		q := quantilePieces{rank: srch.ks[i]}
		prev := -1
		for _, j := range inside {
			q.pieces = append(q.pieces, piece{lo: prev, hi: j, cLo: b.cLo})
			prev = j
		}
		q.pieces = append(q.pieces, piece{lo: prev, hi: -1, cLo: b.cLo, cHi: b.cHi})
		out = append(out, q)
	}
	return out
}

// bracketsHold computes, from every party's input (its counts at the
// round's thresholds, then its floor), whether every quantile's next
// bracket holds at least every party's floor of rows, and opens that bit
// alone.
//
// It compares every piece's rows with every floor in the same batch as
// the pieces' counts with the rank, rather than the chosen piece's rows
// after the choice: one comparison's rounds (7 of the check's 20 at
// demo sizes) for a few more values in the batch. The chosen piece then
// selects its own comparisons: with exactly one piece chosen per
// quantile, Σ_p chosen_p · short_pj is 1 where the next bracket holds
// fewer rows than party j's floor, as the comparison of its rows was.
func bracketsHold(ctx context.Context, party *mpc.Party, input []mpc.Elem, qs []quantilePieces, width int) (bool, error) {
	m := len(input) - 1
	counts := make([]mpc.Elem, m)
	floors := make([]mpc.Elem, party.N)
	all, err := party.InputAll(ctx, input)
	if err != nil {
		return false, err
	}
	for dealer, sh := range all {
		counts = mpc.Add(counts, sh[:m])
		floors[dealer] = sh[m]
	}
	// Whether each piece's upper count reaches the rank, then whether its
	// rows fall short of each floor (piece-major): rows − floor < 0.
	var reach, short []mpc.Elem
	count := func(j int, public int64) mpc.Elem {
		if j < 0 {
			return mpc.FromInt(public)
		}
		return counts[j]
	}
	for _, q := range qs {
		for _, p := range q.pieces {
			lo, hi := count(p.lo, p.cLo), count(p.hi, p.cHi)
			reach = append(reach, hi.Sub(mpc.FromInt(q.rank))) // ≥ 0 where it reaches
			for _, f := range floors {
				short = append(short, hi.Sub(lo).Sub(f))
			}
		}
	}
	lt, err := party.LTZ(ctx, append(reach, short...), width)
	if err != nil {
		return false, err
	}
	below, broken := lt[:len(reach)], lt[len(reach):]
	// The next bracket is the piece that reaches the rank after one that
	// does not: its indicator is below[p−1] − below[p] (below is 1 before
	// it, 0 from it on; the bracket's lower end never reaches the rank).
	// Each piece's indicator selects its comparisons with the floors.
	var chosen, pieceShort []mpc.Elem
	at := 0
	for _, q := range qs {
		for p := range q.pieces {
			before := mpc.NewElem(1)
			if p > 0 {
				before = below[at+p-1]
			}
			c := before.Sub(below[at+p])
			for j := range floors {
				chosen = append(chosen, c)
				pieceShort = append(pieceShort, broken[(at+p)*len(floors)+j])
			}
		}
		at += len(q.pieces)
	}
	picked, err := party.Mul(ctx, chosen, pieceShort)
	if err != nil {
		return false, err
	}
	// One bit per quantile and party: its next bracket breaks the floor.
	var bad []mpc.Elem
	at = 0
	for _, q := range qs {
		for j := range floors {
			var b mpc.Elem
			for p := range q.pieces {
				b = b.Add(picked[(at+p)*len(floors)+j])
			}
			bad = append(bad, b)
		}
		at += len(q.pieces)
	}
	// Whether none is broken: the product of every 1 − bad, as a tree
	// of batched Muls (⌈log2⌉ rounds for a handful of comparisons).
	holds := mpc.AddPublic(mpc.NewElem(1), mpc.MulPublic(mpc.FromInt(-1), bad))
	for len(holds) > 1 {
		half := len(holds) / 2
		prod, err := party.Mul(ctx, holds[:half], holds[half:2*half])
		if err != nil {
			return false, err
		}
		holds = append(prod, holds[2*half:]...)
	}
	opened, err := party.Open(ctx, holds)
	if err != nil {
		return false, err
	}
	v, ok := opened[0].Int()
	if !ok || !slices.Contains([]int64{0, 1}, v) {
		return false, errors.New("the opened check is no bit")
	}
	return v == 1, nil
}

// checkedCounts counts this party's values at the round's thresholds and,
// once the pooled row count is known, runs the brackets' check on them:
// it returns the count vector for the aggregation (nil when the party
// cannot count: it withdraws there, naming why).
//
// A party that cannot count takes part in the check with no rows (the
// others would otherwise wait for its shares until the step's timeout)
// and then withdraws from the aggregation, which fails the job naming it.
func (s *session) checkedCounts(ctx context.Context, step job.Step, srch *search, a *args) ([]float64, error) {
	if !srch.counted {
		return nil, nil
	}
	var local []float64
	if s.loadErr == nil {
		var err error
		if local, err = s.localCounts(ctx, a); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("party %s: the attempt ended while it counted: %w", s.p.Self(), context.Cause(ctx))
			}
			s.loadErr = err
		}
	}
	counted := local
	if s.loadErr != nil {
		counted = make([]float64, len(a.Thresholds))
	}
	if err := s.checkNextBrackets(ctx, step, srch, a, counted); err != nil {
		return nil, err
	}
	return local, nil
}
