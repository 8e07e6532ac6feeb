package lattice

import (
	"math"
	"math/big"
	"math/bits"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// TestFreshEncryption: a chunk encrypted by freshEncrypter is Lattigo's
// public-key encryption of bgv.Encoder.Encode's plaintext, coefficient for
// coefficient, for the same u, e0 and e1 (drawn here from a stream seeded
// alike, in the same order: c0 = NTT(u)·pk0 + NTT(e0) + Encode(m), c1 =
// NTT(u)·pk1 + NTT(e1)); and, with a secret key, its noise c0 + c1·s −
// Encode(m) is nonzero, differs between two encryptions and stays within
// the fresh bound the noise budget assumes (aggregateNoise of one).
func TestFreshEncryption(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	l, err := NewNodeBinLayout(p, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows := l.Rows() + 5 // the second chunk part full
	rng := mrand.New(mrand.NewPCG(7, 8))
	g, h := make([]int64, 2*rows), make([]int64, 2*rows)
	for i := range g {
		g[i], h[i] = rng.Int64N(1<<40)-1<<39, rng.Int64N(1<<40)
	}
	seed, tseed := [32]byte{1, 2, 3}, [32]byte{4, 5, 6}
	f, err := newFreshEncrypterFrom(pk, seed, mrand.NewChaCha8(tseed))
	if err != nil {
		t.Fatal(err)
	}
	rq := f.rq
	// u from a second encrypter's ternary on the same stream
	// (TestFreshTernary checks its distribution), e0 and e1 from the
	// errors' sampler on the same stream as f's (TestErrorSampler checks
	// it against Lattigo's).
	xs, err := newFreshEncrypterFrom(pk, [32]byte{}, mrand.NewChaCha8(tseed))
	if err != nil {
		t.Fatal(err)
	}
	xe, err := newErrorSampler(seed, p.bgv.Xe().(ring.DiscreteGaussian), rq.ModuliChain())
	if err != nil {
		t.Fatal(err)
	}
	ecd := bgv.NewEncoder(p.bgv)
	var noise []ring.Poly
	for k := range l.Chunks(rows) {
		ct, err := f.encrypt(f.placed(l, g, h, k))
		if err != nil {
			t.Fatal(err)
		}
		pt := bgv.NewPlaintext(p.bgv, p.bgv.MaxLevel())
		pt.IsBatched = false
		if err := ecd.Encode(l.place(g, h, k), pt); err != nil {
			t.Fatal(err)
		}
		u, e0, e1, c0, c1 := rq.NewPoly(), rq.NewPoly(), rq.NewPoly(), rq.NewPoly(), rq.NewPoly()
		xs.ternary(u)
		rq.NTT(u, u)
		xe.read(e0)
		rq.NTT(e0, e0)
		xe.read(e1)
		rq.NTT(e1, e1)
		rq.MulCoeffsMontgomery(u, pk.key.Value[0].Q, c0)
		rq.Add(c0, e0, c0)
		rq.Add(c0, pt.Value, c0)
		rq.MulCoeffsMontgomery(u, pk.key.Value[1].Q, c1)
		rq.Add(c1, e1, c1)
		if !ct.Value[0].Equal(&c0) || !ct.Value[1].Equal(&c1) {
			t.Fatalf("chunk %d: not Lattigo's encryption of Encode's plaintext", k)
		}
		if !ct.IsNTT || ct.IsBatched || ct.Level() != p.bgv.MaxLevel() {
			t.Fatalf("chunk %d: metadata not EncryptPairs'", k)
		}
		// The noise: c0 + c1·s − Encode(m), out of the NTT domain.
		e := rq.NewPoly()
		rq.MulCoeffsMontgomery(ct.Value[1], sk.Value.Q, e)
		rq.Add(e, ct.Value[0], e)
		rq.Sub(e, pt.Value, e)
		rq.INTT(e, e)
		noise = append(noise, e)
	}
	bound := p.aggregateNoise(1, 1)
	for k, e := range noise {
		if k > 0 && e.Equal(&noise[0]) {
			t.Fatalf("chunks 0 and %d have the same noise", k)
		}
		zero := true
		for _, c := range e.Coeffs[0] {
			v := new(big.Int).SetUint64(c)
			if q := rq.SubRings[0].Modulus; c > q/2 {
				v.SetUint64(q - c)
			}
			if v.Cmp(bound) > 0 {
				t.Fatalf("chunk %d: a noise coefficient of %v past the fresh bound %v", k, v, bound)
			}
			zero = zero && c == 0
		}
		if zero {
			t.Fatalf("chunk %d: no noise", k)
		}
	}
}

// TestFreshTernary: u's coefficients are 0, 1 or −1, the same residue
// modulo every prime, each about a third of the time (within five
// standard deviations over 40 polynomials), and two draws differ.
func TestFreshTernary(t *testing.T) {
	t.Parallel()
	pk, _ := binKeys(t)
	f, err := newFreshEncrypter(pk)
	if err != nil {
		t.Fatal(err)
	}
	u, prev := f.rq.NewPoly(), f.rq.NewPoly()
	var counts [3]int
	const polys = 40
	for k := range polys {
		f.ternary(u)
		if k > 0 && u.Equal(&prev) {
			t.Fatal("two draws of u alike")
		}
		prev.Copy(u)
		for i, c := range u.Coeffs[0] {
			v := slices.Index(f.lut[0][:], c)
			if v < 0 {
				t.Fatalf("coefficient %d: %d, not ternary", i, c)
			}
			for j := range f.lut {
				if u.Coeffs[j][i] != f.lut[j][v] {
					t.Fatalf("coefficient %d: other values modulo other primes", i)
				}
			}
			counts[v]++
		}
	}
	n := float64(polys * f.rq.N())
	sd := math.Sqrt(n * 2 / 9)
	for v, c := range counts {
		if math.Abs(float64(c)-n/3) > 5*sd {
			t.Fatalf("value %d drawn %d times of %.0f, want about a third", []int{0, 1, -1}[v], c, n)
		}
	}
}

// TestMaskFromPool: a BinSummer given a pool (UseZeros) takes each mask's
// encryption of zero from it while it has one ready, and the sums stay
// exact and masked apart; a pool of another key is refused.
func TestMaskFromPool(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins = 4
	l, err := NewBinLayout(p, bins)
	if err != nil {
		t.Fatal(err)
	}
	rows := l.Rows() + 3
	rng := mrand.New(mrand.NewPCG(9, 10))
	g, h, terms, wantG, wantH := randomTerms(rng, rows, bins)
	cts := encryptedPairs(t, pk, l, g, h)
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := binKeys(t)
	if err := s.UseZeros(newZeroPool(t, other, 1)); err == nil {
		t.Fatal("a zero pool of another key accepted")
	}
	pool := newZeroPool(t, pk, 2)
	waitZeros(t, pool, 2)
	pool.Pause()
	if err := s.UseZeros(pool); err != nil {
		t.Fatal(err)
	}
	out, err := s.SumTermsEach([][]*rlwe.Ciphertext{cts, cts}, terms, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st := pool.Stats(); st.Taken < 2 {
		t.Fatalf("%d masks' encryptions of zero taken from the pool, want 2", st.Taken)
	}
	var masked [][]uint64
	for _, o := range out {
		c := decryptCoeffs(t, p, sk, o)
		gotG, gotH, err := l.Read(c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gotG, wantG) || !slices.Equal(gotH, wantH) {
			t.Fatalf("sums masked from the pool (%v, %v), want (%v, %v)", gotG, gotH, wantG, wantH)
		}
		masked = append(masked, c[2*bins:])
	}
	if slices.Equal(masked[0], masked[1]) {
		t.Fatal("two sums of the same rows masked alike")
	}
}

// TestSumLazyProducts: lazyProducts is the most unreduced products a sum
// below each prime can take without passing 2^64, and a sum over more
// chunks than that (reduced between runs of lazy products) is exact.
func TestSumLazyProducts(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins = 32
	l, err := NewBinLayout(p, bins)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	k := lazyProducts(s.rq)
	for _, q := range s.rq.ModuliChain() {
		hi, lo := bits.Mul64(uint64(2*k+1), q)
		if hi != 0 || lo < q {
			t.Fatalf("%d lazy products past 2^64 modulo %d", k, q)
		}
		if hi, _ := bits.Mul64(uint64(2*k+3), q); hi == 0 && q == slices.Max(s.rq.ModuliChain()) {
			t.Fatalf("%d lazy products: one more fits modulo %d", k, q)
		}
	}
	rows := (3*k+2)*l.Rows() - 5
	rng := mrand.New(mrand.NewPCG(11, 12))
	g, h, terms, wantG, wantH := randomTerms(rng, rows, bins)
	cts := encryptedPairs(t, pk, l, g, h)
	gotG, gotH := sumTermsRead(t, s, cts, terms, l, p, sk)
	if !slices.Equal(gotG, wantG) || !slices.Equal(gotH, wantH) {
		t.Fatalf("sums over %d chunks (%v, %v), want (%v, %v)", len(cts), gotG, gotH, wantG, wantH)
	}
}
