package dealerless

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	mbits "math/bits"
	"slices"

	"github.com/cohortdm/cohort/paillier"
)

// vec is one vector a party deals in a sharing round.
type vec struct {
	label string
	vals  []*big.Int
	deg   int
}

// shareRound deals every vector (the same lengths at every party),
// exchanges the explicit shares and returns got[v][k-1], this party's
// shares of vector v as dealt by party k.
func (p *party) shareRound(ctx context.Context, round string, r *ring, sh *sharing, vecs []vec) ([][][]*big.Int, error) {
	dealt := make([][][]*big.Int, len(vecs))
	for v, x := range vecs {
		dealt[v] = sh.deal(round+"/"+x.label, x.vals, x.deg)
	}
	out := make([][]*big.Int, p.n)
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		for v, x := range vecs {
			if !sh.isSeeded(p.self, x.deg, k) {
				out[k-1] = append(out[k-1], dealt[v][k-1]...)
			}
		}
	}
	rds, err := p.readers(ctx, round, out, r)
	if err != nil {
		return nil, err
	}
	got := make([][][]*big.Int, len(vecs))
	for v := range vecs {
		got[v] = make([][]*big.Int, p.n)
		got[v][p.self-1] = dealt[v][p.self-1]
	}
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		for v, x := range vecs {
			if sh.isSeeded(k, x.deg, p.self) {
				got[v][k-1] = sh.seededShares(round+"/"+x.label, k, len(x.vals))
			} else {
				got[v][k-1] = rds[k-1].take(len(x.vals))
			}
		}
		if err := rds[k-1].done(); err != nil {
			return nil, fmt.Errorf("dealerless: round %s: %w", round, err)
		}
	}
	return got, nil
}

// sum adds the shares dealt by every party, element by element.
func sum(r *ring, got [][]*big.Int) []*big.Int {
	out := make([]*big.Int, len(got[0]))
	for c := range out {
		acc := new(big.Int)
		for _, g := range got {
			acc.Add(acc, g[c])
		}
		out[c] = r.mod(acc)
	}
	return out
}

// open sends each party j its element out[j-1] (a share of a value of
// degree deg meant for j alone) and reconstructs this party's own value
// from the shares it receives.
func (p *party) open(ctx context.Context, round string, r *ring, sh *sharing, out []*big.Int, deg int) (*big.Int, error) {
	msgs := make([][]*big.Int, p.n)
	for k := 1; k <= p.n; k++ {
		if k != p.self {
			msgs[k-1] = []*big.Int{out[k-1]}
		}
	}
	rds, err := p.readers(ctx, round, msgs, r)
	if err != nil {
		return nil, err
	}
	shares := make([]*big.Int, p.n)
	shares[p.self-1] = out[p.self-1]
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		x := rds[k-1].take(1)
		if err := rds[k-1].done(); err != nil {
			return nil, fmt.Errorf("dealerless: round %s: %w", round, err)
		}
		shares[k-1] = x[0]
	}
	return sh.interpolate(shares, deg), nil
}

func bitlen(x int) int { return mbits.Len(uint(x)) }

