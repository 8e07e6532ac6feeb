package sjc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
)

// BenchmarkHiddenGains grows one tree on real in-process nodes (libp2p,
// Raft; sim.Run) over a chain (GenChain, SJC_HIDE_TABLES tables, default
// 3, one party each; N from SJC_HIDE_N, default 2000, V = N/4, X = 5),
// in the clear and with hide_gains, and checks both trees have the same
// nodes. Metrics per mode (clear-, hidden-): wall-s, core-s (the CPU time
// of every node, all in this process, which a loaded machine does not
// inflate as it does wall-s), choose-s (the choose steps' seconds), MB
// (bytes sent by all parties, from result.json) and nodes.
//
//	SJC_HIDE_N=2000 go test ./sjc -run '^$' -bench HiddenGains -benchtime 1x
func BenchmarkHiddenGains(b *testing.B) {
	n, tables := envInt(b, "SJC_HIDE_N", 2000), envInt(b, "SJC_HIDE_TABLES", 3)
	ch, err := sjc.GenChain(sjc.ChainParams{Tables: tables, N: n, V: n / 4, X: 5, Seed: 1})
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
	for b.Loop() {
		var nodes [2]float64
		for i, hide := range []bool{false, true} {
			spec := *ch.Spec
			spec.Dir, spec.Source, spec.Test = dir, "bench.yaml", nil
			spec.Params = map[string]any{"hide_gains": hide}
			raw, err := spec.Marshal()
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(dir, "spec.yaml")
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				b.Fatal(err)
			}
			out := filepath.Join(b.TempDir(), "out")
			t0, c0 := time.Now(), cputime.Used(b)
			if _, err := sim.Run(context.Background(), path, sim.RunOptions{Kinds: job.Registry{"sjc": sjc.Kind{}}, Out: out}); err != nil {
				b.Fatal(err)
			}
			wall, core := time.Since(t0), cputime.Used(b)-c0
			raw, err = os.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				b.Fatal(err)
			}
			var res struct {
				Timing map[string]float64 `json:"timing"`
				Bytes  map[string]float64 `json:"bytes"`
				Nodes  float64            `json:"nodes"`
			}
			if err := json.Unmarshal(raw, &res); err != nil {
				b.Fatal(err)
			}
			var sent float64
			for _, x := range res.Bytes {
				sent += x
			}
			mode := map[bool]string{false: "clear-", true: "hidden-"}[hide]
			b.ReportMetric(wall.Seconds(), mode+"wall-s")
			b.ReportMetric(core.Seconds(), mode+"core-s")
			b.ReportMetric(res.Timing["choose"], mode+"choose-s")
			b.ReportMetric(sent/1e6, mode+"MB")
			b.ReportMetric(res.Nodes, mode+"nodes")
			nodes[i] = res.Nodes
		}
		if nodes[0] != nodes[1] {
			b.Fatalf("clear tree of %v nodes, hidden %v", nodes[0], nodes[1])
		}
	}
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return v
}
