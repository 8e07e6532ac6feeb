package lattice

import (
	"testing"
	"time"
)

// BenchmarkShareMillion makes one member's decryption share of an
// aggregate of a million values (63 ciphertexts at sum's fixed point on
// five parties) into its encoding, as secureagg's decryptors do
// (AppendShare), drawing its smudging noise itself (pool=none) or taking
// it from a full pool (pool=full): what the pool takes off the share's
// critical path.
//
//	go test ./lattice -run '^$' -bench ShareMillion -benchtime 3x -count 3
func BenchmarkShareMillion(b *testing.B) {
	keys := testKeys(b, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(b), 1_000_000, 8, 24, 5)
	if err != nil {
		b.Fatal(err)
	}
	v := make([]int64, 1_000_000)
	enc, err := NewEncryptor(pk)
	if err != nil {
		b.Fatal(err)
	}
	total, err := enc.EncryptInts(testContext(pk, 1), 1, l, v)
	if err != nil {
		b.Fatal(err)
	}
	other, err := enc.EncryptInts(testContext(pk, 1), 2, l, v)
	if err != nil {
		b.Fatal(err)
	}
	if err := NewAggregator(pk, l).Aggregate(total, other, total); err != nil {
		b.Fatal(err)
	}
	plan, err := PlanVerified(pk, available(5))
	if err != nil {
		b.Fatal(err)
	}
	dec, err := NewDecryptor(keys[0])
	if err != nil {
		b.Fatal(err)
	}
	t, err := dec.Target(total.Mask(), Expect{Context: total.Context, Shape: l.Shape(), Committed: total.Inputs})
	if err != nil {
		b.Fatal(err)
	}
	q := plan.QuorumsOf(1)[0]
	var buf []byte
	for _, pooled := range []string{"none", "full"} {
		b.Run("pool="+pooled, func(b *testing.B) {
			for range b.N {
				var p *ZeroPool
				if pooled == "full" {
					b.StopTimer()
					if p, err = NewZeroPool(b.Context(), pk, l.Ciphertexts()); err != nil {
						b.Fatal(err)
					}
					for p.Stats().Noise.Ready < 2*l.Ciphertexts() {
						time.Sleep(time.Millisecond)
					}
					p.Pause()
					b.StartTimer()
				}
				if err := dec.UseNoise(p); err != nil {
					b.Fatal(err)
				}
				if buf, err = dec.AppendShare(buf[:0], t, plan, q); err != nil {
					b.Fatal(err)
				}
				if p != nil {
					b.StopTimer()
					p.Close()
					b.StartTimer()
				}
			}
		})
	}
}
