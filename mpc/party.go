package mpc

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrParams is returned for a party's parameters outside the model: not
// 1 <= t, 2t+1 <= n <= MaxParties, or an index outside 0..n-1.
var ErrParams = errors.New("mpc: parameters outside the honest-majority model")

// MaxParties bounds n, so that a sum of every party's statistical mask
// stays far below p (see Mod2m).
const MaxParties = 1 << 10

// Party is one party's end of the protocols: its index Self (Shamir
// point Self+1), the number of parties N, the threshold T (no T parties
// together learn anything; N >= 2T+1), its network and its randomness.
// Every party runs the same sequence of protocol calls with the same
// public arguments; a call's shared inputs and outputs are this party's
// shares. A Party is used by one goroutine at a time.
type Party struct {
	Self, N, T int
	Net        Network
	Rand       io.Reader

	round uint32
	stats Stats
	// lamT and lam2T are the Lagrange coefficients at 0 of points
	// 1..T+1 (Open) and 1..2T+1 (Mul's degree reduction).
	lamT, lam2T []Elem
}

// NewParty returns party self of n with threshold t, over net, drawing
// its randomness from rand (crypto/rand.Reader outside tests).
func NewParty(self, n, t int, net Network, rand io.Reader) (*Party, error) {
	if t < 1 || n < 2*t+1 || n > MaxParties || self < 0 || self >= n {
		return nil, ErrParams
	}
	if net == nil || rand == nil {
		return nil, fmt.Errorf("mpc: party needs a network and a randomness source: %w", ErrParams)
	}
	return &Party{Self: self, N: n, T: t, Net: net, Rand: rand,
		lamT: lagrangeAt0(t + 1), lam2T: lagrangeAt0(2*t + 1)}, nil
}

// Stats returns the party's traffic so far.
func (p *Party) Stats() Stats { return p.stats }

// lens returns a want vector of n entries, all w.
func lens(n, w int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = w
	}
	return out
}

// Input shares a vector of m elements that party dealer holds (x, which
// the other parties pass as nil) and returns this party's shares.
// One round; opens nothing: the other parties each get one Shamir share
// per element, and any T of them are uniform whatever x is.
func (p *Party) Input(ctx context.Context, dealer int, x []Elem, m int) ([]Elem, error) {
	if dealer < 0 || dealer >= p.N {
		return nil, fmt.Errorf("mpc: input: dealer index: %w", ErrParams)
	}
	out := make([][]Elem, p.N)
	if p.Self == dealer {
		if len(x) != m {
			return nil, fmt.Errorf("mpc: input: %d elements, want %d", len(x), m)
		}
		sh, err := shareVec(p.Rand, x, p.T, p.N)
		if err != nil {
			return nil, err
		}
		out = sh
	}
	want := make([]int, p.N)
	want[dealer] = m
	in, err := p.exchange(ctx, out, want)
	if err != nil {
		return nil, err
	}
	return in[dealer], nil
}

// InputAll has every party share its own vector v (all of the same
// length) at once and returns this party's shares of each: in[j] are its
// shares of party j's vector. One round, where Input takes one per
// dealer; it opens nothing, as Input.
func (p *Party) InputAll(ctx context.Context, v []Elem) ([][]Elem, error) { return p.shareAll(ctx, v) }

// shareAll has every party share its own vector v (all of length m) at
// once; in[j] is this party's shares of party j's vector. One round.
func (p *Party) shareAll(ctx context.Context, v []Elem) ([][]Elem, error) {
	out, err := shareVec(p.Rand, v, p.T, p.N)
	if err != nil {
		return nil, err
	}
	return p.exchange(ctx, out, lens(p.N, len(v)))
}

// sumShares returns Σ_j in[j], position by position.
func sumShares(in [][]Elem, m int) []Elem {
	out := make([]Elem, m)
	for _, v := range in {
		for k := range out {
			out[k] = out[k].Add(v[k])
		}
	}
	return out
}

// Add returns a + b (local: shares of a degree-t sharing add).
func Add(a, b []Elem) []Elem {
	out := make([]Elem, len(a))
	for i := range out {
		out[i] = a[i].Add(b[i])
	}
	return out
}

