package paillier

import (
	"crypto/rand"
	"errors"
	"math/big"
	"strings"
	"testing"
)

var testCtx = ProofContext{Job: "job-1", Phase: "sum", Round: 3, Attempt: 0}

func shareAll(t *testing.T, shares []*KeyShare, cs []*Ciphertext, ctx ProofContext) []*DecryptionShare {
	t.Helper()
	out := make([]*DecryptionShare, len(shares))
	for i, ks := range shares {
		d, err := ks.DecryptShare(rand.Reader, cs, ctx)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = d
	}
	return out
}

// subsets returns all k-subsets of 0..n-1.
func subsets(n, k int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	return out
}

func TestThresholdAnyTPlusOneDecrypt(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	ms := []*big.Int{big.NewInt(0), big.NewInt(42), randPlain(t, &tpk.PublicKey), new(big.Int).Sub(tpk.NS, one)}
	cs, err := tpk.EncryptMany(rand.Reader, ms)
	if err != nil {
		t.Fatal(err)
	}
	ds := shareAll(t, shares, cs, testCtx)
	for _, d := range ds {
		if err := tpk.VerifyShare(cs, d, testCtx); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range subsets(len(shares), tpk.Threshold+1) {
		var sub []*DecryptionShare
		for _, i := range set {
			sub = append(sub, ds[i])
		}
		got, err := tpk.Combine(cs, sub)
		if err != nil {
			t.Fatalf("subset %v: %v", set, err)
		}
		for j := range ms {
			if got[j].Cmp(ms[j]) != 0 {
				t.Fatalf("subset %v ciphertext %d: got %v want %v", set, j, got[j], ms[j])
			}
		}
	}
	// More than t+1 shares, in any order, with duplicates: still fine.
	got, err := tpk.Combine(cs, []*DecryptionShare{ds[4], ds[0], ds[4], ds[2], ds[1]})
	if err != nil || got[1].Cmp(ms[1]) != 0 {
		t.Fatalf("all shares: %v %v", got, err)
	}
}

// TestThresholdTSharesDoNotDecrypt: Combine refuses t shares, and the best
// an attacker can do with t shares (interpolating over t points, which is
// all t shares determine) does not produce the plaintext.
func TestThresholdTSharesDoNotDecrypt(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	m := big.NewInt(123456789)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m)}
	ds := shareAll(t, shares, cs, testCtx)
	for _, set := range subsets(len(shares), tpk.Threshold) {
		var sub []*DecryptionShare
		idx := []int{}
		for _, i := range set {
			sub = append(sub, ds[i])
			idx = append(idx, i+1)
		}
		if _, err := tpk.Combine(cs, sub); err == nil {
			t.Fatalf("subset %v of %d shares decrypted", set, len(set))
		}
		// Attacker's interpolation over t points.
		lam := lagrange(tpk.Delta(), idx)
		acc := big.NewInt(1)
		for k, d := range sub {
			e := new(big.Int).Lsh(lam[k], 1)
			v := d.Values[0]
			if e.Sign() < 0 {
				e.Neg(e)
				v = new(big.Int).ModInverse(v, tpk.NS1)
			}
			acc.Mul(acc, new(big.Int).Exp(v, e, tpk.NS1))
			acc.Mod(acc, tpk.NS1)
		}
		if new(big.Int).Mod(acc, tpk.N).Cmp(one) == 0 {
			t.Fatalf("subset %v: t shares interpolate to a (1+n)-power", set)
		}
	}
}

