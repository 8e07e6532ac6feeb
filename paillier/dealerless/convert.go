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
	cv, err := p.newConversion(c)
	if err != nil {
		return nil, err
	}
	psi, beta, theta, err := cv.shareInputs(ctx) // c1
	if err != nil {
		return nil, err
	}
	thetaInv, err := cv.openTheta(ctx, theta) // c2
	if err != nil {
		return nil, err
	}
	m, err := cv.maskShares(ctx, psi, beta, thetaInv) // c3
	if err != nil {
		return nil, err
	}
	Zme, err := p.open(ctx, "c4", cv.r2, cv.sh, m.Zs, 2*p.t) // c4
	if err != nil {
		return nil, err
	}
	if Zme.BitLen() > cv.zBits {
		return nil, fmt.Errorf("dealerless: round c4: masked value out of range (a party deviated)")
	}
	return cv.reduce(ctx, psi, m, new(big.Int).Quo(Zme, cv.M0)) // c5, c6
}

// conversion holds the public constants, the bit sizes and the ring of
// one run of convert.
type conversion struct {
	p                                    *party
	c                                    *candidate
	delta, fourR, M0                     *big.Int
	aBits, hBits, zBits, betaBits, rBits int
	r2                                   *ring
	sh                                   *sharing
}

// newConversion sizes every value of the conversion for n parties and
// refuses party counts whose quotients would not fit the modulus.
func (p *party) newConversion(c *candidate) (*conversion, error) {
	n, t, N := p.n, p.t, c.N
	lgn := bitlen(n)
	cv := &conversion{p: p, c: c, delta: new(big.Int).MulRange(1, int64(n)), fourR: big.NewInt(4 * p.r)}
	cv.M0 = new(big.Int).Mul(N, N)
	cv.M0.Quo(cv.M0, cv.fourR)
	dBits := 2*p.cfg.Bits + lgn + 1
	cv.aBits = dBits + statBits
	tBits := cv.delta.BitLen() + cv.aBits + lgn + t*lgn + bitlen(t+1) + 2
	qBits := tBits - cv.M0.BitLen() + 2
	cv.hBits = qBits + statBits
	cv.zBits = max(tBits, cv.hBits+cv.M0.BitLen()+lgn) + 2
	cv.betaBits = p.cfg.Bits + statBits
	cv.rBits = p.cfg.Bits + 2*statBits + lgn + 4
	thetaBits := 2*p.cfg.Bits + 2*statBits + 2*lgn + 8
	if qBits+16 > p.h {
		return nil, fmt.Errorf("dealerless: %d parties need quotients of %d bits, too many for a %d-bit modulus", n, qBits, p.cfg.Bits)
	}
	cv.r2 = newRing(max(cv.zBits, thetaBits) + 8)
	cv.sh = newSharing(cv.r2, n, p.self, p.seeds)
	return cv, nil
}

