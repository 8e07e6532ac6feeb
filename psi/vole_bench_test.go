package psi

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job/jobtest"
)

// BenchmarkVOLE runs the VOLE-mode PSI and, beside it in the same
// process, the OT mode (KKRT) on the same sets: 2^20 distinct values per
// side (PSI_BENCH_VOLE_N overrides the receiver's, PSI_BENCH_VOLE_M the
// sender's), half of the receiver's shared, both parties in
// this process over a jobtest network. Run with -cpu 1 for issue 36's
// one-core figure, one round per process (-count would run each protocol
// count times in a row), so that benchstat -col /proto compares the two
// under the same load:
//
//	go test -c -o psi.test ./psi && cd psi
//	for i in 1 2 3 4 5; do ../psi.test -test.run '^$' -test.bench '^BenchmarkVOLE$' -test.benchtime 1x -test.cpu 1 >> vole.txt; done
//	benchstat -col /proto vole.txt
//
// The values are one-value number keys (EncodeKey), whose digests are
// AES's (digester); PSI_BENCH_LONG=1 makes them 24-byte text keys, whose
// digests are SHA-256's.
//
// ns/op is the wall time of one PSI; core-µs/elem is the CPU time of both
// parties per element of either set; the bytes are what each party sends.
func BenchmarkVOLE(b *testing.B) {
	n := benchSize(b, "PSI_BENCH_VOLE_N", 1<<20)
	m := benchSize(b, "PSI_BENCH_VOLE_M", n) // the sender's set (Auto chooses by n + m)
	a, c := benchElems(0, n), benchElems(n/2, m)
	if os.Getenv("PSI_BENCH_LONG") == "1" {
		a, c = longElems(b, 0, n), longElems(b, n/2, m)
	}
	common := min(n/2, m)
	for _, p := range []struct {
		name string
		in   Intersector
	}{{"kkrt", OT{}}, {"vole", VOLE{}}} {
		name := fmt.Sprintf("proto=%s/n=%d", p.name, n)
		if m != n {
			name += fmt.Sprintf("/m=%d", m)
		}
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			var recvBytes, sendBytes int64
			for b.Loop() {
				net := jobtest.NewNetwork("alice", "bob")
				t0 := cputime.Used(b)
				ra, rb, ea, eb := pair(b, net, p.in, a, c)
				cpu += cputime.Used(b) - t0
				if ea != nil || eb != nil {
					b.Fatal(ea, eb)
				}
				if len(ra.Indices) != common || len(rb.Indices) != common {
					b.Fatalf("intersections of %d and %d, want %d", len(ra.Indices), len(rb.Indices), common)
				}
				recvBytes += net.BytesSent("alice")
				sendBytes += net.BytesSent("bob")
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*(n+m)), "core-µs/elem")
			b.ReportMetric(float64(recvBytes)/float64(b.N), "recv-bytes")
			b.ReportMetric(float64(sendBytes)/float64(b.N), "send-bytes")
		})
	}
}

// longElems is benchElems' values as 24-byte text keys: too long for
// a short digest.
func longElems(b *testing.B, from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		v, err := TextValue(fmt.Sprintf("id-%014d", from+i))
		if err != nil {
			b.Fatal(err)
		}
		out[i] = mustKey(b, v)
	}
	return out
}

// benchSize reads a set size of at least 2 from the environment variable
// name, def when it is unset.
func benchSize(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 2 {
		b.Fatalf("%s=%q: want an integer ≥ 2", name, s)
	}
	return v
}