func TestTamperedShareFailsAndNamesParty(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, big.NewInt(5)), mustEnc(t, &tpk.PublicKey, big.NewInt(6)), mustEnc(t, &tpk.PublicKey, big.NewInt(7))}
	good, err := shares[2].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() *DecryptionShare {
		d := &DecryptionShare{Index: good.Index, Proof: &Proof{E: new(big.Int).Set(good.Proof.E), Z: new(big.Int).Set(good.Proof.Z)}}
		for _, v := range good.Values {
			d.Values = append(d.Values, new(big.Int).Set(v))
		}
		return d
	}
	type tc struct {
		name string
		mod  func(d *DecryptionShare)
		ctx  ProofContext
		cs   []*Ciphertext
	}
	other := mustEnc(t, &tpk.PublicKey, big.NewInt(5))
	cases := []tc{
		{"value times 2", func(d *DecryptionShare) { d.Values[1].Lsh(d.Values[1], 1); d.Values[1].Mod(d.Values[1], tpk.NS1) }, testCtx, cs},
		{"value times -1", func(d *DecryptionShare) { d.Values[0].Sub(tpk.NS1, d.Values[0]) }, testCtx, cs},
		{"value times (1+n)", func(d *DecryptionShare) { d.Values[2] = tpk.AddPlain(&Ciphertext{C: d.Values[2]}, one).C }, testCtx, cs},
		{"values swapped", func(d *DecryptionShare) { d.Values[0], d.Values[1] = d.Values[1], d.Values[0] }, testCtx, cs},
		{"z+1", func(d *DecryptionShare) { d.Proof.Z.Add(d.Proof.Z, one) }, testCtx, cs},
		{"e+1", func(d *DecryptionShare) { d.Proof.E.Add(d.Proof.E, one) }, testCtx, cs},
		{"dropped value", func(d *DecryptionShare) { d.Values = d.Values[:2] }, testCtx, cs},
		{"other round", func(d *DecryptionShare) {}, ProofContext{Job: "job-1", Phase: "sum", Round: 4}, cs},
		{"other attempt", func(d *DecryptionShare) {}, ProofContext{Job: "job-1", Phase: "sum", Round: 3, Attempt: 1}, cs},
		{"other job", func(d *DecryptionShare) {}, ProofContext{Job: "job-2", Phase: "sum", Round: 3}, cs},
		{"other phase", func(d *DecryptionShare) {}, ProofContext{Job: "job-1", Phase: "mean", Round: 3}, cs},
		{"other ciphertext", func(d *DecryptionShare) {}, testCtx, []*Ciphertext{other, cs[1], cs[2]}},
		{"value zero", func(d *DecryptionShare) { d.Values[0].SetInt64(0) }, testCtx, cs},
	}
	for _, c := range cases {
		d := clone()
		c.mod(d)
		err := tpk.VerifyShare(c.cs, d, c.ctx)
		if !errors.Is(err, ErrInvalidShare) || !strings.Contains(err.Error(), "party 3") {
			t.Errorf("%s: got %v, want ErrInvalidShare naming party 3", c.name, err)
		}
	}
	// A share claimed by another party fails and names the claimed party.
	d := clone()
	d.Index = 4
	if err := tpk.VerifyShare(cs, d, testCtx); !errors.Is(err, ErrInvalidShare) || !strings.Contains(err.Error(), "party 4") {
		t.Errorf("relabelled share: %v", err)
	}
	if err := tpk.VerifyShare(cs, good, testCtx); err != nil {
		t.Fatalf("good share rejected: %v", err)
	}
	// Combine's consistency check happens to catch a doubled value (its
	// component modulo n is wrong); see
	// TestCombineUnverifiedShareGivesWrongPlaintext for what it misses.
	all := shareAll(t, shares[:3], cs, testCtx)
	all[1].Values[0].Lsh(all[1].Values[0], 1)
	all[1].Values[0].Mod(all[1].Values[0], tpk.NS1)
	if _, err := tpk.Combine(cs, all); !errors.Is(err, ErrInvalidShare) {
		t.Errorf("Combine with a bad share: %v", err)
	}
}