// convert turns the additive shares of p and q into this party's threshold
// key share y_j, an integer in (0, N²/4) with y_j ≡ Δ·G(j) (mod M″) for a
// polynomial G of degree t with G(0) = d, d ≡ 1 (mod N), d ≡ 0 (mod ψ),
// where ψ = φ(N)/(4r) and M″ = N·ψ. M″ is a multiple of the exponent of
// the squares of Z*_{N²} (N·lcm(p′, q′), and r divides p′ and q′), so
// Lagrange combination of any t+1 shares gives c^(4Δ²d) as paillier's
// Combine expects. The rounds:
//
//	c1  deal p_i, q_i, β_i, R_i (degree t) and a zero (degree 2t);
//	c2  open θ′ = ψ·β + N·R (degree 2t) to all: θ = θ′ mod N = ψβ mod N,
//	    uniform since β is, and θ′ hides ψβ (R is 2^κ times wider);
//	c3  γ_i = β_i·θ⁻¹ mod N (so Σγ_i ≡ ψ⁻¹ mod N and Σγ_i < nN), deal γ_i,
//	    the coefficients a_1..a_t of G (degree t), for every party j the
//	    mask R_j = H_j·M0 + L_j and its high part H_j (degree t), and
//	    two zeros per j (degree 2t);
//	c4  open Z_j = T_j + R_j to party j alone, T_j = Δ·(ψγ + Σ a_m j^m):
//	    Q_j = ⌊Z_j/M0⌋ = ⌊T_j/M0⌋ + H_j + c, 0 ≤ c ≤ n, with M0 = ⌊N²/4r⌋
//	    public and ⌊T_j/M0⌋ ∈ {q−1, q} for q = ⌊T_j/M″⌋;
//	c5  party j deals Q_j (degree t);
//	c6  open y_j = T_j − (Q_j − H_j − n)·M″ to party j: y_j = (T_j mod
//	    M″) + e·M″ with 0 ≤ e ≤ n+1, so y_j < (n+2)·M″ ≤ N²/4 because
//	    r ≥ n+2.
//
// Party j learns y_j and Z_j; Z_j is T_j under a mask 2^κ times wider, and
// y_j is a share in (0, N²/4) like a dealer's.
func (p *party) convert(ctx context.Context, c *candidate) (*big.Int, error) {
	n, t, N := p.n, p.t, c.N
	lgn := bitlen(n)
	delta := new(big.Int).MulRange(1, int64(n))
	four_r := big.NewInt(4 * p.r)
	M0 := new(big.Int).Mul(N, N)
	M0.Quo(M0, four_r)
	dBits := 2*p.cfg.Bits + lgn + 1
	aBits := dBits + statBits
	tBits := delta.BitLen() + aBits + lgn + t*lgn + bitlen(t+1) + 2
	qBits := tBits - M0.BitLen() + 2
	hBits := qBits + statBits
	zBits := max(tBits, hBits+M0.BitLen()+lgn) + 2
	betaBits := p.cfg.Bits + statBits
	rBits := p.cfg.Bits + 2*statBits + lgn + 4
	thetaBits := 2*p.cfg.Bits + 2*statBits + 2*lgn + 8
	if qBits+16 > p.h {
		return nil, fmt.Errorf("dealerless: %d parties need quotients of %d bits, too many for a %d-bit modulus", n, qBits, p.cfg.Bits)
	}
	r2 := newRing(max(zBits, thetaBits) + 8)
	sh := newSharing(r2, n, p.self, p.seeds)

	// c1
	beta, err := p.randBelow(pow2(betaBits))
	if err != nil {
		return nil, err
	}
	R, err := p.randBelow(pow2(rBits))
	if err != nil {
		return nil, err
	}
	got, err := p.shareRound(ctx, "c1", r2, sh, []vec{
		{"p", []*big.Int{c.p}, t}, {"q", []*big.Int{c.q}, t},
		{"beta", []*big.Int{beta}, t}, {"R", []*big.Int{R}, t},
		{"z", []*big.Int{new(big.Int)}, 2 * t},
	})
	if err != nil {
		return nil, err
	}
	F, G, Bt, Rt, Z := sum(r2, got[0])[0], sum(r2, got[1])[0], sum(r2, got[2])[0], sum(r2, got[3])[0], sum(r2, got[4])[0]
	// ψ = (N + 1 − p − q)/(4r): exact, so multiplying by the inverse of 4r
	// in the ring gives ψ's share.
	psi := new(big.Int).Add(N, big.NewInt(1))
	psi.Sub(psi, F).Sub(psi, G)
	psi.Mul(r2.mod(psi), new(big.Int).ModInverse(four_r, r2.P))
	r2.mod(psi)
	theta := new(big.Int).Mul(psi, Bt)
	theta.Add(theta, new(big.Int).Mul(N, Rt)).Add(theta, Z)
	r2.mod(theta)

	// c2
	thetaP, err := p.broadcastOpen(ctx, "c2", r2, sh, theta, 2*t)
	if err != nil {
		return nil, err
	}
	thetaP.Mod(thetaP, N)
	thetaInv := new(big.Int).ModInverse(thetaP, N)
	if thetaInv == nil {
		return nil, fmt.Errorf("dealerless: θ not invertible modulo N")
	}

	// c3
	gamma := new(big.Int).Mul(beta, thetaInv)
	gamma.Mod(gamma, N)
	coefs := make([]*big.Int, t)
	for m := range coefs {
		if coefs[m], err = p.randBelow(pow2(aBits)); err != nil {
			return nil, err
		}
	}
	Rj, Hj, zeros := make([]*big.Int, n), make([]*big.Int, n), make([]*big.Int, n)
	for j := range Rj {
		if Hj[j], err = p.randBelow(pow2(hBits)); err != nil {
			return nil, err
		}
		L, err := p.randBelow(M0)
		if err != nil {
			return nil, err
		}
		Rj[j] = L.Add(L, new(big.Int).Mul(Hj[j], M0))
		zeros[j] = new(big.Int)
	}
	got, err = p.shareRound(ctx, "c3", r2, sh, []vec{
		{"gamma", []*big.Int{gamma}, t}, {"a", coefs, t},
		{"R", Rj, t}, {"H", Hj, t}, {"z1", zeros, 2 * t}, {"z2", zeros, 2 * t},
	})
	if err != nil {
		return nil, err
	}
	Gm, A, RJ, HJ, Z1, Z2 := sum(r2, got[0])[0], sum(r2, got[1]), sum(r2, got[2]), sum(r2, got[3]), sum(r2, got[4]), sum(r2, got[5])
	d := r2.mod(new(big.Int).Mul(psi, Gm))
	T := make([]*big.Int, n)
	Zs := make([]*big.Int, n)
	for j := 1; j <= n; j++ {
		acc := new(big.Int).Set(d)
		jm := big.NewInt(1)
		for m := 0; m < t; m++ {
			jm.Mul(jm, big.NewInt(int64(j)))
			acc.Add(acc, new(big.Int).Mul(A[m], jm))
		}
		T[j-1] = r2.mod(acc.Mul(acc, delta))
		z := new(big.Int).Add(T[j-1], RJ[j-1])
		Zs[j-1] = r2.mod(z.Add(z, Z1[j-1]))
	}

	// c4
	Zme, err := p.open(ctx, "c4", r2, sh, Zs, 2*t)
	if err != nil {
		return nil, err
	}
	if Zme.BitLen() > zBits {
		return nil, fmt.Errorf("dealerless: round c4: masked value out of range (a party deviated)")
	}
	Q := new(big.Int).Quo(Zme, M0)

	// c5
	got, err = p.shareRound(ctx, "c5", r2, sh, []vec{{"Q", []*big.Int{Q}, t}})
	if err != nil {
		return nil, err
	}
	Mpp := r2.mod(new(big.Int).Mul(N, psi)) // share of M″ = N·ψ
	ys := make([]*big.Int, n)
	for j := 1; j <= n; j++ {
		qj := new(big.Int).Sub(got[0][j-1][0], HJ[j-1])
		qj.Sub(qj, big.NewInt(int64(n)))
		qj.Mul(r2.mod(qj), Mpp)
		y := new(big.Int).Sub(T[j-1], qj)
		ys[j-1] = r2.mod(y.Add(y, Z2[j-1]))
	}

	// c6
	y, err := p.open(ctx, "c6", r2, sh, ys, 2*t)
	if err != nil {
		return nil, err
	}
	bound := new(big.Int).Mul(N, N)
	bound.Rsh(bound, 2)
	if y.Sign() <= 0 || y.Cmp(bound) >= 0 {
		return nil, fmt.Errorf("dealerless: round c6: share outside (0, N²/4) (a party deviated, or a quotient estimate failed)")
	}
	return y, nil
}

