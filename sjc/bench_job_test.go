package sjc_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/tree"
)

// BenchmarkJobVsInProcess grows one tree on a two-party chain (GenChain,
// 2 tables, N from SJC_BENCH_N, default 20000, V = N/4, X = 5) in process
// (sjc.Build) and as the job over jobtest's in-memory network (PSI,
// messages, a step per level, checkpoints), and checks both trees equal.
// Metrics: inproc-s, job-s, job-MB (bytes sent by all parties).
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
	for b.Loop() {
		t0 := time.Now()
		want, err := sjc.Build(g, ch.Train, sjc.DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		inproc := time.Since(t0)
		secrets := map[string]job.Secrets{}
		for _, p := range spec.PartyNames() {
			secrets[p] = job.DirSecrets(filepath.Join(b.TempDir(), p))
		}
		t0 = time.Now()
		rep, err := jobtest.Run(context.Background(), sjc.Kind{}, &spec, jobtest.Options{Secrets: secrets, StepTimeout: 10 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		jobTime := time.Since(t0)
		nodes, _ := want.Size()
		if got := rep.Result["nodes"]; got != nodes {
			b.Fatalf("job tree has %v nodes, in process %d", got, nodes)
		}
		var bytes int
		for _, s := range rep.Sent {
			bytes += s.Bytes
		}
		b.ReportMetric(inproc.Seconds(), "inproc-s")
		b.ReportMetric(jobTime.Seconds(), "job-s")
		b.ReportMetric(float64(bytes)/1e6, "job-MB")
		b.ReportMetric(float64(nodes), "nodes")
		_ = tree.DefaultCF
	}
}
