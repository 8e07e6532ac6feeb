package psi

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job/jobtest"
)

// The figures in docs/psi.md come from these benchmarks:
//
//	go test ./psi -run '^$' -bench 'ScalarMult|Steps' -count 3
//	go test ./psi -run '^$' -bench 'ECDH' -benchtime 1x -count 3
//	PSI_BENCH_1M=1 go test ./psi -run '^$' -bench 'ECDH/n=1000000' -benchtime 1x -count 1 -timeout 30m
//	go test ./psi -run '^$' -bench 'OT' -benchtime 1x -count 3 [-cpu 1]
//	PSI_BENCH_1M=1 PSI_BENCH_NO_ECDH=1 go test ./psi -run '^$' -bench 'OT/n=1000000' -benchtime 1x -count 3 [-cpu 1]
//	PSI_UPSI_N=16777216 PSI_UPSI_DIR=DIR go test ./psi -run '^$' -bench 'Unbalanced' -benchtime 1x   # see BenchmarkUnbalanced
//	go test ./psi -run '^$' -bench 'Align' -benchtime 1x -count 3 [-cpu 1]   # PSI_BENCH_ALIGN_ECDH=1 adds ECDH
//	psi.test -test.run '^$' -test.bench '^BenchmarkVOLE$' -test.benchtime 1x -test.cpu 1   # per round; see BenchmarkVOLE
//
// core-µs/elem is CPU time (every core, both parties) per element per
// party; floor-x divides it by two variable-base scalar multiplications,
// the protocol's floor, measured in the same process just before.

// BenchmarkScalarMult is the floor's unit: one variable-base scalar
// multiplication on ristretto255 (circl), on one core.
func BenchmarkScalarMult(b *testing.B) {
	g := group.Ristretto255
	s := g.RandomNonZeroScalar(nil)
	p := g.HashToElement([]byte("x"), []byte("t"))
	q := g.NewElement()
	for b.Loop() {
		q.Mul(p, s)
	}
}

