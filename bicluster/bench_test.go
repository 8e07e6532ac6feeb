package bicluster_test

import (
	"fmt"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/internal/cputime"
)

// runtimeData is the runtime benchmark's matrix: elements/50 rows × 50
// columns (the paper's Fig. 3 shapes, 20×50 to 20,000×50) with five
// disjoint constant biclusters of a fifth of the rows × 10 columns and
// noise γ = 0.1.
func runtimeData(b *testing.B, elements int) *bicluster.Matrix {
	rows := elements / 50
	m, _, err := synth.Constant{Rows: rows, Cols: 50, K: 5, BRows: rows / 5, BCols: 10, Noise: 0.1}.Generate([]byte("bench"))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkCHawk is cHawk's local runtime (crossing minimisation and
// identification, data in memory) on 1,000 to 1,000,000 elements, with
// its CPU time per run (cpu-ns/op, includes the garbage collector's):
//
//	go test ./bicluster/ -run '^$' -bench CHawk -count 3
func BenchmarkCHawk(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("elements=%d", n), func(b *testing.B) {
			m := runtimeData(b, n)
			p := bicluster.DefaultParams()
			found := 0
			cpu0 := cputime.Used(b)
			for b.Loop() {
				res, err := bicluster.CHawk(m, []byte("bench"), p)
				if err != nil {
					b.Fatal(err)
				}
				found = len(res.Biclusters)
			}
			b.ReportMetric(float64(cputime.Used(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(found), "biclusters")
		})
	}
}

// BenchmarkRound is one party's crossing-minimisation round (the pure
// step a Phoenix session runs per iteration) on 250,000 elements, a
// quarter of the 1,000,000-element run over four parties.
func BenchmarkRound(b *testing.B) {
	m := runtimeData(b, 250_000)
	cols := bicluster.InitialColumns([]byte("bench"), m.Cols)
	var st bicluster.PartyState
	for b.Loop() {
		var err error
		if st, _, err = bicluster.Round(m, st, cols, bicluster.Exact); err != nil {
			b.Fatal(err)
		}
	}
}