// shareInputs is round c1: it deals p_i, q_i, a random β_i and mask R_i
// and a zero, and returns this party's shares of ψ and of θ′ = ψ·β + N·R,
// and its own β_i.
func (cv *conversion) shareInputs(ctx context.Context) (psi, beta, theta *big.Int, err error) {
	p, r2, N, t := cv.p, cv.r2, cv.c.N, cv.p.t
	if beta, err = p.randBelow(pow2(cv.betaBits)); err != nil {
		return nil, nil, nil, err
	}
	R, err := p.randBelow(pow2(cv.rBits))
	if err != nil {
		return nil, nil, nil, err
	}
	got, err := p.shareRound(ctx, "c1", r2, cv.sh, []vec{
		{"p", []*big.Int{cv.c.p}, t}, {"q", []*big.Int{cv.c.q}, t},
		{"beta", []*big.Int{beta}, t}, {"R", []*big.Int{R}, t},
		{"z", []*big.Int{new(big.Int)}, 2 * t},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	F, G, Bt, Rt, Z := sum(r2, got[0])[0], sum(r2, got[1])[0], sum(r2, got[2])[0], sum(r2, got[3])[0], sum(r2, got[4])[0]
	// ψ = (N + 1 − p − q)/(4r): exact, so multiplying by the inverse of 4r
	// in the ring gives ψ's share.
	psi = new(big.Int).Add(N, big.NewInt(1))
	psi.Sub(psi, F).Sub(psi, G)
	psi.Mul(r2.mod(psi), new(big.Int).ModInverse(cv.fourR, r2.P))
	r2.mod(psi)
	theta = new(big.Int).Mul(psi, Bt)
	theta.Add(theta, new(big.Int).Mul(N, Rt)).Add(theta, Z)
	return psi, beta, r2.mod(theta), nil
}

// openTheta is round c2: it opens θ′ to all and returns θ⁻¹ mod N for
// θ = θ′ mod N = ψβ mod N.
func (cv *conversion) openTheta(ctx context.Context, theta *big.Int) (*big.Int, error) {
	N := cv.c.N
	thetaP, err := cv.p.broadcastOpen(ctx, "c2", cv.r2, cv.sh, theta, 2*cv.p.t)
	if err != nil {
		return nil, err
	}
	thetaP.Mod(thetaP, N)
	thetaInv := new(big.Int).ModInverse(thetaP, N)
	if thetaInv == nil {
		return nil, fmt.Errorf("dealerless: θ not invertible modulo N")
	}
	return thetaInv, nil
}

// masked is what round c3 leaves this party: for every party j its
// shares of T_j = Δ·G(j), of the masked Z_j = T_j + R_j (to open to j), of
// the mask's high part H_j and of a zero for round c6.
type masked struct {
	T, Zs, HJ, Z2 []*big.Int
}

// maskShares is round c3: it deals γ_i = β_i·θ⁻¹ mod N, the coefficients
// of G, a mask R_j = H_j·M0 + L_j with its high part H_j for every j, and
// two zeros per j, and computes this party's shares of T_j and Z_j.
func (cv *conversion) maskShares(ctx context.Context, psi, beta, thetaInv *big.Int) (*masked, error) {
	p, r2, n, t := cv.p, cv.r2, cv.p.n, cv.p.t
	gamma := new(big.Int).Mul(beta, thetaInv)
	gamma.Mod(gamma, cv.c.N)
	coefs := make([]*big.Int, t)
	var err error
	for m := range coefs {
		if coefs[m], err = p.randBelow(pow2(cv.aBits)); err != nil {
			return nil, err
		}
	}
	Rj, Hj, zeros := make([]*big.Int, n), make([]*big.Int, n), make([]*big.Int, n)
	for j := range Rj {
		if Hj[j], err = p.randBelow(pow2(cv.hBits)); err != nil {
			return nil, err
		}
		L, err := p.randBelow(cv.M0)
		if err != nil {
			return nil, err
		}
		Rj[j] = L.Add(L, new(big.Int).Mul(Hj[j], cv.M0))
		zeros[j] = new(big.Int)
	}
	got, err := p.shareRound(ctx, "c3", r2, cv.sh, []vec{
		{"gamma", []*big.Int{gamma}, t}, {"a", coefs, t},
		{"R", Rj, t}, {"H", Hj, t}, {"z1", zeros, 2 * t}, {"z2", zeros, 2 * t},
	})
	if err != nil {
		return nil, err
	}
	Gm, A, RJ, Z1 := sum(r2, got[0])[0], sum(r2, got[1]), sum(r2, got[2]), sum(r2, got[4])
	m := &masked{T: make([]*big.Int, n), Zs: make([]*big.Int, n), HJ: sum(r2, got[3]), Z2: sum(r2, got[5])}
	d := r2.mod(new(big.Int).Mul(psi, Gm))
	for j := 1; j <= n; j++ {
		acc := new(big.Int).Set(d)
		jm := big.NewInt(1)
		for k := 0; k < t; k++ {
			jm.Mul(jm, big.NewInt(int64(j)))
			acc.Add(acc, new(big.Int).Mul(A[k], jm))
		}
		m.T[j-1] = r2.mod(acc.Mul(acc, cv.delta))
		z := new(big.Int).Add(m.T[j-1], RJ[j-1])
		m.Zs[j-1] = r2.mod(z.Add(z, Z1[j-1]))
	}
	return m, nil
}

// reduce is rounds c5 and c6: this party deals its quotient Q, and every
// party opens to j its share of y_j = T_j − (Q_j − H_j − n)·M″; it
// returns this party's y, checked to lie in (0, N²/4).
func (cv *conversion) reduce(ctx context.Context, psi *big.Int, m *masked, Q *big.Int) (*big.Int, error) {
	p, r2, n, N := cv.p, cv.r2, cv.p.n, cv.c.N
	got, err := p.shareRound(ctx, "c5", r2, cv.sh, []vec{{"Q", []*big.Int{Q}, p.t}})
	if err != nil {
		return nil, err
	}
	Mpp := r2.mod(new(big.Int).Mul(N, psi)) // share of M″ = N·ψ
	ys := make([]*big.Int, n)
	for j := 1; j <= n; j++ {
		qj := new(big.Int).Sub(got[0][j-1][0], m.HJ[j-1])
		qj.Sub(qj, big.NewInt(int64(n)))
		qj.Mul(r2.mod(qj), Mpp)
		y := new(big.Int).Sub(m.T[j-1], qj)
		ys[j-1] = r2.mod(y.Add(y, m.Z2[j-1]))
	}
	y, err := p.open(ctx, "c6", r2, cv.sh, ys, 2*p.t)
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
	v := p.verificationBase(N, pub.NS1)
	vks, err := p.exchangeVerificationKeys(ctx, pub, v, y)
	if err != nil {
		return nil, err
	}
	tpk, err := paillier.NewThresholdPublicKey(pub, p.n, p.t, v, vks)
	if err != nil {
		return nil, fmt.Errorf("dealerless: assembled key: %w", err)
	}
	ks := &paillier.KeyShare{Index: p.self, Secret: y, Public: tpk}
	if err := p.testDecryption(ctx, ks); err != nil {
		return nil, err
	}
	return ks, nil
}

// verificationBase derives v, a square of a unit of Z*_{N²}, from the
// public seed: every party gets the same v.
func (p *party) verificationBase(N, N2 *big.Int) *big.Int {
	st := p.publicStream("v", N)
	for {
		x := publicBelow(st, N2)
		if new(big.Int).GCD(nil, nil, x, N).Cmp(big.NewInt(1)) == 0 {
			v := x.Mul(x, x)
			return v.Mod(v, N2)
		}
	}
}

// exchangeVerificationKeys sends v^y to every party (round vk) and
// returns every party's verification key, in index order.
func (p *party) exchangeVerificationKeys(ctx context.Context, pub *paillier.PublicKey, v, y *big.Int) ([]*big.Int, error) {
	N2 := pub.NS1
	width := pub.CiphertextSize()
	vk := secretExp(v, y, N2)
	in, err := p.exchange(ctx, "vk", p.toAll(encodeElems([]*big.Int{vk}, width)))
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
			return nil, fmt.Errorf("dealerless: round vk, %s: %w", p.peer(k), err)
		}
		vks[k-1] = el[0]
	}
	return vks, nil
}

