package mpc

import (
	"context"
	"crypto/rand"
	mrand "math/rand/v2"
	"testing"
)

// benchShares deals shares of count random signed k-bit values among n
// parties with degree t, outside the protocols being measured.
func benchShares(b *testing.B, count, k, n, th int) [][]Elem {
	b.Helper()
	rng := mrand.New(mrand.NewPCG(13, 14))
	half := int64(1) << (k - 1)
	v := make([]Elem, count)
	for i := range v {
		v[i] = FromInt(rng.Int64N(2*half) - half)
	}
	sh, err := shareVec(rand.Reader, v, th, n)
	if err != nil {
		b.Fatal(err)
	}
	return sh
}

// reportTraffic reports the rounds of one run and the bytes each party
// sent per run, the largest and the mean over the parties (parties
// 0..2t send more than the others: they reshare in Mul and send their
// shares in Open).
func reportTraffic(b *testing.B, runs [][]*Party) {
	var maxSent, sum int64
	var rounds int
	for _, ps := range runs {
		for _, p := range ps {
			st := p.Stats()
			maxSent = max(maxSent, st.Sent)
			sum += st.Sent
			rounds = st.Rounds
		}
	}
	n := int64(len(runs) * len(runs[0]))
	b.ReportMetric(float64(rounds), "rounds/op")
	b.ReportMetric(float64(maxSent), "maxB/party/op")
	b.ReportMetric(float64(sum/n), "meanB/party/op")
}

// BenchmarkLTZ4096 runs LTZ over 4,096 shared 32-bit values among 5
// parties (t = 2) over the in-memory network.
func BenchmarkLTZ4096(b *testing.B) {
	const n, th, k, count = 5, 2, 32, 4096
	sh := benchShares(b, count, k, n, th)
	var runs [][]*Party
	for b.Loop() {
		ps := mustRun(b, n, th, func(ctx context.Context, p *Party) error {
			_, err := p.LTZ(ctx, sh[p.Self], k)
			return err
		})
		runs = append(runs, ps)
	}
	reportTraffic(b, runs)
}

// BenchmarkArgmax4096 runs Argmax over 4,096 shared 32-bit values among
// 5 parties (t = 2) over the in-memory network, and opens the index.
func BenchmarkArgmax4096(b *testing.B) {
	const n, th, k, count = 5, 2, 32, 4096
	sh := benchShares(b, count, k, n, th)
	var runs [][]*Party
	for b.Loop() {
		ps := mustRun(b, n, th, func(ctx context.Context, p *Party) error {
			idx, _, err := p.Argmax(ctx, sh[p.Self], k)
			if err != nil {
				return err
			}
			_, err = p.OpenIndex(ctx, idx, count)
			return err
		})
		runs = append(runs, ps)
	}
	reportTraffic(b, runs)
}
