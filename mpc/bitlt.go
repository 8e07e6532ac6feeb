package mpc

import (
	"context"
	"fmt"
)

// BitLT returns shares of [a_i < b_i] for public m-bit integers a_i and
// shared ones b_i given bit by bit (b[i*m + j] is bit j of b_i, least
// significant first), 1 <= m <= 63 (Catrina and de Hoogh's BitLT).
//
// It is computed as a carry-out: a < b exactly when b + ā >= 2^m, where
// ā = 2^m − 1 − a is a's public complement, so [a < b] is the carry out
// of the top bit of b + ā. Per bit, with ā public, the generate bit
// g_j = b_j ā_j and the propagate bit p_j = b_j ⊕ ā_j are linear in b_j
// (no round). The carry-out is the fold of the pairs (g, p) under
// (g_h, p_h) ∘ (g_l, p_l) = (g_h + p_h g_l, p_h p_l), which is
// associative, so it is taken as a balanced tree: ⌈log2 m⌉ rounds, each
// one batched Mul over every value and pair, m − 1 combinations of two
// products (one at the root) per value. A linear scan would need the
// same products but m − 1 rounds; as rounds, not field operations,
// dominate over a network, and Argmax runs ⌈log2 n⌉ LTZ levels in
// sequence, the log-depth tree is the one used. (g_h + p_h g_l stays a
// bit: g_h and p_h are never both 1.) Opens nothing.
func (p *Party) BitLT(ctx context.Context, a []uint64, b []Elem, m int) ([]Elem, error) {
	if m < 1 || m > 63 || len(b) != len(a)*m {
		return nil, fmt.Errorf("mpc: bitlt: %d values of %d bits, %d shared bits: %w", len(a), m, len(b), ErrParams)
	}
	count := len(a)
	g := make([]Elem, len(b))
	pr := make([]Elem, len(b))
	one := NewElem(1)
	for i, ai := range a {
		abar := ^ai & (1<<m - 1)
		for j := range m {
			bj := b[i*m+j]
			if abar>>j&1 == 1 {
				g[i*m+j] = bj           // b_j · 1
				pr[i*m+j] = one.Sub(bj) // b_j ⊕ 1
			} else {
				pr[i*m+j] = bj // b_j ⊕ 0; g_j = 0
			}
		}
	}
	for width := m; width > 1; {
		var err error
		g, pr, width, err = p.carryLevel(ctx, g, pr, count, width)
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

// carryLevel combines adjacent (g, p) pairs of every value: position
// 2q (low) with 2q+1 (high), an odd last one kept as the new top. It
// returns the halved arrays and their width. One round; at the root
// (width 2) the p products are skipped, as nothing reads them.
func (p *Party) carryLevel(ctx context.Context, g, pr []Elem, count, width int) ([]Elem, []Elem, int, error) {
	pairs := width / 2
	next := pairs + width%2
	root := next == 1
	xs := make([]Elem, 0, 2*count*pairs)
	ys := make([]Elem, 0, 2*count*pairs)
	for i := range count {
		for q := range pairs {
			lo, hi := i*width+2*q, i*width+2*q+1
			xs = append(xs, pr[hi])
			ys = append(ys, g[lo])
			if !root {
				xs = append(xs, pr[hi])
				ys = append(ys, pr[lo])
			}
		}
	}
	prod, err := p.Mul(ctx, xs, ys)
	if err != nil {
		return nil, nil, 0, err
	}
	ng := make([]Elem, count*next)
	np := make([]Elem, count*next)
	per := 2
	if root {
		per = 1
	}
	for i := range count {
		for q := range pairs {
			hi := i*width + 2*q + 1
			k := (i*pairs + q) * per
			ng[i*next+q] = g[hi].Add(prod[k]) // g_h + p_h g_l
			if !root {
				np[i*next+q] = prod[k+1] // p_h p_l
			}
		}
		if width%2 == 1 {
			ng[i*next+pairs] = g[i*width+width-1]
			np[i*next+pairs] = pr[i*width+width-1]
		}
	}
	return ng, np, next, nil
}
