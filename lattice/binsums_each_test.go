package lattice

import (
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// TestEachSumsRanges: sums accumulated a range of chunks at a time (empty
// ranges, one chunk at a time, ranges longer than the lazy products'
// limit, a kept W cache filled by an earlier split) decrypt to exactly
// the one-shot SumTermsEach's sums; chunks out of order and an early
// finish and terms beyond the range are refused.
func TestEachSumsRanges(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	const bins, sets, chunks = 8, 2, 10
	l, err := NewNodeBinLayout(p, bins, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := (chunks-1)*l.Rows() + 5
	rng := mrand.New(mrand.NewPCG(11, 12))
	var terms []BinTerm
	for r := range rows {
		if r/l.Rows() == 4 {
			continue // a chunk without terms: no W, no product
		}
		for range rng.IntN(3) {
			terms = append(terms, BinTerm{Row: r, Bin: rng.IntN(bins), Weight: uint64(1 + rng.IntN(3))})
		}
	}
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	all := make([][]*rlwe.Ciphertext, sets)
	for i := range sets {
		g, h := make([]int64, rows), make([]int64, rows)
		for r := range rows {
			g[r], h[r] = rng.Int64N(1<<30)-1<<29, rng.Int64N(1<<30)
		}
		if all[i], err = enc.EncryptPairs(l, g, h); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	read := func(out []*rlwe.Ciphertext) [][]int64 {
		var r [][]int64
		for _, o := range out {
			g, h, err := l.Read(decryptCoeffs(t, p, sk, o))
			if err != nil {
				t.Fatal(err)
			}
			r = append(r, g, h)
		}
		return r
	}
	one, err := s.SumTermsEach(all, terms, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := read(one)
	kept := NewWeightCache(1 << 30)
	splits := [][]int{{0, 10}, {0, 0, 3, 3, 10, 10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {0, 9, 10}, {0, 2, 10}}
	for n, split := range splits {
		s2, err := NewBinSummer(pk, l) // another summer for each range's products
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.NewEachSums(sets, chunks)
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j < len(split); j++ {
			k0, k1 := split[j-1], split[j]
			part := [][]*rlwe.Ciphertext{all[0][k0:k1], all[1][k0:k1]}
			in := rangeTerms(terms, k0*l.Rows(), k1*l.Rows())
			by := s
			if j%2 == 0 {
				by = s2
			}
			if err := by.AddEach(a, part, k0, in, kept, 0); err != nil {
				t.Fatal(err)
			}
		}
		out, err := s.FinishEach(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(out); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("split %d %v: sums differ from the one-shot sums", n, split)
		}
	}
	checkEachMisuse(t, s, all, terms, l.Rows(), chunks)
}

// checkEachMisuse: chunks out of order, terms beyond the range and an
// early finish are refused.
func checkEachMisuse(t *testing.T, s *BinSummer, all [][]*rlwe.Ciphertext, terms []BinTerm, rowsPer, chunks int) {
	t.Helper()
	a, err := s.NewEachSums(len(all), chunks)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddEach(a, [][]*rlwe.Ciphertext{all[0][1:3], all[1][1:3]}, 1, rangeTerms(terms, rowsPer, 3*rowsPer), nil, 0); err == nil {
		t.Fatal("chunks added out of order")
	}
	if err := s.AddEach(a, [][]*rlwe.Ciphertext{all[0][:3], all[1][:3]}, 0, terms, nil, 0); err == nil {
		t.Fatal("terms beyond the range's rows accepted")
	}
	if err := s.AddEach(a, [][]*rlwe.Ciphertext{all[0][:3], all[1][:3]}, 0, rangeTerms(terms, 0, 3*rowsPer), nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishEach(a); err == nil {
		t.Fatal("sums finished before their last chunk")
	}
}

// rangeTerms is the terms (sorted by row) of rows lo to hi-1.
func rangeTerms(terms []BinTerm, lo, hi int) []BinTerm {
	var out []BinTerm
	for _, t := range terms {
		if t.Row >= lo && t.Row < hi {
			out = append(out, t)
		}
	}
	return out
}