// TestProofHidesShare applies to our proofs the estimator that recovers a
// share from niclabs/tcpaillier v0.0.7's proofs (whose blinder has about
// 262 bits):
// floor(z/e) = x + floor(ρ/e) ± 1 recovers x exactly when ρ is short (the
// tcpaillier flaw; demonstrated here with a 262-bit blinder), but with our
// blinder the estimation error is uniformly spread over about
// |ρ| - |e| = |n^(s+1)| + 128 bits, far more than x itself has, so the
// estimate carries no usable information about x.
func TestProofHidesShare(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	ks := shares[0]
	x := ks.Secret
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, big.NewInt(9))}
	estimate := func(p *Proof) *big.Int { return new(big.Int).Quo(p.Z, p.E) }

	// Control: the flawed blinder length leaks the share.
	bad, err := ks.decryptShare(rand.Reader, cs, testCtx, 262)
	if err != nil {
		t.Fatal(err)
	}
	// floor(z/e) = x + floor(ρ/e) with ρ/e < 2^262/e (a few bits): try
	// the candidates against the public verification key, as an attacker
	// would.
	est := estimate(bad.Proof)
	bound := new(big.Int).Lsh(one, 262)
	bound.Quo(bound, bad.Proof.E)
	if !bound.IsInt64() || bound.Int64() > 1<<20 {
		t.Skip("improbably small challenge")
	}
	recovered := false
	for k := int64(0); k <= bound.Int64() && !recovered; k++ {
		cand := new(big.Int).Sub(est, big.NewInt(k))
		if new(big.Int).Exp(tpk.V, cand, tpk.NS1).Cmp(tpk.VerificationKeys[0]) == 0 {
			recovered = cand.Cmp(x) == 0
		}
	}
	if !recovered {
		t.Fatal("control failed: a short blinder should leak the share")
	}

	// Ours: over many proofs, the error of the estimate is always much
	// larger than the share, and its top bits look uniform.
	const trials = 200
	xbits := x.BitLen()
	var highHalf, parity int
	for i := 0; i < trials; i++ {
		d, err := ks.DecryptShare(rand.Reader, cs, testCtx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tpk.VerifyShare(cs, d, testCtx); err != nil {
			t.Fatal(err)
		}
		est := estimate(d.Proof)
		diff := new(big.Int).Sub(est, x)
		if diff.BitLen() < xbits+64 {
			t.Fatalf("trial %d: estimate within 2^%d of the share (share has %d bits)", i, diff.BitLen(), xbits)
		}
		// (z - e·x)/2^|ρ| = ρ/2^|ρ| must be uniform in [0,1): count the
		// top bit of ρ as reconstructed by someone who knows x.
		rho := new(big.Int).Mul(d.Proof.E, x)
		rho.Sub(d.Proof.Z, rho)
		if rho.Bit(tpk.rhoBits()-1) == 1 {
			highHalf++
		}
		// And the estimate's parity says nothing about x's.
		if est.Bit(0) == x.Bit(0) {
			parity++
		}
	}
	// Binomial(200, 1/2): 5 sigma is about ±35.
	if highHalf < 65 || highHalf > 135 {
		t.Fatalf("blinder top bit set %d/%d times", highHalf, trials)
	}
	// The low bit of the estimate agrees with the share's only by chance.
	if parity < 65 || parity > 135 {
		t.Fatalf("estimate parity matched the share's %d/%d times", parity, trials)
	}
}

func TestBatchProofLarge(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	ms := make([]*big.Int, 20)
	for i := range ms {
		ms[i] = big.NewInt(int64(i * 1000))
	}
	cs, _ := tpk.EncryptMany(rand.Reader, ms)
	ds := shareAll(t, shares[1:4], cs, testCtx)
	for _, d := range ds {
		if err := tpk.VerifyShare(cs, d, testCtx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tpk.Combine(cs, ds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ms {
		if got[i].Cmp(ms[i]) != 0 {
			t.Fatal(i)
		}
	}
	// One bad value among 20 is caught.
	ds[0].Values[17].Mul(ds[0].Values[17], ds[0].Values[3])
	ds[0].Values[17].Mod(ds[0].Values[17], tpk.NS1)
	if err := tpk.VerifyShare(cs, ds[0], testCtx); !errors.Is(err, ErrInvalidShare) {
		t.Fatal("bad value in batch accepted")
	}
}

func TestThresholdDJ(t *testing.T) {
	// s = 2, N = 4, t = 1, and a 1-of-1 key.
	for _, c := range []struct{ s, n, th int }{{2, 4, 1}, {1, 1, 0}, {3, 3, 2}} {
		tpk, shares, err := DealThresholdDJ(rand.Reader, testBits, c.s, c.n, c.th)
		if err != nil {
			t.Fatal(err)
		}
		m := randPlain(t, &tpk.PublicKey)
		cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m)}
		ds := shareAll(t, shares, cs, testCtx)
		for _, d := range ds {
			if err := tpk.VerifyShare(cs, d, testCtx); err != nil {
				t.Fatal(err)
			}
		}
		got, err := tpk.Combine(cs, ds[len(ds)-c.th-1:])
		if err != nil || got[0].Cmp(m) != 0 {
			t.Fatalf("%+v: %v %v", c, got, err)
		}
	}
}

func TestDealRejects(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {3, 3}, {2, -1}, {MaxParties + 1, 1}} {
		if _, _, err := DealThreshold(rand.Reader, testBits, c[0], c[1]); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("parties=%d threshold=%d accepted", c[0], c[1])
		}
	}
}

