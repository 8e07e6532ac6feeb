package lattice

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// fanout is the k of the k-ary tree the round helper folds over, as
// secureagg's default.
const fanout = 4

// round is one aggregation played in process the way secureagg's tree
// would run it, every message through its wire encoding:
//
//  1. every party encrypts its input; a child sends its subtree's aggregate
//     up (the parent unmarshals and folds it in);
//  2. the root sends the total's mask down the tree;
//  3. every member of a quorum of the plan checks the mask against the
//     committed contributions and sends the root one share per quorum;
//  4. the root opens the total and sends the agreed plaintext down the tree.
type round struct {
	keys   []*Keys // point i+1 at index i
	layout *Layout
	plan   func(*PublicKey, []int) (*Plan, error)
	avail  []int // members available to decrypt (all when nil)
	ctx    Context
	// tamper, when set, may change a share before the root reads it.
	tamper func(*DecryptionShare)
	// parallel runs every party's encryption and shares in its own
	// goroutine, as separate nodes would (benchmarks).
	parallel bool
	// zeros, when set, is the pool every party's Encryptor takes its
	// encryptions of zero from.
	zeros *ZeroPool
	// noise, when set, is the pool every party's Decryptor takes its
	// smudging noise from.
	noise *ZeroPool
	// bytes sent per party (index = point-1) and the root's opening,
	// filled by run.
	bytes  []int
	opened *Opening
}

