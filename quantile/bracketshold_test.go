package quantile

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/mpc"
)

// chanNet is an in-memory mpc.Network: one buffered channel per ordered
// pair of parties, each round's vectors tagged with the round.
type chanNet struct {
	self int
	ch   [][]chan chanMsg // ch[from][to]
}

type chanMsg struct {
	round uint32
	vec   []mpc.Elem
}

func newChanNets(n int) []*chanNet {
	ch := make([][]chan chanMsg, n)
	for i := range ch {
		ch[i] = make([]chan chanMsg, n)
		for j := range ch[i] {
			ch[i][j] = make(chan chanMsg, 2)
		}
	}
	nets := make([]*chanNet, n)
	for i := range nets {
		nets[i] = &chanNet{self: i, ch: ch}
	}
	return nets
}

func (c *chanNet) Exchange(ctx context.Context, round uint32, out [][]mpc.Elem) ([][]mpc.Elem, error) {
	for j, v := range out {
		if j != c.self {
			select {
			case c.ch[c.self][j] <- chanMsg{round, append([]mpc.Elem(nil), v...)}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	in := make([][]mpc.Elem, len(out))
	for j := range in {
		if j == c.self {
			continue
		}
		select {
		case m := <-c.ch[j][c.self]:
			if m.round != round {
				return nil, fmt.Errorf("round %d from %d, want %d", m.round, j, round)
			}
			in[j] = m.vec
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return in, nil
}

// bracketCase is one round of the check in the clear: each party's
// counts at the thresholds (non-decreasing), its floor, and the
// quantiles' pieces.
type bracketCase struct {
	counts [][]int64
	floors []int64
	qs     []quantilePieces
}

// randomBracketCase draws parties' counts at m thresholds and one or two
// quantiles whose brackets hold some of the thresholds.
func randomBracketCase(r *mrand.Rand, parties, m int) bracketCase {
	c := bracketCase{counts: make([][]int64, parties), floors: make([]int64, parties)}
	pooled := make([]int64, m)
	for i := range c.counts {
		c.counts[i] = make([]int64, m)
		v := r.Int64N(3)
		for j := range m {
			v += r.Int64N(4)
			c.counts[i][j] = v
			pooled[j] += v
		}
		c.floors[i] = 1 + r.Int64N(8)
	}
	for range 1 + r.IntN(2) {
		first, last := r.IntN(m), r.IntN(m)
		first, last = min(first, last), max(first, last)
		cLo := pooled[first] - r.Int64N(pooled[first]+1)
		cHi := pooled[last] + r.Int64N(6)
		q := quantilePieces{rank: cLo + 1 + r.Int64N(cHi-cLo)}
		prev := -1
		for j := first; j <= last; j++ {
			q.pieces = append(q.pieces, piece{lo: prev, hi: j, cLo: cLo})
			prev = j
		}
		q.pieces = append(q.pieces, piece{lo: prev, hi: -1, cLo: cLo, cHi: cHi})
		c.qs = append(c.qs, q)
	}
	return c
}

// holds is the check in the clear: every quantile's next bracket (the
// first piece whose upper count reaches the rank) holds at least every
// party's floor of rows.
func (c bracketCase) holds() bool {
	pooledAt := func(j int, public int64) int64 {
		if j < 0 {
			return public
		}
		var s int64
		for _, cs := range c.counts {
			s += cs[j]
		}
		return s
	}
	for _, q := range c.qs {
		for _, p := range q.pieces {
			hi := pooledAt(p.hi, p.cHi)
			if hi < q.rank {
				continue
			}
			rows := hi - pooledAt(p.lo, p.cLo)
			for _, f := range c.floors {
				if rows < f {
					return false
				}
			}
			break
		}
	}
	return true
}

// run runs bracketsHold among the case's parties in memory and returns
// each party's verdict and the rounds it took.
func (c bracketCase) run(t *testing.T, ctx context.Context) ([]bool, int) {
	t.Helper()
	n := len(c.counts)
	nets := newChanNets(n)
	got := make([]bool, n)
	errs := make([]error, n)
	rounds := 0
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			party, err := mpc.NewParty(i, n, (n-1)/2, nets[i], rand.Reader)
			if err != nil {
				errs[i] = err
				return
			}
			input := make([]mpc.Elem, 0, len(c.counts[i])+1)
			for _, v := range c.counts[i] {
				input = append(input, mpc.FromInt(v))
			}
			input = append(input, mpc.FromInt(c.floors[i]))
			// 62 rows, as the demo's: 8-bit comparisons.
			got[i], errs[i] = bracketsHold(ctx, party, input, c.qs, bracketBits(62))
			mu.Lock()
			rounds = max(rounds, party.Stats().Rounds)
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("party %d: %v", i, err)
		}
	}
	return got, rounds
}

// The check's opened bit is the check in the clear, over random counts,
// floors and brackets of one or two quantiles, at every party; and it
// takes 13 rounds for the demo's shapes (two quantiles, three parties:
// one input, one batch of comparisons, one product selecting the next
// bracket's, three of the verdicts' product and one opening), where
// comparing the chosen bracket's rows after choosing it took 20.
func TestBracketsHoldMatchesTheClear(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := mrand.New(mrand.NewPCG(1, 2))
	seen := map[bool]int{}
	for i := range 40 {
		c := randomBracketCase(r, 3, 2+r.IntN(4))
		want := c.holds()
		seen[want]++
		got, rounds := c.run(t, ctx)
		for p, g := range got {
			if g != want {
				t.Fatalf("case %d: party %d's check says %v, in the clear %v", i, p, g, want)
			}
		}
		if len(c.qs) == 2 && rounds > 13 {
			t.Errorf("case %d: the check took %d rounds, want at most 13", i, rounds)
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("the cases do not exercise both verdicts: %v", seen)
	}
}
