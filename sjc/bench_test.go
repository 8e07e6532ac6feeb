package sjc_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/tree"
)

// peakHeap runs f and returns the largest live-heap size seen while it
// ran, above the heap after a GC before it: runtime/metrics' heap-object
// bytes sampled every 200 µs (objects not yet collected count too, so this
// is an upper bound on the live peak).
func peakHeap(f func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	metrics.Read(s)
	peak = max(peak, s[0].Value.Uint64())
	if peak < base {
		return 0
	}
	return peak - base
}

// BenchmarkChain compares the join-aware algorithm (sjc.Build: class
// propagation, then per node AVC sets and split propagation over the
// source tables) with join-then-build (materialise the join, then grow the
// same tree on its rows) on the thesis's synthetic chains, N = 1000,
// V = 250, X = 5 (Xu §3.4.2), 2 to 6 tables. Both grow the same tree
// (checked); pruning on, default params. Metrics: peak-MB (heap above
// the starting heap), join-rows, for sjc the accuracy over the test set's
// join rows (test-acc) and the tree's leaves, and for join-then-build
// join-s, the part spent materialising the join; core-ms is the CPU time
// of every thread (the garbage collector's and the heap sampler's
// included) per tree.
//
//	go test ./sjc -run '^$' -bench Chain -benchtime 1x -count 3
func BenchmarkChain(b *testing.B) {
	for k := 2; k <= 6; k++ {
		c, err := sjc.GenChain(sjc.ChainParams{Tables: k, N: 1000, V: 250, X: 5, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		g, err := sjc.NewGraph(c.Spec)
		if err != nil {
			b.Fatal(err)
		}
		p := sjc.DefaultParams()
		var fast *tree.Tree
		b.Run(fmt.Sprintf("tables=%d/sjc", k), func(b *testing.B) {
			var peak uint64
			var core time.Duration
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					c0 := cputime.Used(b)
					if fast, err = sjc.Build(g, c.Train, p); err != nil {
						b.Fatal(err)
					}
					core += cputime.Used(b) - c0
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			b.ReportMetric(core.Seconds()*1000/float64(b.N), "core-ms")
			b.ReportMetric(float64(fast.Root.Counts[0]+fast.Root.Counts[1]), "join-rows")
			ok, tot, err := sjc.Evaluate(fast, g, c.Test)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(ok)/float64(tot), "test-acc")
			_, leaves := fast.Size()
			b.ReportMetric(float64(leaves), "leaves")
		})
		b.Run(fmt.Sprintf("tables=%d/join-then-build", k), func(b *testing.B) {
			var peak uint64
			var joinTime time.Duration
			var rows int
			var slow *tree.Tree
			var core time.Duration
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					c0 := cputime.Used(b)
					defer func() { core += cputime.Used(b) - c0 }()
					start := time.Now()
					j, err := reftree.Materialise(g, c.Train)
					if err != nil {
						b.Fatal(err)
					}
					joinTime += time.Since(start)
					rows = j.Len()
					if slow, err = reftree.BuildOn(j, p); err != nil {
						b.Fatal(err)
					}
				}))
			}
			if fast != nil {
				if d := tree.Diff(fast, slow); d != "" {
					b.Fatalf("trees differ: %s", d)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			b.ReportMetric(float64(rows), "join-rows")
			b.ReportMetric(joinTime.Seconds()/float64(b.N), "join-s")
			b.ReportMetric(core.Seconds()*1000/float64(b.N), "core-ms")
		})
	}
}
