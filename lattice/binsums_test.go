package lattice

import (
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// binKeys is a single-party key pair under the package's parameters, with
// its secret at hand to decrypt in the test (a consortium's sums are
// decrypted jointly; what a decryption shows is the same).
func binKeys(tb testing.TB) (*PublicKey, *rlwe.SecretKey) {
	tb.Helper()
	p := params(tb)
	sk, pk := rlwe.NewKeyGenerator(p.bgv).GenKeyPairNew()
	key, err := newPublicKey(p, names(3), 2, pk)
	if err != nil {
		tb.Fatal(err)
	}
	return key, sk
}

// randomTerms draws rows gradients (signed, under 2^29) and hessians
// (under 2^30) from rng, one term of weight 1 per row in a bin drawn from
// rng, and returns them with each bin's sums.
func randomTerms(rng *mrand.Rand, rows, bins int) (g, h []int64, terms []BinTerm, wantG, wantH []int64) {
	g, h = make([]int64, rows), make([]int64, rows)
	wantG, wantH = make([]int64, bins), make([]int64, bins)
	for r := range rows {
		g[r], h[r] = rng.Int64N(1<<30)-1<<29, rng.Int64N(1<<30)
		b := rng.IntN(bins)
		terms = append(terms, BinTerm{Row: r, Bin: b, Weight: 1})
		wantG[b] += g[r]
		wantH[b] += h[r]
	}
	return g, h, terms, wantG, wantH
}

// encryptedPairs encrypts the rows' gradient and hessian pairs g, h in
// layout l under pk, each ciphertext fresh.
func encryptedPairs(tb testing.TB, pk *PublicKey, l *BinLayout, g, h []int64) []*rlwe.Ciphertext {
	tb.Helper()
	enc, err := NewEncryptor(pk)
	if err != nil {
		tb.Fatal(err)
	}
	cts, err := enc.EncryptPairs(l, g, h)
	if err != nil {
		tb.Fatal(err)
	}
	return cts
}

// sumTermsRead sums terms over cts with s, decrypts the sum with sk and
// reads its gradient and hessian sums through l.
func sumTermsRead(tb testing.TB, s *BinSummer, cts []*rlwe.Ciphertext, terms []BinTerm, l *BinLayout, p Params, sk *rlwe.SecretKey) (g, h []int64) {
	tb.Helper()
	out, err := s.SumTerms(cts, terms)
	if err != nil {
		tb.Fatal(err)
	}
	g, h, err = l.Read(decryptCoeffs(tb, p, sk, out))
	if err != nil {
		tb.Fatal(err)
	}
	return g, h
}

func decryptCoeffs(tb testing.TB, p Params, sk *rlwe.SecretKey, ct *rlwe.Ciphertext) []uint64 {
	tb.Helper()
	pt := bgv.NewPlaintext(p.bgv, ct.Level())
	pt.IsBatched = false
	rlwe.NewDecryptor(p.bgv, sk).Decrypt(ct, pt)
	out := make([]uint64, p.Slots())
	if err := bgv.NewEncoder(p.bgv).Decode(pt, out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestBinSums: the masked product holds every bin's gradient and hessian
// sum over the counted rows, across chunks, with weights, negative values
// and rows left out; every other coefficient is masked (uniform modulo T,
// and different between two sums of the same rows).
func TestBinSums(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins = 32
	l, err := NewBinLayout(p, bins)
	if err != nil {
		t.Fatal(err)
	}
	rows := 2*l.Rows() + 17 // three chunks, the last partial
	rng := mrand.New(mrand.NewPCG(1, 2))
	g, h, bin, w := make([]int64, rows), make([]int64, rows), make([]int, rows), make([]uint64, rows)
	for i := range rows {
		g[i], h[i] = rng.Int64N(1<<40)-1<<39, rng.Int64N(1<<40)
		bin[i], w[i] = rng.IntN(bins+1)-1, uint64(rng.IntN(4)) // −1: not counted; weight 0 too
	}
	wantG, wantH := make([]int64, bins), make([]int64, bins)
	for i := range rows {
		if bin[i] >= 0 {
			wantG[bin[i]] += int64(w[i]) * g[i]
			wantH[bin[i]] += int64(w[i]) * h[i]
		}
	}
	cts := encryptedPairs(t, pk, l, g, h)
	if len(cts) != 3 {
		t.Fatalf("%d ciphertexts for %d rows of %d a chunk", len(cts), rows, l.Rows())
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	var first []uint64
	for run := range 2 {
		out, err := s.Sum(cts, bin, w)
		if err != nil {
			t.Fatal(err)
		}
		coeffs := decryptCoeffs(t, p, sk, out)
		gotG, gotH, err := l.Read(coeffs)
		if err != nil {
			t.Fatal(err)
		}
		for b := range bins {
			if gotG[b] != wantG[b] || gotH[b] != wantH[b] {
				t.Fatalf("run %d, bin %d: sums (%d, %d), want (%d, %d)", run, b, gotG[b], gotH[b], wantG[b], wantH[b])
			}
		}
		checkUniformMask(t, coeffs[2*bins:], p.PlaintextModulus())
		if run == 0 {
			first = coeffs
			continue
		}
		same := 0
		for i := 2 * bins; i < len(coeffs); i++ {
			if coeffs[i] == first[i] {
				same++
			}
		}
		if same > 2 {
			t.Fatalf("%d masked coefficients equal between two sums of the same rows", same)
		}
	}
}

// TestBinSumsRefuses: a layout without room for two rows, rows beyond the
// ciphertexts, and weights whose noise a decryption share would not hide.
func TestBinSumsRefuses(t *testing.T) {
	t.Parallel()
	p := params(t)
	if _, err := NewBinLayout(p, p.Slots()/2); err == nil {
		t.Fatal("a layout of one row a ciphertext")
	}
	pk, _ := binKeys(t)
	l, err := NewBinLayout(p, 4)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := NewEncryptor(pk)
	cts, err := enc.EncryptPairs(l, []int64{1, 2}, []int64{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sum(cts, make([]int, l.Rows()+1), nil); err == nil {
		t.Fatal("more rows than the ciphertexts hold")
	}
	if _, err := s.Sum(cts, []int{0, 1}, []uint64{1 << 62, 1 << 62}); err == nil {
		t.Fatal("weights beyond the smudging bound")
	}
}

// BenchmarkBinSums times the lattice path's pieces for boosting at
// default_credit's size (24,000 join rows, 32 bins): the class holder's
// encryption of every row's gradient and hessian (once per tree), one
// column's masked per-bin sums over every row (once per column and tree
// level when a level's nodes are summed together), and the mask alone.
func BenchmarkBinSums(b *testing.B) {
	p := params(b)
	pk, _ := binKeys(b)
	const rows, bins = 24000, 32
	l, err := NewBinLayout(p, bins)
	if err != nil {
		b.Fatal(err)
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	g, h, bin := make([]int64, rows), make([]int64, rows), make([]int, rows)
	for i := range rows {
		g[i], h[i], bin[i] = rng.Int64N(1<<30), rng.Int64N(1<<30), rng.IntN(bins)
	}
	enc, err := NewEncryptor(pk)
	if err != nil {
		b.Fatal(err)
	}
	cts, err := enc.EncryptPairs(l, g, h)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encrypt-24000-rows", func(b *testing.B) {
		for b.Loop() {
			if _, err := enc.EncryptPairs(l, g, h); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(cts)), "ciphertexts")
	})
	b.Run("sum-one-column-24000-rows", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Sum(cts, bin, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sum-one-chunk", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Sum(cts[:1], bin[:l.Rows()], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBinSumsNodesTerms: with several nodes a slot and several terms a row
// (a row of the class holder's matching rows of the summing party's in
// several bins, one bin twice), every node's and bin's sums are exact
// across chunks, including a row whose node values are all zero and rows
// with no term.
func TestBinSumsNodesTerms(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins, nodes = 8, 5
	l, err := NewNodeBinLayout(p, bins, nodes)
	if err != nil {
		t.Fatal(err)
	}
	rows := 2*l.Rows() + 9
	rng := mrand.New(mrand.NewPCG(3, 4))
	g, h := make([]int64, rows*nodes), make([]int64, rows*nodes)
	for i := range g {
		g[i], h[i] = rng.Int64N(1<<40)-1<<39, rng.Int64N(1<<40)
	}
	var terms []BinTerm
	wantG, wantH := make([]int64, nodes*bins), make([]int64, nodes*bins)
	for r := range rows {
		for range rng.IntN(4) { // 0 to 3 terms, bins may repeat
			tm := BinTerm{Row: r, Bin: rng.IntN(bins), Weight: uint64(rng.IntN(5))}
			terms = append(terms, tm)
			for k := range nodes {
				wantG[k*bins+tm.Bin] += int64(tm.Weight) * g[r*nodes+k]
				wantH[k*bins+tm.Bin] += int64(tm.Weight) * h[r*nodes+k]
			}
		}
	}
	cts := encryptedPairs(t, pk, l, g, h)
	if len(cts) != 3 {
		t.Fatalf("%d ciphertexts for %d rows of %d a chunk", len(cts), rows, l.Rows())
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	gotG, gotH := sumTermsRead(t, s, cts, terms, l, p, sk)
	for i := range wantG {
		if gotG[i] != wantG[i] || gotH[i] != wantH[i] {
			t.Fatalf("node %d bin %d: sums (%d, %d), want (%d, %d)", i/bins, i%bins, gotG[i], gotH[i], wantG[i], wantH[i])
		}
	}
	if _, err := s.SumTerms(cts, []BinTerm{{Row: 1}, {Row: 0}}); err == nil {
		t.Fatal("terms out of row order")
	}
	if _, err := NewNodeBinLayout(p, bins, MaxNodes(p, bins)+1); err == nil {
		t.Fatal("a layout of more nodes than fit two rows a ciphertext")
	}
}

// TestEncryptPairsFromPool: an Encryptor given a node's pool takes the
// class holder's chunk encryptions from it while it holds some and
// computes the rest (the pool's counts: each chunk one or the other), the
// sums read from the pooled ciphertexts are exact, and no ciphertext's c1
// repeats (an encryption of zero masking two chunks would).
func TestEncryptPairsFromPool(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins, size = 4, 3
	l, err := NewNodeBinLayout(p, bins, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := 4*l.Rows() + 1 // five chunks: three from the pool, two computed
	pool := newZeroPool(t, pk, size)
	waitZeros(t, pool, size)
	pool.Pause() // the counts below are EncryptPairs' alone
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.UseZeros(pool); err != nil {
		t.Fatal(err)
	}
	rng := mrand.New(mrand.NewPCG(5, 6))
	g, h, terms, wantG, wantH := randomTerms(rng, rows, bins)
	cts, err := enc.EncryptPairs(l, g, h)
	if err != nil {
		t.Fatal(err)
	}
	// A paused filler still delivers the encryption of zero it had made
	// when the pool was full: one more may be taken.
	if st := pool.Stats(); st.Taken < size || st.Taken+st.Computed != int64(len(cts)) {
		t.Fatalf("%d chunks: %d taken from the pool, %d computed; want at least %d taken, %d in all",
			len(cts), st.Taken, st.Computed, size, len(cts))
	}
	for i := range cts {
		for j := range i {
			if slices.Equal(cts[i].Value[1].Coeffs[0], cts[j].Value[1].Coeffs[0]) {
				t.Fatalf("chunks %d and %d share c1", j, i)
			}
		}
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	gotG, gotH := sumTermsRead(t, s, cts, terms, l, p, sk)
	if !slices.Equal(gotG, wantG) || !slices.Equal(gotH, wantH) {
		t.Fatalf("sums from pooled encryptions (%v, %v), want (%v, %v)", gotG, gotH, wantG, wantH)
	}
}

// TestSumTermsEach: one call over several vectors of the same rows gives
// each vector's exact bin sums (as SumTerms would, one by one), each
// masked apart (two outputs over equal vectors differ), keeping one W a
// chunk for all of them; and it refuses vectors of different lengths.
func TestSumTermsEach(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins, sets = 8, 3
	l, err := NewNodeBinLayout(p, bins, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := l.Rows() + 7 // two chunks
	rng := mrand.New(mrand.NewPCG(9, 10))
	var terms []BinTerm
	for r := range rows {
		for range rng.IntN(3) {
			terms = append(terms, BinTerm{Row: r, Bin: rng.IntN(bins), Weight: uint64(1 + rng.IntN(3))})
		}
	}
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	gs, hs := make([][]int64, sets), make([][]int64, sets)
	all := make([][]*rlwe.Ciphertext, sets)
	for i := range sets {
		gs[i], hs[i] = make([]int64, rows), make([]int64, rows)
		for r := range rows {
			gs[i][r], hs[i][r] = rng.Int64N(1<<30)-1<<29, rng.Int64N(1<<30)
		}
		if i == sets-1 { // the same values as the first: masked apart all the same
			copy(gs[i], gs[0])
			copy(hs[i], hs[0])
		}
		if all[i], err = enc.EncryptPairs(l, gs[i], hs[i]); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	kept := NewWeightCache(1 << 30)
	out, err := s.SumTermsEach(all, terms, kept, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != sets || len(kept.m) != 2 {
		t.Fatalf("%d sums for %d vectors, %d Ws kept for 2 chunks", len(out), sets, len(kept.m))
	}
	var decs [][]uint64
	for i, o := range out {
		dec := decryptCoeffs(t, p, sk, o)
		decs = append(decs, dec)
		gotG, gotH, err := l.Read(dec)
		if err != nil {
			t.Fatal(err)
		}
		wantG, wantH := make([]int64, bins), make([]int64, bins)
		for _, tm := range terms {
			wantG[tm.Bin] += int64(tm.Weight) * gs[i][tm.Row]
			wantH[tm.Bin] += int64(tm.Weight) * hs[i][tm.Row]
		}
		if !slices.Equal(gotG, wantG) || !slices.Equal(gotH, wantH) {
			t.Fatalf("vector %d: sums differ from its rows'", i)
		}
	}
	if slices.Equal(decs[0], decs[sets-1]) {
		t.Fatal("two sums of equal vectors decrypt alike beyond the bins: not masked apart")
	}
	if _, err := s.SumTermsEach([][]*rlwe.Ciphertext{all[0], all[1][:1]}, terms[:1], nil, 0); err == nil {
		t.Fatal("vectors of different lengths summed")
	}
}

// checkUniformMask fails unless the masked coefficients look uniform
// below t: each quarter of [0, t) holds about a quarter of them.
func checkUniformMask(t *testing.T, masked []uint64, tm uint64) {
	t.Helper()
	var quarters [4]int
	for _, c := range masked {
		if c >= tm {
			t.Fatalf("a masked coefficient %d not below T", c)
		}
		quarters[min(3, c/(tm/4))]++
	}
	n := float64(len(masked))
	for q, k := range quarters {
		if d := float64(k) - n/4; d*d > 25*n*3/16 {
			t.Fatalf("quarter %d of [0, T) holds %d of %d masked coefficients, want about a quarter", q, k, len(masked))
		}
	}
}