// BenchmarkSteps reports the CPU time of each pure step per element, on
// one core: hashing to the group alone, HashBlind (hash, multiply,
// encode) and DoubleBlind (decode, check, multiply, encode).
func BenchmarkSteps(b *testing.B) {
	const n = 2000
	elems := benchElems(0, n)
	dst := []byte("bench")
	s := NewSecret()
	blinded := HashBlind(elems, dst, s)
	one := func(b *testing.B, f func()) {
		var cpu time.Duration
		for b.Loop() {
			t0 := cputime.Used(b)
			f()
			cpu += cputime.Used(b) - t0
		}
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n), "core-µs/elem")
	}
	b.Run("hash", func(b *testing.B) {
		one(b, func() {
			for _, e := range elems {
				group.Ristretto255.HashToElement(e, dst)
			}
		})
	})
	b.Run("hash-blind", func(b *testing.B) {
		defer setProcs(1)()
		one(b, func() { HashBlind(elems, dst, s) })
	})
	b.Run("double-blind", func(b *testing.B) {
		defer setProcs(1)()
		one(b, func() {
			if _, err := DoubleBlind(blinded, s); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkECDH runs the two-party ECDH PSI end to end over a jobtest
// network, n distinct values per side of which half are shared. ns/op is
// the wall time of one PSI with both parties in this process.
func BenchmarkECDH(b *testing.B) {
	sizes := []int{10000, 100000}
	if os.Getenv("PSI_BENCH_1M") != "" {
		sizes = append(sizes, 1000000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			a := benchElems(0, n)
			c := benchElems(n/2, n)
			mul := mulCost(b)
			var cpu time.Duration
			var bytes int64
			for b.Loop() {
				net := jobtest.NewNetwork("alice", "bob")
				t0 := cputime.Used(b)
				ra, rb, ea, eb := pair(b, net, ECDH{}, a, c)
				cpu += cputime.Used(b) - t0
				if ea != nil || eb != nil {
					b.Fatal(ea, eb)
				}
				if len(ra.Indices) != n/2 || len(rb.Indices) != n/2 {
					b.Fatalf("intersections of %d and %d, want %d", len(ra.Indices), len(rb.Indices), n/2)
				}
				bytes += net.BytesSent("alice")
			}
			perElem := float64(cpu.Microseconds()) / float64(b.N*2*n)
			b.ReportMetric(perElem, "core-µs/elem")
			b.ReportMetric(perElem/(2*mul), "floor-x")
			b.ReportMetric(mul, "mul-µs")
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes/party")
		})
	}
}

// BenchmarkOT runs the two-party OT-mode (KKRT) PSI end to end over a
// jobtest network, n distinct values per side of which half are shared.
// ns/op is the wall time of one PSI with both parties in this process;
// core-µs/elem is CPU time (both parties, every core) per element per
// party; bytes/party is what each party sends (receiver, sender). At
// n ≤ 10^5 it also runs one ECDH PSI on the same sets and reports
// ecdh-x, ECDH's CPU time over OT's.
func BenchmarkOT(b *testing.B) {
	sizes := []int{10000, 100000}
	if os.Getenv("PSI_BENCH_1M") != "" {
		sizes = append(sizes, 1000000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			a := benchElems(0, n)
			c := benchElems(n/2, n)
			var cpu time.Duration
			var recvBytes, sendBytes int64
			for b.Loop() {
				net := jobtest.NewNetwork("alice", "bob")
				t0 := cputime.Used(b)
				ra, rb, ea, eb := pair(b, net, OT{}, a, c)
				cpu += cputime.Used(b) - t0
				if ea != nil || eb != nil {
					b.Fatal(ea, eb)
				}
				if len(ra.Indices) != n/2 || len(rb.Indices) != n/2 {
					b.Fatalf("intersections of %d and %d, want %d", len(ra.Indices), len(rb.Indices), n/2)
				}
				recvBytes += net.BytesSent("alice")
				sendBytes += net.BytesSent("bob")
			}
			perElem := float64(cpu.Microseconds()) / float64(b.N*2*n)
			b.ReportMetric(perElem, "core-µs/elem")
			b.ReportMetric(float64(recvBytes)/float64(b.N), "recv-bytes")
			b.ReportMetric(float64(sendBytes)/float64(b.N), "send-bytes")
			if n <= 100000 && os.Getenv("PSI_BENCH_NO_ECDH") == "" {
				b.StopTimer()
				net := jobtest.NewNetwork("alice", "bob")
				t0 := cputime.Used(b)
				if _, _, ea, eb := pair(b, net, ECDH{}, a, c); ea != nil || eb != nil {
					b.Fatal(ea, eb)
				}
				ecdh := float64((cputime.Used(b) - t0).Microseconds()) / float64(2*n)
				b.ReportMetric(ecdh/perElem, "ecdh-x")
				b.StartTimer()
			}
		})
	}
}

// benchElems returns n encoded keys, the integers from..from+n.
func benchElems(from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		k, err := EncodeKey(IntValue(int64(from + i)))
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
}

// mulCost measures one variable-base scalar multiplication in CPU µs on
// one goroutine, now, so the floor and the protocol see the same machine.
func mulCost(b *testing.B) float64 {
	const reps = 2000
	g := group.Ristretto255
	s := g.RandomNonZeroScalar(nil)
	p := g.HashToElement([]byte("x"), []byte("t"))
	q := g.NewElement()
	t0 := cputime.Used(b)
	for range reps {
		q.Mul(p, s)
	}
	return float64((cputime.Used(b) - t0).Microseconds()) / reps
}

// setProcs sets GOMAXPROCS and returns a function restoring it.
func setProcs(n int) func() {
	old := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}

// BenchmarkAlign aligns 45,222 record ids (Adult's, issue 13's
// integrate) across 3 parties, every party holding all of them, as a star
// around the first: OT mode always, ECDH mode when PSI_BENCH_ALIGN_ECDH
// is set (about 28 core-seconds). ns/op is the wall time of the whole
// alignment with the three parties in this process; core-s is its CPU
// time, all parties and cores.
func BenchmarkAlign(b *testing.B) {
	const n = 45222
	modes := []Mode{ModeOT}
	if os.Getenv("PSI_BENCH_ALIGN_ECDH") != "" {
		modes = append(modes, ModeECDH)
	}
	parties := []string{"p1", "p2", "p3"}
	ids := benchElems(0, n)
	for _, mode := range modes {
		name := map[Mode]string{ModeOT: "OT", ModeECDH: "ECDH"}[mode]
		b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
			var cpu time.Duration
			var sent int64
			for b.Loop() {
				net := jobtest.NewNetwork(parties...)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				t0 := cputime.Used(b)
				var wg sync.WaitGroup
				res := make([]*Result, len(parties))
				errs := make([]error, len(parties))
				for i, q := range parties {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res[i], errs[i] = Align(ctx, net.Party(q), testStep(parties...), "p1", parties, Config{Edge: "ids", Mode: mode}, ids)
					}()
				}
				wg.Wait()
				cpu += cputime.Used(b) - t0
				cancel()
				for i := range parties {
					if errs[i] != nil || res[i].Size != n {
						b.Fatalf("%s: %v, %+v", parties[i], errs[i], res[i])
					}
					sent += net.BytesSent(parties[i])
				}
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "core-s")
			b.ReportMetric(float64(sent)/float64(b.N), "bytes")
		})
	}
}
