package lattice

import (
	"testing"
)

// BenchmarkFoldMillion measures what the root of a million values' round
// at N = 5 (24-bit values, 63 ciphertexts) does per message it folds: a
// child's subtree sum (25 MB) and two decryption shares of one quorum
// (12 MB each), decoded into fresh values and then added (decode, the
// code before issue 36's last step) or added straight from their bytes
// (AddBinary). -benchmem shows the allocations each way.
func BenchmarkFoldMillion(b *testing.B) {
	keys := testKeys(b, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(b), 1_000_000, 8, 24, 5)
	if err != nil {
		b.Fatal(err)
	}
	g := NewAggregator(pk, l)
	v := make([]int64, 1_000_000)
	ctx := testContext(pk, 1)
	aggs := make([]*Aggregate, 2)
	for i := range aggs {
		enc, err := NewEncryptor(pk)
		if err != nil {
			b.Fatal(err)
		}
		if aggs[i], err = enc.EncryptInts(ctx, i+1, l, v); err != nil {
			b.Fatal(err)
		}
	}
	child, err := aggs[1].MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	own := aggs[0].Inputs
	b.Run("child/decode", func(b *testing.B) {
		for b.Loop() {
			aggs[0].Inputs = own
			a := g.Allocate()
			if err := a.UnmarshalBinary(child); err != nil {
				b.Fatal(err)
			}
			if err := g.Aggregate(aggs[0], a, aggs[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("child/AddBinary", func(b *testing.B) {
		for b.Loop() {
			aggs[0].Inputs = own
			if err := g.AddBinary(aggs[0], child, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	aggs[0].Inputs = own
	if err := g.AddBinary(aggs[0], child, nil); err != nil {
		b.Fatal(err)
	}
	benchFoldShares(b, keys, l, ctx, aggs[0])
}

// benchFoldShares is BenchmarkFoldMillion's second half: two shares of a
// quorum folded into the opening of total.
func benchFoldShares(b *testing.B, keys []*Keys, l *Layout, ctx Context, total *Aggregate) {
	pk := keys[0].PublicKey
	plan, err := PlanVerified(pk, available(5))
	if err != nil {
		b.Fatal(err)
	}
	var shares [][]byte
	for _, p := range plan.Quorums[0][:2] {
		dec, err := NewDecryptor(keys[p-1])
		if err != nil {
			b.Fatal(err)
		}
		t, err := dec.Target(total.Mask(), Expect{Context: ctx, Shape: l.Shape(), Committed: total.Inputs})
		if err != nil {
			b.Fatal(err)
		}
		sh, err := dec.GenShare(t, plan, 0)
		if err != nil {
			b.Fatal(err)
		}
		enc, err := sh.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		shares = append(shares, enc)
	}
	open, err := NewOpening(pk, l, plan, total)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("2 shares/decode", func(b *testing.B) {
		for b.Loop() {
			open.acc[0] = nil
			for _, enc := range shares {
				sh := open.AllocateShare()
				if err := sh.UnmarshalBinary(enc); err != nil {
					b.Fatal(err)
				}
				if err := open.Add(sh); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("2 shares/AddBinary", func(b *testing.B) {
		for b.Loop() {
			open.acc[0] = nil
			for _, enc := range shares {
				if err := open.AddBinary(enc, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
