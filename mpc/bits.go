package mpc

import (
	"context"
	"errors"
)

// ErrRetries is returned when random bit generation drew a zero square
// in 64 attempts in a row (chance about 2^-7000 per element in honest
// runs): a party's randomness source is broken.
var ErrRetries = errors.New("mpc: random bits: too many zero squares")

// inv2 is 2^-1 mod p = (p+1)/2 = 2^126.
func inv2() Elem { return Pow2(126) }

// RandomBits returns shares of m uniform bits no T parties know, by the
// protocol of Damgård, Fitzi, Kiltz, Nielsen and Toft ("Unconditionally
// Secure Constant-Rounds Multi-party Computation for Equality,
// Comparison, Bits and Exponentiation", TCC 2006, its random-bit
// protocol): a uniform shared r, open r^2 (zero: draw again), take the
// public root √(r^2), and b = (r/√(r^2) + 1)/2, which is 0 or 1 as r is
// −√ or +√. Three rounds (Random, Mul, Open), plus three per retry.
// Opened: r^2, which is a uniform nonzero square and says nothing about
// the sign of r, so nothing about b.
func (p *Party) RandomBits(ctx context.Context, m int) ([]Elem, error) {
	r, err := p.Random(ctx, m)
	if err != nil {
		return nil, err
	}
	return p.bitsFrom(ctx, r)
}

// bitsFrom turns shared uniform elements r into shared bits (the rounds
// after Random in RandomBits), drawing fresh ones for each zero square.
func (p *Party) bitsFrom(ctx context.Context, r []Elem) ([]Elem, error) {
	out := make([]Elem, len(r))
	todo := make([]int, len(r))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == 64 {
			return nil, ErrRetries
		}
		if attempt > 0 {
			fresh, err := p.Random(ctx, len(todo))
			if err != nil {
				return nil, err
			}
			for i, k := range todo {
				r[k] = fresh[i]
			}
		}
		rt := make([]Elem, len(todo))
		for i, k := range todo {
			rt[i] = r[k]
		}
		sq, err := p.Mul(ctx, rt, rt)
		if err != nil {
			return nil, err
		}
		s, err := p.Open(ctx, sq)
		if err != nil {
			return nil, err
		}
		var again []int
		roots := make([]Elem, 0, len(todo))
		keep := make([]int, 0, len(todo))
		for i, k := range todo {
			if s[i].IsZero() {
				again = append(again, k)
				continue
			}
			root, _ := s[i].Sqrt() // s is a square: it is r^2
			roots = append(roots, root)
			keep = append(keep, k)
		}
		inv := batchInv(roots)
		h := inv2()
		for i, k := range keep {
			// b = (r · √(r^2)^-1 + 1) / 2
			out[k] = r[k].Mul(inv[i]).Add(NewElem(1)).Mul(h)
		}
		todo = again
	}
	return out, nil
}

// batchInv returns the inverses of nonzero elements with one field
// inversion and three multiplications each (Montgomery's trick).
func batchInv(v []Elem) []Elem {
	if len(v) == 0 {
		return nil
	}
	prefix := make([]Elem, len(v))
	acc := NewElem(1)
	for i, e := range v {
		prefix[i] = acc
		acc = acc.Mul(e)
	}
	inv := acc.Inv()
	out := make([]Elem, len(v))
	for i := len(v) - 1; i >= 0; i-- {
		out[i] = inv.Mul(prefix[i])
		inv = inv.Mul(v[i])
	}
	return out
}
