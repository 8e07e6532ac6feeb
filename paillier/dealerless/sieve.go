package dealerless

import (
	"context"
	"fmt"
	"math"
	"math/big"
)

// minUBits is the least width of the random high part u_i of a sieved
// share: the sieve may take at most h − 2 − |n| − |4r| − minUBits bits of
// a share for its modulus M, so that every share keeps a uniform high part
// of at least this many bits besides its residue mod M.
const minUBits = 128

// sieve is Malkin–Wu–Boneh's distributed sieve ("Experimenting with shared
// generation of RSA keys", NDSS 1999, §3): every party draws a unit a_i of
// Z_M for the product M of small odd primes, the parties turn the shared
// product A = ∏ a_i into additive shares b_i with Σ b_i ≡ A (mod M), and
// each party's additive share of a candidate prime is ≡ b_i (mod M). Then
// p ≡ A (mod M) is a unit: p has no prime factor in M, and nobody learns
// more about p mod M than that.
type sieve struct {
	M      *big.Int   // product of the odd primes ≤ bound, except r
	bound  int64      // B_s: the largest prime in M
	primes int        // the number of primes in M
	inv4r  *big.Int   // (4r)⁻¹ mod M
	rBound *big.Int   // 2^σ·M^n: each mask R_i is below it
	uSpan  *big.Int   // each share's high part u_i is below it
	fourRM *big.Int   // 4r·M
	groups [][]uint64 // the primes of M, grouped so that each group's product fits 64 bits
	prods  []uint64   // each group's product
}

// newSieve picks M as large as the ring rg and the share size allow: the
// masked product z = A + Σ R_i < (1 + n·2^σ)·M^n must stay below the ring
// modulus (so n·|M| + σ + |n| + 2 ≤ rg.bits), and each share below
// 2^(h−2)/n must keep minUBits random bits above 4r·M.
func newSieve(n int, r int64, h int, rg *ring) (*sieve, error) {
	lgn := bitlen(n)
	fourR := big.NewInt(4 * r)
	maxBits := min((rg.bits-statBits-lgn-2)/n, h-2-lgn-fourR.BitLen()-minUBits)
	sv := &sieve{M: big.NewInt(1)}
	next := new(big.Int)
	for l := int64(3); ; l += 2 {
		if l == r || !big.NewInt(l).ProbablyPrime(0) {
			continue
		}
		if next.Mul(sv.M, big.NewInt(l)).BitLen() > maxBits {
			break
		}
		sv.M.Set(next)
		sv.bound = l
		sv.primes++
		if k := len(sv.prods) - 1; k >= 0 && sv.prods[k] <= math.MaxUint64/uint64(l) {
			sv.groups[k] = append(sv.groups[k], uint64(l))
			sv.prods[k] *= uint64(l)
		} else {
			sv.groups, sv.prods = append(sv.groups, []uint64{uint64(l)}), append(sv.prods, uint64(l))
		}
	}
	if sv.primes == 0 {
		return nil, fmt.Errorf("dealerless: no room for a sieve with %d parties and %d-bit primes", n, h)
	}
	sv.inv4r = new(big.Int).ModInverse(fourR, sv.M) // M is odd and r ∉ M
	sv.rBound = new(big.Int).Exp(sv.M, big.NewInt(int64(n)), nil)
	sv.rBound.Lsh(sv.rBound, statBits)
	sv.fourRM = new(big.Int).Mul(fourR, sv.M)
	span := new(big.Int).Div(pow2(h-2), big.NewInt(int64(n)))
	sv.uSpan = span.Div(span, sv.fourRM)
	return sv, nil
}

// gain is ∏_{ℓ | M} ℓ/(ℓ−1): how much more often a sieved candidate is
// prime than one with only the residues mod 4r fixed (Mertens: about
// e^γ·ln(B_s)/2·(r−1)/r).
func (sv *sieve) gain() float64 {
	g := 1.0
	for l := int64(3); l <= sv.bound; l += 2 {
		if new(big.Int).Mod(sv.M, big.NewInt(l)).Sign() == 0 && big.NewInt(l).ProbablyPrime(0) {
			g *= float64(l) / float64(l-1)
		}
	}
	return g
}