// broadcastOpen sends x (a share of a degree-deg value) to every party and
// reconstructs the value.
func (p *party) broadcastOpen(ctx context.Context, round string, r *ring, sh *sharing, x *big.Int, deg int) (*big.Int, error) {
	out := make([]*big.Int, p.n)
	for k := range out {
		out[k] = x
	}
	return p.open(ctx, round, r, sh, out, deg)
}

// verify publishes the verification key, assembles the public key and
// decrypts a public test ciphertext with every party's share and proof:
// a share that does not fit the others fails here and no key is returned.
func (p *party) verify(ctx context.Context, N, y *big.Int) (*paillier.KeyShare, error) {
	pub, err := paillier.NewPublicKey(p.publicStream("fixed-base-H", N), N, 1, nil)
	if err != nil {
		return nil, fmt.Errorf("dealerless: public key: %w", err)
	}
	N2 := pub.NS1
	st := p.publicStream("v", N)
	var v *big.Int
	for {
		x := publicBelow(st, N2)
		if new(big.Int).GCD(nil, nil, x, N).Cmp(big.NewInt(1)) == 0 {
			v = x.Mul(x, x)
			v.Mod(v, N2)
			break
		}
	}
	width := pub.CiphertextSize()
	vk := secretExp(v, y, N2)
	body := encodeElems([]*big.Int{vk}, width)
	out := make([][]byte, p.n)
	for k := range out {
		if k+1 != p.self {
			out[k] = body
		}
	}
	in, err := p.exchange(ctx, "vk", out)
	if err != nil {
		return nil, err
	}
	vks := make([]*big.Int, p.n)
	vks[p.self-1] = vk
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		el, err := decodeElems(in[k-1], width, N2)
		if err == nil && len(el) != 1 {
			err = fmt.Errorf("%w: %d verification keys", ErrMessage, len(el))
		}
		if err != nil {
			return nil, fmt.Errorf("dealerless: round vk, party %d: %w", k, err)
		}
		vks[k-1] = el[0]
	}
	tpk, err := paillier.NewThresholdPublicKey(pub, p.n, p.t, v, vks)
	if err != nil {
		return nil, fmt.Errorf("dealerless: assembled key: %w", err)
	}
	ks := &paillier.KeyShare{Index: p.self, Secret: y, Public: tpk}
	m := publicBelow(p.publicStream("test-plaintext", N), N)
	ct, err := tpk.Encrypt(p.publicStream("test-randomness", N), m)
	if err != nil {
		return nil, fmt.Errorf("dealerless: test ciphertext: %w", err)
	}
	cs := []*paillier.Ciphertext{ct}
	pctx := paillier.ProofContext{Job: "keygen/" + hex.EncodeToString(p.cfg.PublicSeed), Phase: "verify"}
	ds, err := ks.DecryptShare(p.rnd, cs, pctx)
	if err != nil {
		return nil, fmt.Errorf("dealerless: test decryption: %w", err)
	}
	b, err := ds.MarshalBinary()
	if err != nil {
		return nil, err
	}
	for k := range out {
		if k+1 != p.self {
			out[k] = b
		}
	}
	if in, err = p.exchange(ctx, "check", out); err != nil {
		return nil, err
	}
	shares := []*paillier.DecryptionShare{ds}
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		sh, err := tpk.UnmarshalDecryptionShare(in[k-1])
		if err == nil && sh.Index != k {
			err = fmt.Errorf("%w: share index %d", ErrMessage, sh.Index)
		}
		if err == nil {
			err = tpk.VerifyShare(cs, sh, pctx)
		}
		if err != nil {
			return nil, fmt.Errorf("dealerless: round check, party %d: %w", k, err)
		}
		shares = append(shares, sh)
	}
	// Combine uses the first t+1 shares by index; every window of t+1
	// consecutive indices (cyclically) puts every share into some
	// combination, so a share that does not fit the others is caught.
	slices.SortFunc(shares, func(a, b *paillier.DecryptionShare) int { return a.Index - b.Index })
	for start := range p.n {
		win := make([]*paillier.DecryptionShare, 0, p.t+1)
		for k := range p.t + 1 {
			win = append(win, shares[(start+k)%p.n])
		}
		got, err := tpk.Combine(cs, win)
		if err != nil {
			return nil, fmt.Errorf("dealerless: test decryption from parties %d..: %w", start+1, err)
		}
		if got[0].Cmp(m) != 0 {
			return nil, fmt.Errorf("dealerless: test decryption from parties %d.. gave a wrong plaintext", start+1)
		}
	}
	return ks, nil
}
