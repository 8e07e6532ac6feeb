package boost_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// TestPredict trains a star of three parties over real nodes, then scores
// new tables with a boost-predict job naming the model, on the same nodes
// (sim's kept state; sim checks every file against the schema, so the
// class table's keeps its class column, which the job does not read): the join rows scored and predicted positive, and every class
// row's margins in the class holder's kept predictions, are those of the
// library's model on the materialised join of the new tables; the audit
// ledgers show only PSI, split summaries and the public result.
func TestPredict(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, nc := starCase(t, 1, 60), starCase(t, 2, 45)
	p := testParams()
	p.Trees = 2
	dir := t.TempDir()
	id, res := trainThenPredict(ctx, t, c, nc, p, dir)

	want, rows, positive := libraryMargins(t, c, nc, p)
	if res["model"] != id || res["rows"] != float64(rows) || res["positive"] != float64(positive) {
		t.Fatalf("prediction result %v, want %d join rows, %d positive", res, rows, positive)
	}
	got := keptMargins(t, filepath.Join(dir, "pred", "predictions.csv"))
	for r, ms := range want {
		slices.Sort(ms)
		slices.Sort(got[r])
		if !slices.Equal(ms, got[r]) {
			t.Fatalf("class row %d: margins %v kept, %v on the materialised join", r, got[r], ms)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("predictions for %d class rows, the join has %d", len(got), len(want))
	}
	checkPredictLedgers(t, filepath.Join(dir, "pred", "audit"), c.spec.PartyNames())
	t.Logf("%d new join rows scored, %d positive, over %d class rows", rows, positive, len(want))
}

// trainThenPredict writes c's tables (as NAME.csv) and nc's (as
// NAME_new.csv) to dir, trains c's spec with p over real nodes (out in
// dir/train), then runs a boost-predict job naming the trained model on
// the new tables with the same kept state (out in dir/pred). It returns
// the model's job id and the prediction job's result; split from
// TestPredict so the runs, the reference and the checks read apart.
func trainThenPredict(ctx context.Context, t *testing.T, c, nc *joinCase, p boost.Params, dir string) (string, map[string]any) {
	t.Helper()
	state := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for name, text := range c.csv {
		write(name+".csv", text)
	}
	for name, text := range nc.csv {
		write(name+"_new.csv", text)
	}
	spec := *c.spec
	spec.Params = map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "learning_rate": p.LearningRate,
		"lambda": p.Lambda, "min_child_weight": p.MinChildWeight, "loss": p.Loss}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	kinds := job.Registry{"boost": boost.Kind{}, "boost-predict": boost.PredictKind{}}
	opts := sim.RunOptions{Kinds: kinds, Setup: simtest.ThresholdKeys(keyBits), Timing: simTiming, State: state}
	opts.Out = filepath.Join(dir, "train")
	trained, err := sim.Run(ctx, write("train.yaml", string(raw)), opts)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := trained["job"].(string)

	ps := spec
	ps.Kind, ps.Params, ps.Parties = "boost-predict", map[string]any{"model": id}, nil
	for _, party := range spec.Parties {
		q := job.PartySpec{Name: party.Name}
		for _, tb := range party.Tables {
			q.Tables = append(q.Tables, job.TableSpec{Name: tb.Name, Path: tb.Name + "_new.csv"})
		}
		ps.Parties = append(ps.Parties, q)
	}
	if raw, err = ps.Marshal(); err != nil {
		t.Fatal(err)
	}
	opts.Out = filepath.Join(dir, "pred")
	res, err := sim.Run(ctx, write("predict.yaml", string(raw)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return id, res
}

// libraryMargins trains the library's model on c with p and scores the
// materialised join of nc's tables: every join row's margin by its class
// row, the number of join rows, and how many have a positive margin.
func libraryMargins(t *testing.T, c, nc *joinCase, p boost.Params) (map[int][]float64, int, int) {
	t.Helper()
	m, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	ts := refTables(nc.g, nc.data)
	want := map[int][]float64{} // by class row: its join rows' margins
	rows, positive := 0, 0
	for _, row := range joinRows(nc.g, ts) {
		x := m.BaseScore
		for _, tr := range m.Trees {
			x += tr.Leaf(func(s *tree.Split) bool {
				i := nc.g.Index(s.Table)
				return ts[i].num[s.Column][row[i]] <= s.Num
			}).Weight
		}
		want[row[0]] = append(want[row[0]], x)
		rows++
		if x > 0 {
			positive++
		}
	}
	return want, rows, positive
}

// keptMargins reads the class holder's kept predictions (class row, join
// rows, margin per line) as each class row's margins, one per join row.
func keptMargins(t *testing.T, path string) map[int][]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[int][]float64{}
	for _, rec := range recs[1:] {
		r, _ := strconv.Atoi(rec[0])
		n, _ := strconv.Atoi(rec[1])
		x, _ := strconv.ParseFloat(rec[2], 64)
		for range n {
			got[r] = append(got[r], x)
		}
	}
	return got
}

// checkPredictLedgers checks that every party's audit ledger in dir shows
// only PSI, combo split summaries, control and the public result.
func checkPredictLedgers(t *testing.T, dir string, parties []string) {
	t.Helper()
	for _, party := range parties {
		entries, err := audit.ReadFile(filepath.Join(dir, party+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch d := wire.Disclosure(e.Disclosure); {
			case d == wire.DisclosePSIBlinded, d == wire.DiscloseSplitSummary && e.Type == boost.TypeCombos,
				d == wire.DisclosePublicResult && e.Type == "job/output", d == wire.DiscloseControl:
			default:
				t.Errorf("%s's ledger: %s to %s as %s", party, e.Type, e.Peer, e.Disclosure)
			}
		}
	}
}
