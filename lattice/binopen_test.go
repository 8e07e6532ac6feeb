package lattice

import (
	"errors"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
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
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	cts, err := enc.EncryptPairs(l, g, h)
	if err != nil {
		t.Fatal(err)
	}
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
}
