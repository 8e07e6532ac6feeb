package lattice

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// TestBinOpening: bin sums made by member 2 are decrypted by a verified
// plan's quorums of a 4-member key towards a receiver, who reads the exact
// sums; a decryptor refuses other ciphertexts under the maker's digest
// (the receiver's own gradient ciphertexts), and a share for other bin
// sums is refused by the opening.
func TestBinOpening(t *testing.T) {
	t.Parallel()
	keys := testKeys(t, 4, 2)
	pk := keys[0].PublicKey
	l, err := NewNodeBinLayout(params(t), 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	g, h := []int64{5, -7, 11, 13, -17, 19}, []int64{1, 2, 3, 4, 5, 6} // 3 rows, 2 nodes
	cts := encryptedPairs(t, pk, l, g, h)
	s, err := NewBinSummer(pk, l)
	if err != nil {
		t.Fatal(err)
	}
	terms := []BinTerm{{Row: 0, Bin: 1, Weight: 2}, {Row: 1, Bin: 3, Weight: 1}, {Row: 2, Bin: 1, Weight: 1}}
	sum, err := s.SumTerms(cts, terms)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(pk, 0)
	const maker = 2
	want, err := BinSumsDigest(pk, ctx, maker, l, []*rlwe.Ciphertext{sum})
	if err != nil {
		t.Fatal(err)
	}
	target, err := NewBinTarget(pk, ctx, maker, l, []*rlwe.Ciphertext{sum})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanVerified(pk, available(4))
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewBinOpening(pk, l, plan, target, []*rlwe.Ciphertext{sum})
	if err != nil {
		t.Fatal(err)
	}
	for q, members := range plan.Quorums {
		for _, m := range members {
			d, err := NewDecryptor(keys[m-1])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.BinTarget(ctx, maker, l, cts[:1], want); !errors.Is(err, ErrPolicy) {
				t.Fatalf("member %d: the gradient ciphertext under the bin sums' digest: %v", m, err)
			}
			tg, err := d.BinTarget(ctx, maker, l, []*rlwe.Ciphertext{sum}, want)
			if err != nil {
				t.Fatal(err)
			}
			sh, err := d.GenShare(tg, plan, q)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Add(sh); err != nil {
				t.Fatal(err)
			}
		}
	}
	gotG, gotH, v, err := o.Open()
	if err != nil || !v.Agreed {
		t.Fatalf("open: %v (verdict %+v)", err, v)
	}
	// node k's bin b at k·4 + b (row i's node k at g[2i+k]): row 0 twice
	// in bin 1, row 2 in bin 1, row 1 in bin 3.
	wantG := []int64{0, 2*5 - 17, 0, 11, 0, 2*(-7) + 19, 0, 13}
	wantH := []int64{0, 2*1 + 5, 0, 3, 0, 2*2 + 6, 0, 4}
	for i := range wantG {
		if gotG[0][i] != wantG[i] || gotH[0][i] != wantH[i] {
			t.Fatalf("sums %v %v, want %v %v", gotG[0], gotH[0], wantG, wantH)
		}
	}
	other, err := NewBinTarget(pk, ctx, maker, l, cts[:1])
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewDecryptor(keys[plan.Quorums[0][0]-1])
	sh, err := d.GenShare(other, plan, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Add(sh); !errors.Is(err, ErrMismatch) {
		t.Fatalf("a share of other ciphertexts folded in: %v", err)
	}
	// An opening of other ciphertexts than the target's, or of the target
	// changed since it was named, is refused.
	if _, err := NewBinOpening(pk, l, plan, other, []*rlwe.Ciphertext{sum}); !errors.Is(err, ErrMismatch) {
		t.Fatalf("an opening of other bin sums than the target's: %v", err)
	}
	moved := *target
	moved.Context.Round++
	if _, err := NewBinOpening(pk, l, plan, &moved, []*rlwe.Ciphertext{sum}); !errors.Is(err, ErrMismatch) {
		t.Fatalf("an opening of a target whose context changed since it was named: %v", err)
	}
}

// TestCiphertextsRoundTrip: bin sums through their encoding decrypt to
// the same sums and have the same digest; short, long, unreduced and too
// many encodings are refused.
func TestCiphertextsRoundTrip(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, sk := binKeys(t)
	l, err := NewBinLayout(p, 4)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := NewEncryptor(pk)
	cts, err := enc.EncryptPairs(l, []int64{3, -4}, []int64{5, 6})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := NewBinSummer(pk, l)
	sum, err := s.Sum(cts, []int{2, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalCiphertexts([]*rlwe.Ciphertext{sum, cts[0]})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.UnmarshalCiphertexts(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The decoded ciphertexts carry bgv.NewCiphertext's metadata, in the
	// NTT domain and coefficient-encoded, as the products expect.
	want := bgv.NewCiphertext(p.bgv, 1, p.bgv.MaxLevel()).MetaData
	want.IsNTT, want.IsBatched = true, false
	for k, ct := range got {
		if ct.Degree() != 1 || ct.Level() != p.bgv.MaxLevel() || !ct.MetaData.Equal(want) {
			t.Fatalf("ciphertext %d decoded as degree %d, level %d, %+v", k, ct.Degree(), ct.Level(), *ct.MetaData)
		}
	}
	ctx := testContext(pk, 1)
	d0, _ := BinSumsDigest(pk, ctx, 1, l, []*rlwe.Ciphertext{sum})
	d1, err := BinSumsDigest(pk, ctx, 1, l, got[:1])
	if err != nil || d0 != d1 {
		t.Fatalf("digest changed through the encoding: %v", err)
	}
	g, h, err := l.Read(decryptCoeffs(t, p, sk, got[0]))
	if err != nil || g[2] != -1 || h[2] != 11 {
		t.Fatalf("sums through the encoding: %v %v %v", g, h, err)
	}
	for name, bad := range map[string][]byte{"short": b[:len(b)-1], "long": append(slices.Clone(b), 0), "empty-ish": b[:8]} {
		if _, err := p.UnmarshalCiphertexts(bad, 2); err == nil {
			t.Errorf("%s encoding accepted", name)
		}
	}
	if _, err := p.UnmarshalCiphertexts(b, 1); err == nil {
		t.Error("more ciphertexts than allowed accepted")
	}
	unreduced := slices.Clone(b)
	for i := range 8 {
		unreduced[i] = 0xff
	}
	if _, err := p.UnmarshalCiphertexts(unreduced, 2); err == nil {
		t.Error("an unreduced coefficient accepted")
	}
}

// FuzzCiphertexts: decoding peer bytes never panics, and what decodes
// encodes back to the same bytes.
func FuzzCiphertexts(f *testing.F) {
	p := params(f)
	pk, _ := binKeys(f)
	l, _ := NewBinLayout(p, 4)
	enc, _ := NewEncryptor(pk)
	cts, _ := enc.EncryptPairs(l, []int64{1}, []int64{2})
	b, _ := p.MarshalCiphertexts(cts)
	f.Add(b)
	f.Add([]byte{})
	f.Add(b[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := p.UnmarshalCiphertexts(b, 4)
		if err != nil {
			return
		}
		again, err := p.MarshalCiphertexts(got)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}
