package bicluster

import (
	"crypto/rand"
	"math"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/paillier/paillertest"
	"github.com/cohortdm/cohort/wire"
)

// pairKey deals a 2-of-3 threshold key of 1024 bits from fixture primes.
func pairKey(t testing.TB) (*paillier.ThresholdPublicKey, []*paillier.KeyShare) {
	t.Helper()
	p, q, err := paillertest.SafePrimes(512)
	if err != nil {
		t.Fatal(err)
	}
	pk, shares, err := paillier.DealThresholdFromPrimes(rand.Reader, p, q, 1, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	return pk, shares
}

// decryptPacked threshold-decrypts cts with shares 1 and 3 (verified).
func decryptPacked(t testing.TB, pk *paillier.ThresholdPublicKey, shares []*paillier.KeyShare, cts []*paillier.Ciphertext) []*big.Int {
	t.Helper()
	ctx := paillier.ProofContext{Job: "j", Phase: "test"}
	var got []*paillier.DecryptionShare
	for _, ks := range []*paillier.KeyShare{shares[0], shares[2]} {
		sh, err := ks.DecryptShare(rand.Reader, cts, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := pk.VerifyShare(cts, sh, ctx); err != nil {
			t.Fatal(err)
		}
		got = append(got, sh)
	}
	plain, err := pk.Combine(cts, got)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}

// TestPairTestMatchesPlainSimilar runs the pair test's rounds (A
// encrypts, B evaluates and blinds, A blinds and packs, threshold
// decryption, signs) on representatives drawn around the β boundary, some
// negative, and checks every decided bit against PlainSimilar on the same
// representatives: the corrected D0 form Σv² − 2Σvm + Σm² (the printed
// signs give v² − 2vm − m², and fail here) and the blinding keep the sign.
func TestPairTestMatchesPlainSimilar(t *testing.T) {
	t.Parallel()
	pk, shares := pairKey(t)
	const beta, cols = 0.6, 12
	pc, err := newPairCode(&pk.PublicKey, 16, 62, beta, cols)
	if err != nil {
		t.Fatal(err)
	}
	if pc.perCt < 2 {
		t.Fatalf("%d results per 1024-bit plaintext: packing is not exercised", pc.perCt)
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	var zs []*paillier.Ciphertext
	var want []bool
	yes := 0
	for range 24 {
		u := 1 + rng.IntN(cols)
		colsU := make([]int, u)
		for i := range colsU {
			colsU[i] = i
		}
		v, m := make([]float64, cols), make([]float64, cols)
		scale := math.Exp2(float64(rng.IntN(20)) - 5)
		for j := range u {
			v[j] = scale * (0.5 + rng.Float64())
			// m differs from v by a relative error spread around β.
			m[j] = v[j] * (1 + (rng.Float64()*2-1)*beta*1.6)
			if rng.IntN(8) == 0 {
				m[j] = -m[j]
			}
		}
		locals := []Local{{Party: 0, Cols: colsU, Rep: v}, {Party: 1, Cols: colsU, Rep: m}}
		ok, err := PlainSimilar(locals, beta)(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ok)
		if ok {
			yes++
		}
		V, err := pc.encode(v, colsU)
		if err != nil {
			t.Fatal(err)
		}
		M, err := pc.encode(m, colsU)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := pairEncrypt(&pk.PublicKey, rand.Reader, V)
		if err != nil {
			t.Fatal(err)
		}
		y, err := pc.pairEvaluate(&pk.PublicKey, rand.Reader, enc, M)
		if err != nil {
			t.Fatal(err)
		}
		z, err := pairBlind(&pk.PublicKey, rand.Reader, y[:])
		if err != nil {
			t.Fatal(err)
		}
		zs = append(zs, z...)
	}
	if yes == 0 || yes == len(want) {
		t.Fatalf("%d of %d pairs similar: the boundary is not exercised", yes, len(want))
	}
	packed := pc.pairPack(&pk.PublicKey, zs)
	if len(packed) != pc.packedCount(len(zs)) {
		t.Fatalf("%d packed ciphertexts, want %d", len(packed), pc.packedCount(len(zs)))
	}
	signs, err := pc.pairSigns(decryptPacked(t, pk, shares, packed), len(zs))
	if err != nil {
		t.Fatal(err)
	}
	got := pairSimilar(signs)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d: encrypted test says %v, PlainSimilar %v", i, got[i], want[i])
		}
	}
}

// TestPairCodeBounds: a representative beyond 2^(value_bits−frac_bits)
// is refused, not wrapped; a key too small for one slot is refused; a
// decrypted plaintext beyond its slots is an error.
func TestPairCodeBounds(t *testing.T) {
	t.Parallel()
	pk, _ := pairKey(t)
	pc, err := newPairCode(&pk.PublicKey, 16, 62, 0.6, 50)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.encode([]float64{math.Exp2(47)}, []int{0}); err == nil {
		t.Error("2^47 at 16 fractional bits encoded within 62 bits")
	}
	if _, err := pc.encode([]float64{math.Exp2(45)}, []int{0}); err != nil {
		t.Errorf("2^45: %v", err)
	}
	if _, err := newPairCode(&pk.PublicKey, 16, 600, 0.6, 50); err == nil {
		t.Error("a slot beyond the plaintext accepted")
	}
	big1 := new(big.Int).Lsh(big.NewInt(1), uint(pc.slotBits*pc.perCt))
	if _, err := pc.pairSigns([]*big.Int{big1}, pc.perCt); err == nil {
		t.Error("a plaintext beyond its slots read as signs")
	}
}

// FuzzPairMessages: any body a peer sends as representatives, blinded or
// packed values decodes to exactly the expected count or fails; it never
// panics. (The decryption's requests and shares are secureagg's, fuzzed
// there.)
func FuzzPairMessages(f *testing.F) {
	p, q, err := paillertest.SafePrimes(512)
	if err != nil {
		f.Fatal(err)
	}
	pk, _, err := paillier.DealThresholdFromPrimes(rand.Reader, p, q, 1, 3, 1)
	if err != nil {
		f.Fatal(err)
	}
	c, err := pk.Encrypt(rand.Reader, big.NewInt(7))
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := pk.MarshalCiphertexts([]*paillier.Ciphertext{c, c})
	good, _ := wire.Marshal(ctBody{C: raw})
	f.Add(good)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		if cts, err := decodeCts(b, &pk.PublicKey, 2); err == nil && len(cts) != 2 {
			t.Fatalf("%d ciphertexts decoded, 2 expected", len(cts))
		}
	})
}

