package hamdist

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The paper's §4.3 setting: binary vectors, the computation of Alice and
// Bob measured apart (no communication), Fig. 1 (Hamming) beside Fig. 2
// (generalised), at n = 2,500, 5,000 and 10,000 positions (the paper
// plots time against n); alice-s and bob-s are each side's seconds per
// iteration. Run with -cpu 1 for one core, as the paper's machine had.
//
//	go test ./hamdist -run '^$' -bench Paper -benchtime 1x -cpu 1,2
func BenchmarkPaper(b *testing.B) {
	for _, n := range []int{2_500, 5_000, 10_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchPaper(b, n) })
	}
}

func benchPaper(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(7, 8))
	x, y := make([]bool, n), make([]bool, n)
	for i := range x {
		x[i], y[i] = r.IntN(2) == 1, r.IntN(2) == 1
	}
	k := GenerateKey()
	b.Run("fig1-hamming", func(b *testing.B) {
		var alice, bob float64
		for b.Loop() {
			t := startTimer()
			e := k.EncryptBits(x)
			alice += t.lap()
			out, err := FlipBits(k.Public(), e, y)
			if err != nil {
				b.Fatal(err)
			}
			bob += t.lap()
			_ = k.CountInverse(out)
			alice += t.lap()
		}
		b.ReportMetric(alice/float64(b.N), "alice-s")
		b.ReportMetric(bob/float64(b.N), "bob-s")
	})
	b.Run("fig2-generalised", func(b *testing.B) {
		xa, yb := boolValues(x), ExactWindows(boolValues(y))
		var alice, bob float64
		for b.Loop() {
			t := startTimer()
			e := k.Encrypt(xa)
			alice += t.lap()
			out, err := Compare(k.Public(), e, yb)
			if err != nil {
				b.Fatal(err)
			}
			bob += t.lap()
			_ = k.CountOnes(out)
			alice += t.lap()
		}
		b.ReportMetric(alice/float64(b.N), "alice-s")
		b.ReportMetric(bob/float64(b.N), "bob-s")
	})
}