// run plays the round over parties' inputs (point i+1 at index i; nil =
// not taking part) and returns what the root opened.
func (r *round) run(tb testing.TB, inputs [][]int64) (*Result, error) {
	tb.Helper()
	pk := r.keys[0].PublicKey
	g := NewAggregator(pk, r.layout)
	r.bytes = make([]int, len(r.keys))
	var order []int // tree positions: points of the parties taking part
	for i, in := range inputs {
		if in != nil {
			order = append(order, i+1)
		}
	}
	aggs := make([]*Aggregate, len(order))
	err := r.each(len(order), func(x int) error {
		enc, err := NewEncryptor(pk)
		if err != nil {
			return err
		}
		if err := enc.UseZeros(r.zeros); err != nil {
			return err
		}
		aggs[x], err = enc.EncryptInts(r.ctx, order[x], r.layout, inputs[order[x]-1])
		return err
	})
	if err != nil {
		return nil, err
	}
	committed := make([]Input, len(order))
	for x, a := range aggs {
		committed[x] = a.Inputs[0]
	}
	// 1. Up: deepest positions first, each added into its parent from its
	// encoding (AddBinary, as secureagg's parents do).
	for x := len(order) - 1; x > 0; x-- {
		parent := (x - 1) / fanout
		b, err := aggs[x].MarshalBinary()
		if err != nil {
			return nil, err
		}
		r.bytes[order[x]-1] += len(b)
		if err := g.AddBinary(aggs[parent], b, nil); err != nil {
			return nil, err
		}
	}
	total := aggs[0]
	avail := r.avail
	if avail == nil {
		avail = order
	}
	plan, err := r.plan(pk, avail)
	if err != nil {
		return nil, err
	}
	open, err := NewOpening(pk, r.layout, plan, total)
	if err != nil {
		return nil, err
	}
	r.opened = open
	// 2. Down: the mask to every party (inner nodes forward it).
	mask := total.Mask()
	masks := map[int]*Mask{order[0]: mask}
	for x := 1; x < len(order); x++ {
		got := g.AllocateMask()
		if err := r.send(order[(x-1)/fanout], mask, got); err != nil {
			return nil, err
		}
		masks[order[x]] = got
	}
	// 3. Shares, made by every party at once, folded by the root in turn
	// from their encodings (AddBinary, as secureagg's root does).
	expect := Expect{Context: r.ctx, Shape: r.layout.Shape(), Committed: committed}
	shares := make([][][]byte, len(avail))
	err = r.each(len(avail), func(i int) error {
		var err error
		shares[i], err = r.shares(avail[i], masks[avail[i]], expect, plan)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, ss := range shares {
		for _, s := range ss {
			if err := open.AddBinary(s, nil); err != nil {
				return nil, err
			}
		}
	}
	res, err := open.Open()
	// 4. The plaintext down the tree, 8 bytes per coefficient.
	if res != nil && res.Plain != nil {
		for x := 1; x < len(order); x++ {
			r.bytes[order[(x-1)/fanout]-1] += 8 * len(res.Plain)
		}
	}
	return res, err
}

type wireValue interface {
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

// send moves v into into through its encoding, counting the bytes as
// sent by party from.
func (r *round) send(from int, v, into wireValue) error {
	b, err := v.MarshalBinary()
	if err != nil {
		return err
	}
	r.bytes[from-1] += len(b)
	return into.UnmarshalBinary(b)
}

// shares makes party p's shares for every quorum it is in and returns
// their encodings, as the root receives them.
func (r *round) shares(p int, m *Mask, e Expect, plan *Plan) ([][]byte, error) {
	qs := plan.QuorumsOf(p)
	if len(qs) == 0 {
		return nil, nil
	}
	dec, err := NewDecryptor(r.keys[p-1])
	if err != nil {
		return nil, err
	}
	if err := dec.UseNoise(r.noise); err != nil {
		return nil, err
	}
	for _, in := range e.Committed {
		if in.Party == p {
			e.Own = in.Digest // p checks its own input is in
		}
	}
	t, err := dec.Target(m, e)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, q := range qs {
		var b []byte
		if r.tamper == nil { // made as it is encoded, as secureagg's decryptors do
			b, err = dec.AppendShare(nil, t, plan, q)
		} else {
			var s *DecryptionShare
			if s, err = dec.GenShare(t, plan, q); err == nil {
				r.tamper(s)
				b, err = s.MarshalBinary()
			}
		}
		if err != nil {
			return nil, err
		}
		r.bytes[p-1] += len(b)
		out = append(out, b)
	}
	return out, nil
}

// each runs f(0..n-1), concurrently when r.parallel.
func (r *round) each(n int, f func(int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		if !r.parallel {
			errs[i] = f(i)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// plainSums is the independent checker: the exact sums with math/big.
func plainSums(inputs [][]int64) []*big.Int {
	var out []*big.Int
	for _, in := range inputs {
		if in == nil {
			continue
		}
		if out == nil {
			out = make([]*big.Int, len(in))
			for i := range out {
				out[i] = new(big.Int)
			}
		}
		for i, v := range in {
			out[i].Add(out[i], big.NewInt(v))
		}
	}
	return out
}

func checkTotals(tb testing.TB, got *Totals, want []*big.Int) {
	tb.Helper()
	if got.Len() != len(want) {
		tb.Fatalf("%d totals, want %d", got.Len(), len(want))
	}
	for i, w := range want {
		if g := got.Big(i); g.Cmp(w) != 0 {
			tb.Fatalf("total %d = %v, want %v", i, g, w)
		}
	}
}

// randomInputs draws n vectors of length values below 2^vb in magnitude,
// with the edge values ±(2^vb − 1) and 0 at the front.
func randomInputs(rng *rand.Rand, n, length, vb int) [][]int64 {
	bound := int64(1)<<vb - 1
	out := make([][]int64, n)
	for p := range out {
		out[p] = make([]int64, length)
		for i := range out[p] {
			switch {
			case i == 0:
				out[p][i] = bound
			case i == 1:
				out[p][i] = -bound
			case i == 2:
				out[p][i] = 0
			case i == 3:
				out[p][i] = int64(p%2*2-1) * bound // +bound and -bound mixed
			default:
				out[p][i] = rng.Int64N(2*bound+1) - bound
			}
		}
	}
	return out
}

// Sums of random vectors with the edge values equal the plaintext sums, for
// several consortia, value widths (one field per several coefficients up to
// several fields per coefficient) and plans.
func TestRoundExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n, length, vb int
		plan          func(*PublicKey, []int) (*Plan, error)
	}{
		{3, 50, 32, PlanVerified},
		{5, 3000, 16, PlanVerified},
		{5, 1000, 62, PlanSingle},
		{4, 20000, 8, PlanVerified}, // several ciphertexts
		{17, 100, 48, PlanVerified},
	} {
		t.Run(fmt.Sprintf("N=%d/len=%d/vb=%d", tc.n, tc.length, tc.vb), func(t *testing.T) {
			keys := testKeys(t, tc.n, DefaultQuorum(tc.n))
			l, err := NewLayout(params(t), tc.length, 16, tc.vb, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			in := randomInputs(rng, tc.n, tc.length, tc.vb)
			r := &round{keys: keys, layout: l, plan: tc.plan, ctx: testContext(keys[0].PublicKey, 1)}
			res, err := r.run(t, in)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verdict.Agreed {
				t.Fatalf("verdict %+v", res.Verdict)
			}
			checkTotals(t, res.Totals, plainSums(in))
			// Every party decodes the plaintext the root sends down itself.
			again, err := l.Decode(res.Plain, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			checkTotals(t, again, plainSums(in))
		})
	}
}

// An input at the bound is refused before encryption, naming the bound.
func TestRoundRefusesOutOfRange(t *testing.T) {
	keys := testKeys(t, 3, 2)
	l, err := NewLayout(params(t), 10, 0, 20, 3)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncryptor(keys[0].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]int64, 10)
	v[3] = 1 << 20
	_, err = enc.EncryptInts(testContext(keys[0].PublicKey, 1), 1, l, v)
	if !errors.Is(err, ErrRange) || !containsAll(err.Error(), "2^20", "value_bits") {
		t.Fatalf("err = %v, want ErrRange naming value_bits and 2^20", err)
	}
	if containsAll(err.Error(), "1048576") {
		t.Fatalf("error %q shows the value", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
