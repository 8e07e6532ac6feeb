package sjc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// writeNewFacts writes n new fact rows for writeRepeatStar's schema, keys
// into its dimensions of dims rows and a measure m of three decimals, so
// that nearly every row is distinct, with a class column of one value
// (sjc-predict does not read it).
func writeNewFacts(t testing.TB, path string, n, dims int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(uint64(n), 36))
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "rid,d1,d2,m,class,secret")
	for i := range n {
		fmt.Fprintf(w, "%d,k%d,k%d,%.3f,true,s%d\n", i, rng.IntN(dims), rng.IntN(dims), 10*rng.Float64(), rng.IntN(1000))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// predictNew trains on writeRepeatStar's star (12,000 rows over
// dimensions of 6), then classifies newFacts rows of new facts
// (writeNewFacts) read from src with an sjc-predict job, and returns the
// training spec and run, the prediction's report and the peak live heap
// during it.
func predictNew(t testing.TB, ctx context.Context, newFacts int, maxRows int64) (*job.Spec, *jobRun, *jobtest.Report, uint64, error) {
	t.Helper()
	dir := t.TempDir()
	spec := writeRepeatStar(t, dir, 12000, 6)
	train, err := runJobKind(t, ctx, sjc.Kind{}, spec, jobtest.Options{JobID: "train-1"})
	if err != nil {
		t.Fatal(err)
	}
	writeNewFacts(t, filepath.Join(dir, "P.csv"), newFacts, 6)
	ps := *spec
	ps.Kind, ps.Test, ps.Params = "sjc-predict", nil, map[string]any{"model": "train-1"}
	ps.Parties = []job.PartySpec{
		{Name: "facts", Tables: []job.TableSpec{{Name: "F", Source: &table.Source{Path: "P.csv", MaxRows: maxRows}}}},
		spec.Parties[1], spec.Parties[2],
	}
	peak := testkit.HeapPeak()
	// The target's second read and its writing of every row's line are in
	// the classify step: its time grows with the rows (ctx bounds the test).
	rep, err := jobtest.Run(ctx, sjc.PredictKind{}, &ps, jobtest.Options{JobID: "predict-1", Secrets: train.secrets, StepTimeout: time.Hour})
	return spec, train, rep, peak(), err
}

// TestPredictStreamsRows: sjc-predict reads the table it classifies as a
// stream and holds one row per way its rows are routed (join values and
// the side of each of its own predicates), not the rows: a fact table of
// 20,000 nearly all distinct rows is classified under a max_rows of
// 1,000, which refuses loading it whole, and every row's line in the
// predictions file is the trained tree's leaf for that row's one join row;
// what the parties send stays within the leakage profile.
func TestPredictStreamsRows(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const n = 20000
	spec, train, rep, _, err := predictNew(t, ctx, n, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if nodes, _ := train.tree.Size(); nodes < 5 {
		t.Fatalf("the trained tree has %d nodes; the case should grow a tree", nodes)
	}
	dir := spec.Dir
	schema := func(name string) map[string]table.Kind {
		out := map[string]table.Kind{}
		for c, k := range spec.Schema[name] {
			out[c] = table.Kind(k)
		}
		return out
	}
	if _, err := table.Open(ctx, table.Source{Path: filepath.Join(dir, "P.csv"), MaxRows: 1000}, "F", schema("F"), table.ReadOptions{}); !errors.Is(err, table.ErrTooLarge) {
		t.Fatalf("loading the new facts whole under max_rows 1000: %v, want a refusal", err)
	}
	facts, err := table.Load(filepath.Join(dir, "P.csv"), "F", schema("F"))
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]*table.Table{}
	for _, name := range []string{"D1", "D2"} {
		if dims[name], err = table.Load(filepath.Join(dir, name+".csv"), name, schema(name)); err != nil {
			t.Fatal(err)
		}
	}
	// Each fact row joins one row of each dimension, by key "k<i>" at row i.
	value := func(r int, s *tree.Split) (float64, string) {
		tb, row := facts, r
		if s.Table != "F" {
			key, _ := facts.Column(map[string]string{"D1": "d1", "D2": "d2"}[s.Table])
			tb = dims[s.Table]
			row, _ = strconv.Atoi(key.Str[r][1:])
		}
		col, _ := tb.Column(s.Column)
		if col.Num != nil {
			return col.Num[row], col.Str[row]
		}
		return 0, col.Str[row]
	}
	b, err := train.secrets["facts"].ReadSecret(sjc.PredictionsSecret("predict-1"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n+1 {
		t.Fatalf("%d prediction lines for %d rows", len(recs)-1, n)
	}
	got := map[string]uint64{}
	for r := range n {
		leaf := train.tree.Leaf(func(s *tree.Split) bool { return s.Holds(value(r, s)) })
		want := train.tree.Labels[leaf.Label()]
		got[want]++
		if rec := recs[r+1]; rec[0] != strconv.Itoa(r+1) || rec[len(rec)-1] != want {
			t.Fatalf("row %d: %v, want %s (header %v)", r+1, rec, want, recs[0])
		}
	}
	if fmt.Sprint(rep.Result["predicted"]) != fmt.Sprint(got) {
		t.Fatalf("predicted %v, the trained tree row by row %v", rep.Result["predicted"], got)
	}
	checkPredictStreamLeakage(t, rep, filepath.Join(dir, "P.csv"), facts)
	t.Logf("%d messages checked", len(rep.Sent))
}

// checkPredictStreamLeakage checks TestPredictStreamsRows's run against
// the leakage profile (the training's, over the new tables with one
// class): summaries, blinded join values, public results and control
// only, and no value of the new facts' (path, loaded as facts) measure
// or of the column the schema leaves out, in any message or in the log.
// Split from the test to keep it short.
func checkPredictStreamLeakage(t *testing.T, rep *jobtest.Report, path string, facts *table.Table) {
	t.Helper()
	allowed := []wire.Disclosure{wire.DiscloseClassSummary, wire.DiscloseSplitSummary, wire.DiscloseScore,
		wire.DisclosePSIBlinded, wire.DisclosePublicResult, wire.DiscloseControl}
	if out := rep.SentOutside(allowed...); len(out) > 0 {
		t.Errorf("%d messages outside the profile, first %s (%s)", len(out), out[0].Message.Type, out[0].Disclosure)
	}
	m, _ := facts.Column("m")
	all, err := table.Load(path, "P", nil)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := all.Column("secret")
	for i, col := range [][]string{m.Str, secret.Str} {
		for _, v := range col {
			if len(v) < 4 {
				continue // a short value's bytes may occur by chance
			}
			if ss := rep.SentHolding([]byte(v)); len(ss) > 0 {
				t.Fatalf("a message holds the new facts' value %q: %s from %s", v, ss[0].Message.Type, ss[0].From)
			}
			// The log's committed result holds the seconds of each phase,
			// whose digits may spell a measure's value: only the column
			// the schema leaves out is looked for there.
			if es := rep.LogHolding([]byte(v)); i == 1 && len(es) > 0 {
				t.Fatalf("the log holds the new facts' value %q", v)
			}
		}
	}
}

// TestPredictMemoryFigure (COHORT_PREDICT_FIGURE=ROWS) logs the time and
// the peak live heap of an sjc-predict job classifying ROWS new facts
// (predictNew): docs/sources.md's figure.
func TestPredictMemoryFigure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("COHORT_PREDICT_FIGURE"))
	if n <= 0 {
		t.Skip("set COHORT_PREDICT_FIGURE=ROWS to measure")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	start := time.Now()
	_, _, rep, peak, err := predictNew(t, ctx, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sjc-predict over %d new fact rows: train and predict %.2f s, peak live heap while predicting %d MiB, predicted %v",
		n, time.Since(start).Seconds(), peak>>20, rep.Result["predicted"])
}

// TestPredictSingleTable: a table that joins nothing is classified by its
// own predicates alone, and, when the model is one leaf (nothing splits
// it), every row is alike: one key, and every row's line gives the leaf.
func TestPredictSingleTable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for name, class := range map[string]func(i int) string{
		"split": func(i int) string { return strconv.FormatBool(i%40 < 20) },
		"leaf":  func(int) string { return "yes" },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var b bytes.Buffer
			b.WriteString("x,class\n")
			for i := range 200 {
				fmt.Fprintf(&b, "%d,%s\n", i%40, class(i))
			}
			if err := os.WriteFile(filepath.Join(dir, "T.csv"), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := &job.Spec{Kind: "sjc", Dir: dir, Source: "one.yaml",
				Parties: []job.PartySpec{{Name: "p1", Tables: []job.TableSpec{{Name: "T", Path: "T.csv"}}}},
				Schema:  map[string]map[string]string{"T": {"x": "numeric", "class": "class"}}}
			train, err := runJobKind(t, ctx, sjc.Kind{}, spec, jobtest.Options{JobID: "train-1"})
			if err != nil {
				t.Fatal(err)
			}
			if nodes, _ := train.tree.Size(); (nodes == 1) != (name == "leaf") {
				t.Fatalf("%d nodes", nodes)
			}
			ps := *spec
			ps.Kind, ps.Params = "sjc-predict", map[string]any{"model": "train-1"}
			if _, err := jobtest.Run(ctx, sjc.PredictKind{}, &ps, jobtest.Options{JobID: "predict-1", Secrets: train.secrets}); err != nil {
				t.Fatal(err)
			}
			out, err := train.secrets["p1"].ReadSecret(sjc.PredictionsSecret("predict-1"))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
			if err != nil || len(recs) != 201 {
				t.Fatalf("%d lines (%v)", len(recs), err)
			}
			for i, rec := range recs[1:] {
				if rec[len(rec)-1] != class(i) {
					t.Fatalf("row %d: %v, want %s", i+1, rec, class(i))
				}
			}
		})
	}
}
