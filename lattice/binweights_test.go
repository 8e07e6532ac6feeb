package lattice

import (
	mrand "math/rand/v2"
	"slices"
	"testing"
)

// TestSumTermsKept: sums through a WeightCache read the bins' exact sums
// (as SumTerms) when the Ws are made and kept, when they are taken from
// the cache with other gradients, when one chunk's terms change (its W is
// made again, the others taken), in another layout of the same cache, and
// when the budget keeps nothing. Taking a kept W without comparing its
// terms fails the changed chunk's case.
func TestSumTermsKept(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins = 8
	rng := mrand.New(mrand.NewPCG(7, 8))
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, l *BinLayout, s *BinSummer, kept *WeightCache, terms []BinTerm, rows int) {
		t.Helper()
		g, h := make([]int64, rows*l.Nodes()), make([]int64, rows*l.Nodes())
		for i := range g {
			g[i], h[i] = rng.Int64N(1<<30)-1<<29, rng.Int64N(1<<30)
		}
		cts, err := enc.EncryptPairs(l, g, h)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.SumTermsKept(cts, terms, kept, 3)
		if err != nil {
			t.Fatal(err)
		}
		gotG, gotH, err := l.Read(decryptCoeffs(t, p, sk, out))
		if err != nil {
			t.Fatal(err)
		}
		wantG, wantH := make([]int64, bins*l.Nodes()), make([]int64, bins*l.Nodes())
		for _, tm := range terms {
			for j := range l.Nodes() {
				wantG[j*bins+tm.Bin] += int64(tm.Weight) * g[tm.Row*l.Nodes()+j]
				wantH[j*bins+tm.Bin] += int64(tm.Weight) * h[tm.Row*l.Nodes()+j]
			}
		}
		if !slices.Equal(gotG, wantG) || !slices.Equal(gotH, wantH) {
			t.Fatalf("%s: the kept sums differ from the rows' sums", name)
		}
	}
	termsOf := func(rows int) []BinTerm {
		var out []BinTerm
		for r := range rows {
			for range rng.IntN(3) {
				out = append(out, BinTerm{Row: r, Bin: rng.IntN(bins), Weight: uint64(1 + rng.IntN(3))})
			}
		}
		return out
	}
	l1, err := NewNodeBinLayout(p, bins, 1)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := NewNodeBinLayout(p, bins, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows := 2*l1.Rows() + 5 // three chunks of l1
	terms := termsOf(rows)
	kept := NewWeightCache(1 << 30)
	s1, err := NewBinSummer(pk, l1)
	if err != nil {
		t.Fatal(err)
	}
	check("made", l1, s1, kept, terms, rows)
	if got, want := kept.Bytes(), 3*(p.CiphertextBytes()/2+weightOverhead)+len(terms)*termBytes; got != want {
		t.Fatalf("%d bytes kept for three chunks, want %d", got, want)
	}
	check("kept", l1, s1, kept, terms, rows)
	changed := slices.Clone(terms)
	for i := range changed {
		if changed[i].Row >= l1.Rows() {
			changed[i].Bin = (changed[i].Bin + 1) % bins // the second chunk's first term
			break
		}
	}
	check("one chunk changed", l1, s1, kept, changed, rows)
	s2, err := NewBinSummer(pk, l2)
	if err != nil {
		t.Fatal(err)
	}
	check("another layout", l2, s2, kept, termsOf(rows/2), rows/2)
	check("nothing kept", l1, s1, NewWeightCache(0), terms, rows)
}

// TestWeightCacheCountsTerms: the cache counts each kept W's polynomial,
// its terms and weightOverhead, exactly: a budget of what three chunks'
// Ws take keeps all three (a second sum makes none), one byte less keeps
// the first two, and every kept W's terms hold no spare capacity beyond
// what was counted. Counting the polynomials alone (as before) keeps the
// third W under the smaller budget and fails it.
func TestWeightCacheCountsTerms(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, _ := binKeys(t)
	const bins = 8
	l, err := NewNodeBinLayout(p, bins, 1)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	rows := 2*l.Rows() + 5 // three chunks
	g, h := make([]int64, rows), make([]int64, rows)
	cts, err := enc.EncryptPairs(l, g, h)
	if err != nil {
		t.Fatal(err)
	}
	var terms []BinTerm
	per := make([]int, 3) // terms by chunk
	for r := range rows {
		for b := range 1 + r%3 {
			terms = append(terms, BinTerm{Row: r, Bin: (r + b) % bins, Weight: 1})
			per[r/l.Rows()]++
		}
	}
	want := 0
	for _, n := range per {
		want += KeptBytes(p, n)
	}
	for _, tc := range []struct {
		budget, chunks int
	}{{want, 3}, {want - 1, 2}} {
		s, err := NewBinSummer(pk, l)
		if err != nil {
			t.Fatal(err)
		}
		kept := NewWeightCache(tc.budget)
		for range 2 {
			if _, err := s.SumTermsKept(cts, terms, kept, 0); err != nil {
				t.Fatal(err)
			}
		}
		counted := 0
		for k := range tc.chunks {
			counted += KeptBytes(p, per[k])
		}
		if got := kept.Bytes(); got != counted || len(kept.m) != tc.chunks {
			t.Fatalf("budget %d: %d Ws kept in %d bytes, want %d in %d", tc.budget, len(kept.m), got, tc.chunks, counted)
		}
		for k, w := range kept.m {
			if cap(w.terms) != per[k.chunk] || len(w.terms) != per[k.chunk] {
				t.Fatalf("chunk %d: %d terms kept with capacity %d, want %d", k.chunk, len(w.terms), cap(w.terms), per[k.chunk])
			}
		}
	}
}
