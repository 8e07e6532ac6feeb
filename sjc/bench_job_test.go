package sjc_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
)

// BenchmarkJobVsInProcess grows one tree on a two-party chain (GenChain,
// 2 tables, N from SJC_BENCH_N, default 20000, V = N/4, X = 5) in process
// (sjc.Build) and as the job over jobtest's in-memory network (PSI,
// messages, a step per level, checkpoints), and checks both trees equal.
// Metrics: inproc-s, job-s, job-MB (bytes sent by all parties), and
// inproc-core-s, job-core-s: the CPU time (every thread, the garbage
// collector's included) of each.
//
//	SJC_BENCH_N=200000 go test ./sjc -run '^$' -bench JobVsInProcess -benchtime 1x
func BenchmarkJobVsInProcess(b *testing.B) {
	n := 20000
	if s := os.Getenv("SJC_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	ch, spec, g := writeChain(b, n)
	for b.Loop() {
		runtime.GC()
		t0, c0 := time.Now(), cputime.Used(b)
		want, err := sjc.Build(g, ch.Train, sjc.DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		inproc, core := time.Since(t0), cputime.Used(b)-c0
		b.ReportMetric(inproc.Seconds(), "inproc-s")
		b.ReportMetric(core.Seconds(), "inproc-core-s")
		benchJob(b, spec, want, 10*time.Minute)
	}
}

// writeChain writes a two-table GenChain case (N = n, V = n/4, X = 5,
// seed 1) as CSV files and returns it with its spec and graph (no test
// set).
func writeChain(b *testing.B, n int) (*sjc.Chain, *job.Spec, *sjc.Graph) {
	b.Helper()
	ch, err := sjc.GenChain(sjc.ChainParams{Tables: 2, N: n, V: n / 4, X: 5, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for name, tb := range ch.Train {
		f, err := os.Create(filepath.Join(dir, name+".csv"))
		if err != nil {
			b.Fatal(err)
		}
		if err := sjc.WriteCSV(f, tb); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	spec := *ch.Spec
	spec.Dir, spec.Source, spec.Test = dir, "bench.yaml", nil
	g, err := sjc.NewGraph(&spec)
	if err != nil {
		b.Fatal(err)
	}
	return ch, &spec, g
}

// BenchmarkSimSpec runs the spec named by SJC_SIM_SPEC (say one written by
// `cohort data gen sjc`) on real in-process nodes through sim.Run, with
// Raft's heartbeat raised to 3 s so that nodes starved of CPU by the PSI
// on a crowded machine are not declared unreachable. Metrics: wall-s and
// each phase's seconds.
//
//	SJC_SIM_SPEC=/tmp/c200k/spec.yaml go test ./sjc -run '^$' -bench SimSpec -benchtime 1x
func BenchmarkSimSpec(b *testing.B) {
	path := os.Getenv("SJC_SIM_SPEC")
	if path == "" {
		b.Skip("SJC_SIM_SPEC names no spec")
	}
	for b.Loop() {
		t0 := time.Now()
		res, err := sim.Run(context.Background(), path, sim.RunOptions{Kinds: job.Registry{"sjc": sjc.Kind{}}, Out: filepath.Join(b.TempDir(), "out"),
			Timing: node.Timing{HeartbeatMS: 3000, ElectionMS: 15000}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "wall-s")
		for ph, s := range res["timing"].(map[string]any) {
			b.ReportMetric(s.(float64), ph+"-s")
		}
		b.ReportMetric(res["nodes"].(float64), "nodes")
	}
}

// benchJob runs the sjc job on spec over jobtest's in-memory network,
// checks that it grows a tree of want's size, and reports its time, the
// megabytes its parties sent and the tree's nodes.
func benchJob(b *testing.B, spec *job.Spec, want *tree.Tree, stepTimeout time.Duration) {
	b.Helper()
	secrets := map[string]job.Secrets{}
	for _, p := range spec.PartyNames() {
		secrets[p] = job.DirSecrets(filepath.Join(b.TempDir(), p))
	}
	t0, c0 := time.Now(), cputime.Used(b)
	rep, err := jobtest.Run(context.Background(), sjc.Kind{}, spec, jobtest.Options{Secrets: secrets, StepTimeout: stepTimeout})
	if err != nil {
		b.Fatal(err)
	}
	jobTime, jobCore := time.Since(t0), cputime.Used(b)-c0
	nodes, _ := want.Size()
	if got := rep.Result["nodes"]; got != nodes {
		b.Fatalf("job tree has %v nodes, in process %d", got, nodes)
	}
	var bytes int
	for _, s := range rep.Sent {
		bytes += s.Bytes
	}
	b.ReportMetric(jobTime.Seconds(), "job-s")
	b.ReportMetric(jobCore.Seconds(), "job-core-s")
	b.ReportMetric(float64(bytes)/1e6, "job-MB")
	b.ReportMetric(float64(nodes), "nodes")
}