// isUnit reports whether a is prime to M, by word-sized remainders (a
// few times faster than a gcd with M).
func (sv *sieve) isUnit(a *big.Int) bool {
	for g, m := range sv.prods {
		r := modWord(a, m)
		for _, l := range sv.groups[g] {
			if r%l == 0 {
				return false
			}
		}
	}
	return true
}

// randUnit draws a uniform unit of Z_M from this party's secret randomness
// (rejection sampling: about e^γ·ln(B_s)/2 draws on average).
func (p *party) randUnit(sv *sieve) (*big.Int, error) {
	for {
		a, err := p.randBelow(sv.M)
		if err != nil {
			return nil, err
		}
		if sv.isUnit(a) {
			return a, nil
		}
	}
}

// sieveRounds runs the multiplicative sieve for count candidate primes and
// returns this party's units a and its additive shares b mod M of their
// products: Σ_i b_i[c] ≡ ∏_i a_i[c] (mod M) for every c. Rounds (round is
// the prefix of their names):
//
//	a     deal a_i (degree t) and the mask R_i ∈ [0, 2^σ·M^n) (degree 2t)
//	m1..  BGW products of pairs of shared values with degree reduction, a
//	      tree of depth ⌈log2 n⌉−1, until two values are left
//	z     the last product plus Σ R_i (degree 2t, re-randomised by the
//	      masks' polynomials) is opened to party 1 alone: z = A + Σ R_i,
//	      exact since z < Q, and statistically hiding A
//
// Then party 1 takes b_1 = (z − R_1) mod M and every other party
// b_i = (−R_i) mod M.
func (p *party) sieveRounds(ctx context.Context, round string, sv *sieve, rg *ring, sh *sharing, count int) (a, b []*big.Int, err error) {
	t := p.t
	a = make([]*big.Int, count)
	R := make([]*big.Int, count)
	for c := range a {
		if a[c], err = p.randUnit(sv); err != nil {
			return nil, nil, err
		}
		if R[c], err = p.randBelow(sv.rBound); err != nil {
			return nil, nil, err
		}
	}
	got, err := p.shareRound(ctx, round+"/a", rg, sh, []vec{{"a", a, t}, {"R", R, 2 * t}})
	if err != nil {
		return nil, nil, err
	}
	level, err := p.productTree(ctx, round, rg, sh, got[0], count)
	if err != nil {
		return nil, nil, err
	}
	zs := make([]*big.Int, count)
	for c := range zs {
		x := new(big.Int).Mul(level[0][c], level[1][c])
		for _, rk := range got[1] {
			x.Add(x, rk[c])
		}
		zs[c] = rg.mod(x)
	}
	opened, err := p.openToFirst(ctx, round+"/z", rg, zs)
	if err != nil {
		return nil, nil, err
	}
	b = make([]*big.Int, count)
	at := make([]*big.Int, 2*t+1)
	for c := range b {
		bc := new(big.Int).Neg(R[c])
		if p.self == 1 {
			for j := range at {
				at[j] = opened[j][c]
			}
			bc.Add(bc, sh.interpolate(at, 2*t))
		}
		b[c] = bc.Mod(bc, sv.M)
	}
	return a, b, nil
}

