package boost_test

import (
	"math"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// refScore scores m on the materialised join of the test tables data:
// accuracy, AUC and the number of join rows.
func refScore(g *joinprop.Graph, data map[string]*table.Table, m *boost.Model) (acc, a float64, rows int) {
	ts := refTables(g, data)
	var ms []float64
	var ys []bool
	correct := 0
	for _, row := range joinRows(g, ts) {
		x := m.BaseScore
		for _, tr := range m.Trees {
			x += tr.Leaf(func(s *tree.Split) bool {
				i := g.Index(s.Table)
				return ts[i].num[s.Column][row[i]] <= s.Num
			}).Weight
		}
		y := ts[0].y[row[0]] == m.PositiveClass
		if (x > 0) == y {
			correct++
		}
		ms, ys = append(ms, x), append(ys, y)
	}
	return float64(correct) / float64(len(ms)), auc(ms, ys), len(ms)
}

// TestJobTestSet: a star of three parties over real nodes with test
// tables (both test edges many-to-many too): result.json's test accuracy,
// AUC and rows, computed without joining the test tables, are those of
// the library's model on the materialised test join; every message
// (the test step's PSI and combo summaries included), log record and
// ledger entry keeps to the profile; on both backends.
func TestJobTestSet(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{boost.BackendPaillier, boost.BackendLattice} {
		c := starCase(t, 1, 60)
		c.test = starCase(t, 2, 45)
		p := testParams()
		p.Trees, p.Backend = 2, backend
		res, out, capt := simRun(t, c, p)
		want, err := boost.Train(c.g, c.data, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
			t.Fatalf("%s: the job's model differs from the library's\n got: %s\nwant: %s", backend, got, w)
		}
		acc, a, rows := refScore(c.g, c.test.data, want)
		got, ok := res["test"].(map[string]any)
		if !ok {
			t.Fatalf("%s: result.json has no test score: %v", backend, res["test"])
		}
		if got["rows"] != float64(rows) || math.Abs(got["accuracy"].(float64)-acc) > 1e-12 || math.Abs(got["auc"].(float64)-a) > 1e-12 {
			t.Fatalf("%s: test score %v, want accuracy %v auc %v rows %d (the materialised test join)", backend, got, acc, a, rows)
		}
		t.Logf("%s: test set: accuracy %.4f, AUC %.4f over %d join rows", backend, acc, a, rows)
		if backend == boost.BackendLattice {
			checkLatticeLeakage(t, c, want, res, out, capt, p.Bins)
		} else {
			checkLeakage(t, c, want, res, out, capt, false)
		}
	}
}