// toAll is a round's messages with body for every other party.
func (p *party) toAll(body []byte) [][]byte {
	out := make([][]byte, p.n)
	for k := range out {
		if k+1 != p.self {
			out[k] = body
		}
	}
	return out
}

// testDecryption decrypts a ciphertext of a public plaintext with every
// party's share (round check): each share must carry a proof that
// verifies, and every window of t+1 shares must combine to the plaintext.
func (p *party) testDecryption(ctx context.Context, ks *paillier.KeyShare) error {
	tpk, N := ks.Public, ks.Public.N
	m := publicBelow(p.publicStream("test-plaintext", N), N)
	ct, err := tpk.Encrypt(p.publicStream("test-randomness", N), m)
	if err != nil {
		return fmt.Errorf("dealerless: test ciphertext: %w", err)
	}
	cs := []*paillier.Ciphertext{ct}
	pctx := paillier.ProofContext{Job: "keygen/" + hex.EncodeToString(p.cfg.PublicSeed), Phase: "verify"}
	ds, err := ks.DecryptShare(p.rnd, cs, pctx)
	if err != nil {
		return fmt.Errorf("dealerless: test decryption: %w", err)
	}
	b, err := ds.MarshalBinary()
	if err != nil {
		return err
	}
	in, err := p.exchange(ctx, "check", p.toAll(b))
	if err != nil {
		return err
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
			return fmt.Errorf("dealerless: round check, %s: %w", p.peer(k), err)
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
			return fmt.Errorf("dealerless: test decryption by %s and the %d after it: %w", p.peer(start+1), p.t, err)
		}
		if got[0].Cmp(m) != 0 {
			return fmt.Errorf("dealerless: test decryption by %s and the %d after it gave a wrong plaintext", p.peer(start+1), p.t)
		}
	}
	return nil
}
