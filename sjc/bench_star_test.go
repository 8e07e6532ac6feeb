package sjc_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
)

// writeStar writes a star schema: a fact table F of n rows (party facts:
// keys d1 and d2, a numeric measure m, the class) and two dimension tables
// of 1000 rows (parties dim1, dim2: a numeric and a categorical attribute
// each). The class depends on the measure and both dimensions' attributes,
// with 10% noise. Every fact row joins exactly one row of each dimension,
// so the join has n rows.
func writeStar(tb testing.TB, dir string, n int) *job.Spec {
	tb.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 17))
	const dims = 1000
	num := make([][]int, 2)
	cat := make([][]string, 2)
	for d := range 2 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("D%d.csv", d+1)))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, "k,x,c")
		num[d], cat[d] = make([]int, dims), make([]string, dims)
		for k := range dims {
			num[d][k] = rng.IntN(100)
			cat[d][k] = fmt.Sprintf("c%d", rng.IntN(8))
			fmt.Fprintf(w, "k%d,%d,%s\n", k, num[d][k], cat[d][k])
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
	f, err := os.Create(filepath.Join(dir, "F.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "d1,d2,m,class")
	for range n {
		a, b, m := rng.IntN(dims), rng.IntN(dims), rng.IntN(1000)
		yes := (m > 500 && num[0][a] > 40) || (cat[1][b] == "c3" && num[1][b] < 60)
		if rng.IntN(10) == 0 {
			yes = !yes
		}
		cls := "no"
		if yes {
			cls = "yes"
		}
		w.WriteString("k" + strconv.Itoa(a) + ",k" + strconv.Itoa(b) + "," + strconv.Itoa(m) + "," + cls + "\n")
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return &job.Spec{
		Kind: "sjc", Dir: dir, Source: "star.yaml",
		Parties: []job.PartySpec{
			{Name: "facts", Tables: []job.TableSpec{{Name: "F", Path: "F.csv"}}},
			{Name: "dim1", Tables: []job.TableSpec{{Name: "D1", Path: "D1.csv"}}},
			{Name: "dim2", Tables: []job.TableSpec{{Name: "D2", Path: "D2.csv"}}},
		},
		Schema: map[string]map[string]string{
			"F":  {"d1": "key", "d2": "key", "m": "numeric", "class": "class"},
			"D1": {"k": "key", "x": "numeric", "c": "categorical"},
			"D2": {"k": "key", "x": "numeric", "c": "categorical"},
		},
		Join: []string{"F.d1 = D1.k", "F.d2 = D2.k"},
	}
}

// BenchmarkStarFact grows one tree (default params) over a star: a
// fact table of SJC_FACT_N rows (default 100,000) and two 1000-row
// dimension tables of two other parties, in process (sjc.Build, tables
// already loaded) and as the job over jobtest's in-memory network (which
// reads the CSV files itself). Metrics: load-s (reading the tables in
// process), inproc-s, inproc-core-s (CPU time of every thread, the
// garbage collector's included, while sjc.Build runs), core-us/row
// (inproc-core-s per fact row), job-s, job-MB, nodes. SJC_FACT_JOB=0 skips
// the job; SJC_FACT_DIR=DIR writes the tables and spec.yaml there (for
// `cohort sim DIR/spec.yaml`, real nodes) instead of a temporary dir.
//
//	SJC_FACT_N=10000000 go test ./sjc -run '^$' -bench StarFact -benchtime 1x -timeout 60m
func BenchmarkStarFact(b *testing.B) {
	n := 100000
	if s := os.Getenv("SJC_FACT_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	if d := os.Getenv("SJC_FACT_DIR"); d != "" {
		// Keep the tables and a spec for `cohort sim DIR/spec.yaml`.
		dir = d
	}
	spec := writeStar(b, dir, n)
	if raw, err := spec.Marshal(); err != nil {
		b.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	g, err := sjc.NewGraph(spec)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		t0 := time.Now()
		data := map[string]*table.Table{}
		for name, cols := range spec.Schema {
			schema := map[string]table.Kind{}
			for c, k := range cols {
				schema[c] = table.Kind(k)
			}
			if data[name], err = table.Load(filepath.Join(dir, name+".csv"), name, schema); err != nil {
				b.Fatal(err)
			}
		}
		load := time.Since(t0)
		runtime.GC()
		t0, c0 := time.Now(), cputime.Used(b)
		want, err := sjc.Build(g, data, sjc.DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		inproc, core := time.Since(t0), cputime.Used(b)-c0
		data = nil
		b.ReportMetric(load.Seconds(), "load-s")
		b.ReportMetric(inproc.Seconds(), "inproc-s")
		b.ReportMetric(core.Seconds(), "inproc-core-s")
		b.ReportMetric(float64(core.Microseconds())/float64(n), "core-us/row")
		if os.Getenv("SJC_FACT_JOB") != "0" {
			benchJob(b, spec, want, 30*time.Minute)
		}
	}
}
