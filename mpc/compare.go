package mpc

import (
	"context"
	"fmt"
)

// Comparison after Catrina and de Hoogh, "Improved Primitives for
// Secure Multiparty Integer Computation" (SCN 2010): protocols Mod2m,
// Trunc and LTZ, and BitLT computed as a carry-out. Names follow the
// paper: a signed k-bit integer a in [-2^(k-1), 2^(k-1)) is embedded as
// a mod p; r' is a random m-bit mask given bit by bit, r″ a random
// integer of k + κ − m bits per party.

// Kappa is the statistical security parameter κ: a masked opening is
// within statistical distance 2^-κ of one that does not depend on the
// secret.
const Kappa = 40

// MaxBits is the largest k, the bit length of the signed integers the
// comparisons take. With k <= 48, κ = 40 and N <= MaxParties, the
// masked value 2^(k-1) + a + 2^m r″ + r' is below 2^(k+κ+11) < p, so
// it never wraps.
const MaxBits = 48

// checkKM returns an error unless 1 <= m < k <= MaxBits.
func checkKM(k, m int) error {
	if k < 2 || k > MaxBits || m < 1 || m >= k {
		return fmt.Errorf("mpc: bit lengths k=%d m=%d: %w", k, m, ErrParams)
	}
	return nil
}

// masks is the preprocessing of count Mod2m calls with the same k and
// m (Catrina and de Hoogh's PRandM): shares of the bits of r' (bits[i*m
// + j] is bit j of r'_i), of r'_i = Σ_j 2^j bits[i*m+j], and of r″_i.
type masks struct {
	m      int
	bits   []Elem
	r1, r2 []Elem
}

// slice returns the masks of calls lo..hi-1.
func (mk masks) slice(lo, hi int) masks {
	return masks{m: mk.m, bits: mk.bits[lo*mk.m : hi*mk.m], r1: mk.r1[lo:hi], r2: mk.r2[lo:hi]}
}

// prandM draws the masks of count Mod2m calls. Three rounds (shared
// randomness for the bits and r″ together, then RandomBits' Mul and
// Open), plus three per retry; opens only RandomBits' squares.
func (p *Party) prandM(ctx context.Context, count, k, m int) (masks, error) {
	rf, r2, err := p.randomMix(ctx, count*m, count, k+Kappa-m)
	if err != nil {
		return masks{}, err
	}
	bits, err := p.bitsFrom(ctx, rf)
	if err != nil {
		return masks{}, err
	}
	r1 := make([]Elem, count)
	for i := range r1 {
		for j := range m {
			r1[i] = r1[i].Add(Pow2(j).Mul(bits[i*m+j]))
		}
	}
	return masks{m: m, bits: bits, r1: r1, r2: r2}, nil
}

// openMasked opens c = 2^(k-1) + a + 2^m r″ + r' (Mod2m, step 2). One
// round. c mod 2^m = (a + r') mod 2^m is uniform because r' is; c >> m
// is (2^(k-1) + a) >> m (below 2^(k-m)) plus a carry plus r″, and the
// honest parties' terms of r″ (k+κ−m bits each) make it statistically
// independent of a, to within 2^-κ.
func (p *Party) openMasked(ctx context.Context, a []Elem, k int, mk masks) ([]Elem, error) {
	x := make([]Elem, len(a))
	top, pm := Pow2(k-1), Pow2(mk.m)
	for i := range x {
		x[i] = a[i].Add(top).Add(pm.Mul(mk.r2[i])).Add(mk.r1[i])
	}
	return p.Open(ctx, x)
}

// mod2mWith is Mod2m with its masks drawn beforehand: it opens c, takes
// c' = c mod 2^m, u = [c' < r'] by BitLT, and returns
// a' = c' − r' + 2^m u = a mod 2^m.
func (p *Party) mod2mWith(ctx context.Context, a []Elem, k int, mk masks) ([]Elem, error) {
	c, err := p.openMasked(ctx, a, k, mk)
	if err != nil {
		return nil, err
	}
	cm := make([]uint64, len(c))
	for i := range c {
		cm[i] = c[i].Uint64() & (1<<mk.m - 1)
	}
	u, err := p.BitLT(ctx, cm, mk.bits, mk.m)
	if err != nil {
		return nil, err
	}
	out := make([]Elem, len(a))
	pm := Pow2(mk.m)
	for i := range out {
		out[i] = NewElem(cm[i]).Sub(mk.r1[i]).Add(pm.Mul(u[i]))
	}
	return out, nil
}

// Mod2m returns shares of a mod 2^m (in [0, 2^m)) for signed k-bit a,
// 1 <= m < k <= MaxBits (Catrina and de Hoogh, protocol Mod2m).
// Rounds: 3 (masks) + 1 (open c) + ⌈log2 m⌉ (BitLT). Opened: the
// squares of RandomBits and c, statistically hiding as openMasked says.
func (p *Party) Mod2m(ctx context.Context, a []Elem, k, m int) ([]Elem, error) {
	if err := checkKM(k, m); err != nil {
		return nil, err
	}
	mk, err := p.prandM(ctx, len(a), k, m)
	if err != nil {
		return nil, err
	}
	return p.mod2mWith(ctx, a, k, mk)
}

// Trunc returns shares of ⌊a / 2^m⌋ for signed k-bit a (Catrina and de
// Hoogh, protocol Trunc): (a − (a mod 2^m)) · 2^-m, exact in the field
// because 2^m divides a − (a mod 2^m). Rounds and openings those of
// Mod2m.
func (p *Party) Trunc(ctx context.Context, a []Elem, k, m int) ([]Elem, error) {
	am, err := p.Mod2m(ctx, a, k, m)
	if err != nil {
		return nil, err
	}
	return MulPublic(Pow2(m).Inv(), Sub(a, am)), nil
}

// LTZ returns shares of 1 where a < 0 and 0 elsewhere, for signed k-bit
// a (Catrina and de Hoogh, protocol LTZ): −⌊a / 2^(k-1)⌋, since that
// quotient is −1 for negative a and 0 otherwise. Rounds: 4 + ⌈log2(k−1)⌉
// (9 for k = 33, plus 3 for the rare retry of a random bit). Opened:
// those of Mod2m with m = k − 1.
func (p *Party) LTZ(ctx context.Context, a []Elem, k int) ([]Elem, error) {
	if err := checkKM(k, k-1); err != nil {
		return nil, err
	}
	mk, err := p.prandM(ctx, len(a), k, k-1)
	if err != nil {
		return nil, err
	}
	return p.ltzWith(ctx, a, k, mk)
}

// ltzWith is LTZ with its masks drawn beforehand (Argmax draws every
// level's at once).
func (p *Party) ltzWith(ctx context.Context, a []Elem, k int, mk masks) ([]Elem, error) {
	am, err := p.mod2mWith(ctx, a, k, mk)
	if err != nil {
		return nil, err
	}
	// LTZ = −(a − a mod 2^(k-1)) / 2^(k-1) = (a mod 2^(k-1) − a) / 2^(k-1).
	return MulPublic(Pow2(k-1).Inv(), Sub(am, a)), nil
}

// Abs returns shares of |a| for signed k-bit a: a · (1 − 2 LTZ(a)).
// Rounds: LTZ's plus 1 (Mul). Opened: those of LTZ.
func (p *Party) Abs(ctx context.Context, a []Elem, k int) ([]Elem, error) {
	s, err := p.LTZ(ctx, a, k)
	if err != nil {
		return nil, err
	}
	f := AddPublic(NewElem(1), MulPublic(FromInt(-2), s))
	return p.Mul(ctx, a, f)
}
