package mpc

import (
	"context"
	"fmt"
)

// EQZ returns shares of 1 where a = 0 and 0 elsewhere, for signed k-bit
// a, 2 <= k <= MaxBits. It uses Mod2m's masked opening with a k-bit r'
// (so r″ has κ bits): c = 2^(k-1) + a + 2^k r″ + r', and a = 0
// exactly when e = (c − 2^(k-1)) mod 2^k equals r', that is when every
// bit agrees. With e public, the agreement of bit i is linear in r'_i
// (r'_i where e_i = 1, 1 − r'_i where e_i = 0), and EQZ is the product
// of the k agreements, taken as a balanced tree of batched Muls.
// Rounds: 3 (masks) + 1 (open c) + ⌈log2 k⌉. Opened: RandomBits'
// squares and c, whose low k bits are uniform (r') and whose high part,
// a carry of (2^(k-1) + a + r') >= 2^k plus r″, is within statistical
// distance 2^-κ of r″ alone.
func (p *Party) EQZ(ctx context.Context, a []Elem, k int) ([]Elem, error) {
	if k < 2 || k > MaxBits {
		return nil, fmt.Errorf("mpc: eqz: bit length k=%d: %w", k, ErrParams)
	}
	mk, err := p.prandM(ctx, len(a), k, k)
	if err != nil {
		return nil, err
	}
	c, err := p.openMasked(ctx, a, k, mk)
	if err != nil {
		return nil, err
	}
	one := NewElem(1)
	agree := make([]Elem, len(a)*k)
	for i := range a {
		e := c[i].Sub(Pow2(k-1)).Uint64() & (1<<k - 1)
		for j := range k {
			r := mk.bits[i*k+j]
			if e>>j&1 == 1 {
				agree[i*k+j] = r
			} else {
				agree[i*k+j] = one.Sub(r)
			}
		}
	}
	return p.prodTree(ctx, agree, len(a), k)
}

// prodTree returns, for each of count groups of width shared values
// (v[i*width + j]), the product of the group, in ⌈log2 width⌉ rounds of
// one batched Mul each. Opens nothing.
func (p *Party) prodTree(ctx context.Context, v []Elem, count, width int) ([]Elem, error) {
	for width > 1 {
		pairs := width / 2
		next := pairs + width%2
		xs := make([]Elem, 0, count*pairs)
		ys := make([]Elem, 0, count*pairs)
		for i := range count {
			for q := range pairs {
				xs = append(xs, v[i*width+2*q])
				ys = append(ys, v[i*width+2*q+1])
			}
		}
		prod, err := p.Mul(ctx, xs, ys)
		if err != nil {
			return nil, err
		}
		nv := make([]Elem, count*next)
		for i := range count {
			copy(nv[i*next:], prod[i*pairs:(i+1)*pairs])
			if width%2 == 1 {
				nv[i*next+pairs] = v[i*width+width-1]
			}
		}
		v, width = nv, next
	}
	return v, nil
}
