package sjc_test

import (
	"context"
	"encoding/csv"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/tree"
)

func fmtU(x uint64) string { return strconv.FormatUint(x, 10) }

// TestPredict trains a model with the sjc job, then classifies the test
// tables with an sjc-predict job naming it: the predicted join rows per
// label are those of the trained tree applied to every row of the
// materialised test join, and the target's party keeps per-row counts.
func TestPredict(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, _ := chainCase(t, nil)
	train, err := runJob(t, ctx, spec, jobtest.Options{JobID: "train-1"})
	if err != nil {
		t.Fatal(err)
	}
	// The same tables, schema and join, over the test files.
	ps := *spec
	ps.Kind, ps.Test, ps.Params = "sjc-predict", nil, map[string]any{"model": "train-1"}
	ps.Parties = nil
	for _, p := range spec.Parties {
		q := job.PartySpec{Name: p.Name}
		for _, tb := range p.Tables {
			q.Tables = append(q.Tables, job.TableSpec{Name: tb.Name, Path: tb.Name + "_test.csv"})
		}
		ps.Parties = append(ps.Parties, q)
	}
	rep, err := jobtest.Run(ctx, sjc.PredictKind{}, &ps, jobtest.Options{JobID: "predict-1", Secrets: train.secrets})
	if err != nil {
		t.Fatal(err)
	}

	g, err := sjc.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	test := map[string]string{}
	for name := range spec.Test {
		test[name] = readFile(t, filepath.Join(spec.Dir, name+"_test.csv"))
	}
	j, err := reftree.Materialise(g, loadTables(t, spec, test))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	perRow := map[int32]map[string]uint64{}
	for r := 0; r < j.Len(); r++ {
		leaf := train.tree.Leaf(func(s *tree.Split) bool {
			ti := g.Index(s.Table)
			row := j.Rows[ti][r]
			col, _ := j.Tables[ti].Column(s.Column)
			x := 0.0
			if col.Num != nil {
				x = col.Num[row]
			}
			return s.Holds(x, col.Str[row])
		})
		l := train.tree.Labels[leaf.Label()]
		want[l]++
		if perRow[j.Rows[0][r]] == nil {
			perRow[j.Rows[0][r]] = map[string]uint64{}
		}
		perRow[j.Rows[0][r]][l]++
	}
	got, _ := rep.Result["predicted"].(map[string]uint64)
	for _, l := range train.tree.Labels {
		if got[l] != want[l] {
			t.Fatalf("predicted %v, the trained tree on the test join %v", rep.Result["predicted"], want)
		}
	}
	target := g.Tables[0].Party
	b, err := train.secrets[target].ReadSecret(sjc.PredictionsSecret("predict-1"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[0]
	for i, rec := range recs[1:] {
		for k, l := range train.tree.Labels {
			if w := perRow[int32(i)][l]; rec[k+1] != fmtU(w) {
				t.Fatalf("row %d: %s join rows predicted %s, want %d (header %v)", i+1, l, rec[k+1], w, header)
			}
		}
	}
	t.Logf("predicted %v over %d test join rows; %d target rows", want, j.Len(), len(recs)-1)
}
