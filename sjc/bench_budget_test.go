package sjc_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// BenchmarkMemoryBudget is the thesis's runtime against memory size (Xu,
// §3.4: Figure 7, Mondial; Figure 9(b), two parties of synthetic data):
// the job over jobtest's in-memory network, every party under each
// memory budget of SJC_BUDGETS (bytes, comma-separated; 0 is none), on
// the spec SJC_BUDGET_SPEC (its test set dropped) or else a two-table
// GenChain case of N = SJC_BENCH_N rows per table (default 20000). Each
// tree is checked against the one grown in process. Metrics: job-s;
// job-core-s, its CPU time (every thread), steadier than the wall clock
// on a loaded machine;
// spill-MB, the most bytes one party's spill files held after a step;
// peak-MB, the process's peak resident memory during the job (Linux: the
// peak is reset, after a garbage collection that returns the freed
// memory, through /proc/self/clear_refs; all parties and the coordinator
// share the process).
//
//	SJC_BUDGETS=0,20,1048576 go test ./sjc -run '^$' -bench MemoryBudget -benchtime 1x
func BenchmarkMemoryBudget(b *testing.B) {
	spec, want := budgetCase(b)
	budgets := []int64{0, oneRow, 64 << 10, 1 << 20}
	if s := os.Getenv("SJC_BUDGETS"); s != "" {
		budgets = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			budgets = append(budgets, v)
		}
	}
	for _, budget := range budgets {
		b.Run("budget="+strconv.FormatInt(budget, 10), func(b *testing.B) {
			for b.Loop() {
				debug.FreeOSMemory()
				resetPeakRSS()
				spy := &spyKind{Kind: sjc.Kind{MemoryBudget: budget}}
				secrets := map[string]job.Secrets{}
				for _, p := range spec.PartyNames() {
					secrets[p] = job.DirSecrets(filepath.Join(b.TempDir(), p))
				}
				t0, c0 := time.Now(), cputime.Used(b)
				run, err := runJobKind(b, context.Background(), spy, spec, jobtest.Options{Secrets: secrets, StepTimeout: 10 * time.Minute})
				took, core := time.Since(t0), cputime.Used(b)-c0
				if err != nil {
					b.Fatal(err)
				}
				if d := tree.Diff(want, run.tree); d != "" {
					b.Fatalf("the tree differs from the one grown in process: %s", d)
				}
				b.ReportMetric(took.Seconds(), "job-s")
				b.ReportMetric(core.Seconds(), "job-core-s")
				b.ReportMetric(float64(spy.bytes)/1e6, "spill-MB")
				if peak, ok := peakRSS(); ok {
					b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
				}
			}
		})
	}
}

// budgetCase is BenchmarkMemoryBudget's spec and the tree grown on it in
// process.
func budgetCase(b *testing.B) (*job.Spec, *tree.Tree) {
	var spec *job.Spec
	var g *sjc.Graph
	var data map[string]*table.Table
	if path := os.Getenv("SJC_BUDGET_SPEC"); path != "" {
		spec, g, data = loadSpec(b, path)
		spec.Test = nil
	} else {
		n := 20000
		if s := os.Getenv("SJC_BENCH_N"); s != "" {
			var err error
			if n, err = strconv.Atoi(s); err != nil {
				b.Fatal(err)
			}
		}
		var ch *sjc.Chain
		ch, spec, g = writeChain(b, n)
		data = ch.Train
	}
	p, err := sjc.ParseParams(spec)
	if err != nil {
		b.Fatal(err)
	}
	want, err := sjc.Build(g, data, p)
	if err != nil {
		b.Fatal(err)
	}
	return spec, want
}

// resetPeakRSS resets the process's peak resident memory to its current
// one (Linux 4.0 and later; elsewhere nothing).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident memory (VmHWM), in bytes.
func peakRSS() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseUint(f[0], 10, 64)
				return kb << 10, err == nil
			}
		}
	}
	return 0, false
}
