package bicluster_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/wire"
)

// levelConsortium writes a spec of three parties, each holding twelve
// rows of ten columns; party p has a block of rows[p] rows on columns 0–5
// at levels[p] (none at level 0), every other cell 0, so one local
// bicluster each on the same columns: locals at the same level are
// similar, at 10 and 100 they are not. min_rows is 5. It returns the
// spec's path, the party names and every party's cell values.
func levelConsortium(t testing.TB, levels []float64, rows []int) (string, []string, [][]float64) {
	t.Helper()
	dir := t.TempDir()
	names := []string{"org01", "org02", "org03"}
	var spec strings.Builder
	spec.WriteString("kind: bicluster\nparties:\n")
	const height, width = 12, 10
	var values [][]float64
	for p, name := range names {
		data := make([]float64, height*width)
		for r := range height {
			for j := range width {
				if r < rows[p] && j < 6 && levels[p] > 0 {
					data[r*width+j] = levels[p] + float64(p+r+j)/97
				}
			}
		}
		values = append(values, data)
		m, err := bicluster.NewMatrix(height, width, data)
		if err != nil {
			t.Fatal(err)
		}
		for j := range width {
			m.ColNames = append(m.ColNames, fmt.Sprintf("c%d", j))
		}
		for r := range height {
			m.RowIDs = append(m.RowIDs, rowID(p*100+r))
		}
		var buf bytes.Buffer
		if err := synth.WriteCSV(&buf, m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: m, path: %s.csv}]\n", name, name)
	}
	spec.WriteString("params: {min_rows: 5}\n")
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, names, values
}

// TestJobDissimilarPairRevealsNothing: two parties hold a local bicluster
// each on the same columns at levels 10 and 100, three rows each, and the
// job runs with min_rows 5. The pair test finds them dissimilar, neither
// alone reaches min_rows, and so no sum of theirs is ever decrypted: the
// log holds neither party's mean nor their sum. (The member-against-group
// merge grouped them by columns, decrypted the group's sums, and each party
// learnt the other's representative by subtraction before the misfits were
// split off and dropped.)
func TestJobDissimilarPairRevealsNothing(t *testing.T) {
	t.Parallel()
	path, names, _ := levelConsortium(t, []float64{10, 100, 0}, []int{3, 3, 0})
	rep := runJob(t, path, dealt(t, names))
	_, gs := globals(t, rep.Result)
	checkMergeDisclosure(t, rep, gs)
	// The pair was tested and found dissimilar.
	found := false
	for _, rec := range rep.Records() {
		if rec.Step.Phase == "test" {
			var d struct {
				Similar  []bool            `msgpack:"similar"`
				Excluded map[string]string `msgpack:"excluded"`
			}
			if err := wire.Unmarshal(rec.Decision, &d); err != nil {
				t.Fatal(err)
			}
			found = len(d.Similar) > 0 && !slices.Contains(d.Similar, true)
		}
	}
	if !found {
		t.Fatal("no dissimilar pair test committed: the scenario did not arise")
	}
	if len(gs) != 0 {
		t.Fatalf("published %v: two 3-row locals under min_rows 5", gs)
	}
}

// TestJobLoneLocalNotDecrypted: org03's local bicluster (level 100) is
// similar to no other, and alone it holds min_rows rows. Its group has one
// contributor, so its sums would be its representative times its count:
// the merge aggregates only the group of org01's and org02's locals (as
// checkMergeDisclosure checks every group), and the result publishes that
// one (min_group_parties 2: a group of two is kept).
func TestJobLoneLocalNotDecrypted(t *testing.T) {
	t.Parallel()
	path, names, _ := levelConsortium(t, []float64{10, 10, 100}, []int{6, 6, 6})
	withParams(t, path, "min_group_parties: 2")
	rep := runJob(t, path, dealt(t, names))
	_, gs := globals(t, rep.Result)
	checkMergeDisclosure(t, rep, gs)
	checkBitsMessages(t, rep)
	if len(gs) != 1 {
		t.Fatalf("published %d biclusters, want the one of org01 and org02", len(gs))
	}
	for _, g := range gs {
		for _, m := range g.Means {
			if m > 50 {
				t.Fatalf("published mean %v: org03's lone local was decrypted", m)
			}
		}
	}
}

// withParams adds params to the spec at path (written by levelConsortium
// or consortium, whose params are one flow mapping).
func withParams(t testing.TB, path, params string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(string(raw), "params: {", "params: {"+params+", ", 1)
	if out == string(raw) {
		t.Fatal("the spec has no params mapping")
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