// productTree multiplies the n shared factors (level[k]: this party's
// shares of party k+1's vector) pairwise, with BGW degree reduction
// after each multiplication (rounds m1, m2, ...), until two are left.
func (p *party) productTree(ctx context.Context, round string, rg *ring, sh *sharing, level [][]*big.Int, count int) ([][]*big.Int, error) {
	t := p.t
	lam := sh.zeroCoef(2 * t)
	tmp := new(big.Int)
	for step := 1; len(level) > 2; step++ {
		half := len(level) / 2
		flat := make([]*big.Int, 0, half*count)
		for i := range half {
			x, y := level[2*i], level[2*i+1]
			for c := range count {
				flat = append(flat, rg.mod(new(big.Int).Mul(x[c], y[c])))
			}
		}
		// Degree reduction (BGW): every party re-shares its degree-2t
		// share with degree t; the reduced share is the Lagrange
		// combination, at 0, of the re-shares of parties 1..2t+1.
		re, err := p.shareRound(ctx, fmt.Sprintf("%s/m%d", round, step), rg, sh, []vec{{"h", flat, t}})
		if err != nil {
			return nil, err
		}
		next := make([][]*big.Int, 0, half+1)
		for i := range half {
			v := make([]*big.Int, count)
			for c := range v {
				acc := new(big.Int)
				for j := 0; j <= 2*t; j++ {
					acc.Add(acc, tmp.Mul(lam[j], re[0][j][i*count+c]))
				}
				v[c] = rg.mod(acc)
			}
			next = append(next, v)
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return level, nil
}

// openToFirst opens the degree-2t shares zs to party 1 (round zr):
// parties 2..2t+1 send theirs, nobody else sends anything. Party 1 gets
// the shares of parties 1..2t+1, every other party nil.
func (p *party) openToFirst(ctx context.Context, zr string, rg *ring, zs []*big.Int) ([][]*big.Int, error) {
	t := p.t
	out := make([][]*big.Int, p.n)
	if p.self != 1 && p.self <= 2*t+1 {
		out[0] = zs
	}
	rds, err := p.readers(ctx, zr, out, rg)
	if err != nil {
		return nil, err
	}
	var opened [][]*big.Int
	if p.self == 1 {
		opened = make([][]*big.Int, 2*t+1)
		opened[0] = zs
		for k := 2; k <= 2*t+1; k++ {
			opened[k-1] = rds[k-1].take(len(zs))
		}
	}
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		if err := rds[k-1].done(); err != nil {
			return nil, fmt.Errorf("dealerless: round %s: %w", zr, err)
		}
	}
	return opened, nil
}

// shares turns this party's additive shares b mod M into its additive
// shares of candidate primes (Boneh–Franklin §3 with a public offset and
// the sieve): p = O + Σ s_i with O = 3·2^(h−2) inside party 1's share,
// every s_i ≡ b_i (mod M), party 1's ≡ p.res (mod 4r) (3 mod 4, 1 mod r),
// every other ≡ 0 (mod 4r), and s_i − (O for party 1) below 2^(h−2)/n:
// s_i = c_i + 4rM·u_i for the CRT residue c_i ∈ [0, 4rM) and u_i uniform
// below uSpan. So p ≡ Σ b_i (mod M), p ≡ 3 (mod 4), p ≡ 1 (mod r) and
// p ∈ [0.75, 1)·2^h, so that N = pq has exactly 2h bits.
func (p *party) sievedShares(sv *sieve, b []*big.Int) ([]*big.Int, error) {
	fourR := big.NewInt(4 * p.r)
	O := new(big.Int).Mul(big.NewInt(3), pow2(p.h-2))
	out := make([]*big.Int, len(b))
	for c, bc := range b {
		x, y := new(big.Int), new(big.Int).Set(bc) // s ≡ x (mod 4r), ≡ y (mod M)
		if p.self == 1 {
			x.Sub(p.res, O)
			x.Mod(x, fourR)
			y.Sub(y, O)
		}
		// CRT: s = x + 4r·((y − x)·(4r)⁻¹ mod M)
		k := new(big.Int).Sub(y, x)
		k.Mul(k, sv.inv4r)
		k.Mod(k, sv.M)
		s := k.Mul(k, fourR).Add(k, x)
		u, err := p.randBelow(sv.uSpan)
		if err != nil {
			return nil, err
		}
		s.Add(s, u.Mul(u, sv.fourRM))
		if p.self == 1 {
			s.Add(s, O)
		}
		out[c] = s
	}
	return out, nil
}
