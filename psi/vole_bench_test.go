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
// side (PSI_BENCH_VOLE_N overrides), half of them shared, both parties in
// this process over a jobtest network. Run with -cpu 1 for issue 36's
// one-core figure, one round per process (-count would run each protocol
// count times in a row), so that benchstat -col /proto compares the two
// under the same load:
//
//	go test -c -o psi.test ./psi && cd psi
//	for i in 1 2 3 4 5; do ../psi.test -test.run '^$' -test.bench '^BenchmarkVOLE$' -test.benchtime 1x -test.cpu 1 >> vole.txt; done
//	benchstat -col /proto vole.txt
//
// ns/op is the wall time of one PSI; core-µs/elem is the CPU time of both
// parties per element per party; the bytes are what each party sends.
func BenchmarkVOLE(b *testing.B) {
	n := 1 << 20
	if s := os.Getenv("PSI_BENCH_VOLE_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 2 {
			b.Fatalf("PSI_BENCH_VOLE_N=%q: want an integer ≥ 2", s)
		}
		n = v
	}
	a, c := benchElems(0, n), benchElems(n/2, n)
	for _, p := range []struct {
		name string
		in   Intersector
	}{{"kkrt", OT{}}, {"vole", VOLE{}}} {
		b.Run(fmt.Sprintf("proto=%s/n=%d", p.name, n), func(b *testing.B) {
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
				if len(ra.Indices) != n/2 || len(rb.Indices) != n/2 {
					b.Fatalf("intersections of %d and %d, want %d", len(ra.Indices), len(rb.Indices), n/2)
				}
				recvBytes += net.BytesSent("alice")
				sendBytes += net.BytesSent("bob")
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*2*n), "core-µs/elem")
			b.ReportMetric(float64(recvBytes)/float64(b.N), "recv-bytes")
			b.ReportMetric(float64(sendBytes)/float64(b.N), "send-bytes")
		})
	}
}