func TestLargeParties(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	// N = 64, t = 31 (honest majority): Δ = 64! has 296 bits.
	tpk, shares, err := DealThreshold(rand.Reader, testBits, 64, 31)
	if err != nil {
		t.Fatal(err)
	}
	m := big.NewInt(777)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m)}
	var ds []*DecryptionShare
	for _, i := range []int{63, 1, 40, 7, 20, 33, 50, 11, 2, 3, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28} {
		d, err := shares[i].DecryptShare(rand.Reader, cs, testCtx)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if err := tpk.VerifyShare(cs, ds[0], testCtx); err != nil {
		t.Fatal(err)
	}
	got, err := tpk.Combine(cs, ds)
	if err != nil || got[0].Cmp(m) != 0 {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := tpk.Combine(cs, ds[:31]); err == nil {
		t.Fatal("31 shares decrypted with t = 31")
	}
}

func TestCombineRejectsMalformedValues(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, big.NewInt(11))}
	for _, bad := range []*big.Int{nil, big.NewInt(0), new(big.Int).Set(tpk.NS1), new(big.Int).Set(tpk.N), new(big.Int).Lsh(tpk.N, 1)} {
		ds := shareAll(t, shares[:3], cs, testCtx)
		ds[1].Values[0] = bad
		if _, err := tpk.Combine(cs, ds); err == nil {
			t.Errorf("Combine accepted share value %v", bad)
		}
	}
}

// TestProverRefusesSecretAboveBound: a secret congruent to the real one
// modulo the order of the squares gives the same share values, so its proof
// verifies; but above n^(s+1)/4 the blinder no longer hides it. The prover
// used to accept it.
func TestProverRefusesSecretAboveBound(t *testing.T) {
	p, err := GenerateSafePrime(t.Context(), rand.Reader, testBits/2)
	if err != nil {
		t.Fatal(err)
	}
	var q *big.Int
	for q == nil || q.Cmp(p) == 0 {
		if q, err = GenerateSafePrime(t.Context(), rand.Reader, testBits/2); err != nil {
			t.Fatal(err)
		}
	}
	tpk, shares, err := DealThresholdFromPrimes(rand.Reader, p, q, 1, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Order of the squares: n^s·n' with n' = p'q'.
	order := new(big.Int).Mul(new(big.Int).Rsh(p, 1), new(big.Int).Rsh(q, 1))
	order.Mul(order, tpk.NS)
	big4 := new(big.Int).Add(shares[0].Secret, new(big.Int).Lsh(order, 2)) // ≥ n^(s+1)/4
	if big4.Cmp(new(big.Int).Rsh(tpk.NS1, 2)) < 0 {
		t.Fatal("test secret below the bound")
	}
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, big.NewInt(3))}
	ks := &KeyShare{Index: 1, Secret: big4, Public: tpk}
	// Same share values as the honest secret.
	v1, _ := shares[0].ShareValues(cs)
	if got := new(big.Int).Exp(cs[0].C, new(big.Int).Lsh(big4, 1), tpk.NS1); got.Cmp(v1[0]) != 0 {
		t.Fatal("congruent secret gives other share values")
	}
	if _, err := ks.DecryptShare(rand.Reader, cs, testCtx); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("DecryptShare with a secret above n^(s+1)/4: %v", err)
	}
	if _, err := ks.ProveShare(rand.Reader, cs, v1, testCtx); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("ProveShare with a secret above n^(s+1)/4: %v", err)
	}
	// Just below the bound is accepted by the prover (the proof will not
	// verify, since the secret is wrong, but that is the verifier's job).
	ks.Secret = new(big.Int).Sub(new(big.Int).Rsh(tpk.NS1, 2), one)
	if _, err := ks.ProveShare(rand.Reader, cs, v1, testCtx); err != nil {
		t.Errorf("secret n^(s+1)/4 − 1 refused: %v", err)
	}
}

// TestCombineUnverifiedShareGivesWrongPlaintext pins the limit documented
// on Combine: docs/paillier.md used to claim that Combine's consistency
// check turns an unverified bad share into an error, but a share value
// times (1+n) changes only the ⟨1+n⟩ component, passes the check and
// yields a wrong plaintext. VerifyShare rejects it.
func TestCombineUnverifiedShareGivesWrongPlaintext(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	m := big.NewInt(1000)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m)}
	ds := shareAll(t, shares[:3], cs, testCtx)
	ds[1].Values[0] = tpk.AddPlain(&Ciphertext{C: ds[1].Values[0]}, one).C // ×(1+n)
	got, err := tpk.Combine(cs, ds)
	if err != nil {
		t.Fatalf("Combine now detects the (1+n) shift (%v): update its documentation", err)
	}
	if got[0].Cmp(m) == 0 {
		t.Fatal("the shifted share did not change the plaintext")
	}
	if err := tpk.VerifyShare(cs, ds[1], testCtx); !errors.Is(err, ErrInvalidShare) {
		t.Fatalf("VerifyShare accepted the shifted share: %v", err)
	}
}