// BenchmarkPairTestStages times each stage of the pair test at 2048 bits
// on the 50,000-element benchmark's shape: 30 pairs of 10 columns over
// four parties (6 per implanted bicluster), 60 results; cpu-ms/op is the
// process's CPU time, which a loaded machine inflates less than wall time.
//
//	go test ./bicluster/ -run '^$' -bench PairTestStages
func BenchmarkPairTestStages(b *testing.B) {
	p, q, err := paillertest.SafePrimes(1024)
	if err != nil {
		b.Fatal(err)
	}
	pk, shares, err := paillier.DealThresholdFromPrimes(rand.Reader, p, q, 1, 4, 1)
	if err != nil {
		b.Fatal(err)
	}
	pk.Precompute()
	pc, err := newPairCode(&pk.PublicKey, 16, 62, 0.6, 50)
	if err != nil {
		b.Fatal(err)
	}
	const pairs, u = 30, 10
	rep := make([]float64, u)
	cols := make([]int, u)
	for j := range rep {
		rep[j], cols[j] = 0.9+float64(j)/100, j
	}
	v, _ := pc.encode(rep, cols)
	enc, err := pairEncrypt(&pk.PublicKey, rand.Reader, v)
	if err != nil {
		b.Fatal(err)
	}
	var ys, zs []*paillier.Ciphertext
	b.Run("encrypt-12", func(b *testing.B) {
		cpu0 := procCPU()
		defer func() { b.ReportMetric(float64(procCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
		for range b.N {
			if _, err := pairEncrypt(&pk.PublicKey, rand.Reader, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("evaluate-30", func(b *testing.B) {
		cpu0 := procCPU()
		defer func() { b.ReportMetric(float64(procCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
		for range b.N {
			ys = ys[:0]
			if err := forEach(pairs, func(int) error { _, err := pc.pairEvaluate(&pk.PublicKey, rand.Reader, enc, v); return err }); err != nil {
				b.Fatal(err)
			}
		}
	})
	y, _ := pc.pairEvaluate(&pk.PublicKey, rand.Reader, enc, v)
	for range pairs {
		ys = append(ys, y[0], y[1])
	}
	b.Run("blind-60", func(b *testing.B) {
		cpu0 := procCPU()
		defer func() { b.ReportMetric(float64(procCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
		for range b.N {
			if zs, err = pairBlind(&pk.PublicKey, rand.Reader, ys); err != nil {
				b.Fatal(err)
			}
		}
	})
	var packed []*paillier.Ciphertext
	b.Run("pack-60", func(b *testing.B) {
		cpu0 := procCPU()
		defer func() { b.ReportMetric(float64(procCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
		for range b.N {
			packed = pc.pairPack(&pk.PublicKey, zs)
		}
	})
	b.Logf("%d packed ciphertexts, %d results each", len(packed), pc.perCt)
	ctx := paillier.ProofContext{Job: "j"}
	var sh *paillier.DecryptionShare
	b.Run("share", func(b *testing.B) {
		cpu0 := procCPU()
		defer func() { b.ReportMetric(float64(procCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
		for range b.N {
			if sh, err = shares[1].DecryptShare(rand.Reader, packed, ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify", func(b *testing.B) {
		cpu0 := procCPU()
		defer func() { b.ReportMetric(float64(procCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
		for range b.N {
			if err := pk.VerifyShare(packed, sh, ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