// Sub returns a - b (local).
func Sub(a, b []Elem) []Elem {
	out := make([]Elem, len(a))
	for i := range out {
		out[i] = a[i].Sub(b[i])
	}
	return out
}

// MulPublic returns c * a for a public c (local).
func MulPublic(c Elem, a []Elem) []Elem {
	out := make([]Elem, len(a))
	for i := range out {
		out[i] = c.Mul(a[i])
	}
	return out
}

// AddPublic returns a + c for a public c (local): a constant is its own
// degree-0 sharing, so every party adds c to its share.
func AddPublic(c Elem, a []Elem) []Elem {
	out := make([]Elem, len(a))
	for i := range out {
		out[i] = a[i].Add(c)
	}
	return out
}

// Mul returns shares of a*b, position by position, by the degree
// reduction of Gennaro, Rabin and Rabin ("Simplified VSS and Fast-track
// Multiparty Computations with Applications to Threshold Cryptography",
// PODC 1998): the local products d_i = a_i b_i lie on a polynomial of
// degree 2T; parties 1..2T+1 (indices 0..2T) each reshare d_i with degree
// T, and every party takes Σ_i λ_i [d_i], λ the Lagrange coefficients
// at 0 of points 1..2T+1. One round; opens nothing: each party receives
// only fresh degree-T shares, T of which are uniform.
func (p *Party) Mul(ctx context.Context, a, b []Elem) ([]Elem, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("mpc: mul: operands of %d and %d elements", len(a), len(b))
	}
	m := len(a)
	reshares := 2*p.T + 1
	out := make([][]Elem, p.N)
	if p.Self < reshares {
		d := make([]Elem, m)
		for i := range d {
			d[i] = a[i].Mul(b[i])
		}
		sh, err := shareVec(p.Rand, d, p.T, p.N)
		if err != nil {
			return nil, err
		}
		out = sh
	}
	want := make([]int, p.N)
	for j := range reshares {
		want[j] = m
	}
	in, err := p.exchange(ctx, out, want)
	if err != nil {
		return nil, err
	}
	return combine(p.lam2T, in[:reshares], m), nil
}

// Open reveals the secrets behind a to every party: parties 0..T (by
// index; Shamir points 1..T+1) send
// their shares to all, and each party interpolates at 0. One round. It
// opens exactly its argument; every caller in this package opens only
// a masked value, a random square or a final output.
func (p *Party) Open(ctx context.Context, a []Elem) ([]Elem, error) {
	m := len(a)
	out := make([][]Elem, p.N)
	if p.Self <= p.T {
		for j := range out {
			out[j] = a
		}
	}
	want := make([]int, p.N)
	for j := range p.T + 1 {
		want[j] = m
	}
	in, err := p.exchange(ctx, out, want)
	if err != nil {
		return nil, err
	}
	p.stats.Opened += int64(m)
	return combine(p.lamT, in[:p.T+1], m), nil
}

// Random returns shares of m uniform field elements no T parties know:
// every party shares m uniform elements and each takes the sum (one
// honest party's term makes it uniform). One round; opens nothing.
func (p *Party) Random(ctx context.Context, m int) ([]Elem, error) {
	r, _, err := p.randomMix(ctx, m, 0, 0)
	return r, err
}

// randomMix returns shares of nf uniform field elements and of ni
// integers, each the sum over all N parties of a uniform integer in
// [0, 2^bits) (Catrina and de Hoogh's PRandInt), in one round. The
// integer sum is below N 2^bits; the honest parties' terms hide, with
// statistical distance 2^-(bits - b) or less, any value of b bits it
// is added to.
func (p *Party) randomMix(ctx context.Context, nf, ni, bits int) (f, ints []Elem, err error) {
	v, err := randElems(p.Rand, nf)
	if err != nil {
		return nil, nil, err
	}
	if ni > 0 {
		w, err := randInts(p.Rand, ni, bits)
		if err != nil {
			return nil, nil, err
		}
		v = append(v, w...)
	}
	in, err := p.shareAll(ctx, v)
	if err != nil {
		return nil, nil, err
	}
	s := sumShares(in, nf+ni)
	return s[:nf], s[nf:], nil
}
