package sim_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize/onetable"
	"github.com/cohortdm/cohort/bicluster"
	bundled "github.com/cohortdm/cohort/examples"
	"github.com/cohortdm/cohort/integrate"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/quantile"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sum"
)

// poison is a cell value that must never reach a log, an error or a
// message: every failure text a job commits is read by every member.
const poison = "SECRET-4417"

// TestFailureTextsCarryNoValueNorPath runs every bundled example over real
// nodes with one party's input spoilt: a cell of a column replaced by the
// poison, and the party's table file missing. Whatever the job commits as
// its failure (the error and every party's causes) names the party, the
// table and the column, never the cell's value nor a path on the node.
func TestFailureTextsCarryNoValueNorPath(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every example twice over real nodes")
	}
	kinds := job.Registry{"sum": sum.Kind{}, "quantile": quantile.Kind{}, "bicluster": bicluster.Kind{},
		"sjc": sjc.Kind{}, "integrate": integrate.Kind{}, "anonymize": onetable.Kind{}}
	for _, tc := range []struct {
		example, file, column string
	}{
		{"sum", "data/south.csv", "v"},
		{"quantile", "data/west.csv", "stay"},
		{"bicluster", "data/south.csv", "c3"},
		{"sjc", "data/visits.csv", "visits"},
		{"sjc", "data/visits.csv", "patient"},
		{"integrate", "data/north.csv", "sex"},
		{"integrate", "data/south.csv", "diagnosis"},
		{"anonymize", "data/patients.csv", "sex"},
		{"anonymize", "data/patients.csv", "readmitted"},
	} {
		for _, spoil := range []string{"cell", "missing"} {
			t.Run(tc.example+"/"+tc.column+"/"+spoil, func(t *testing.T) {
				t.Parallel() // each case its own extracted examples and cluster
				dir := t.TempDir()
				if err := bundled.Extract(dir); err != nil {
					t.Fatal(err)
				}
				ex := filepath.Join(dir, tc.example)
				path := filepath.Join(ex, tc.file)
				if spoil == "cell" {
					poisonCell(t, path, tc.column)
				} else if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				// Not sim.Run: it checks the tables itself first, on the
				// operator's machine. The nodes must find the fault.
				raw, err := os.ReadFile(filepath.Join(ex, "spec.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				spec, err := job.ParseSpec(raw, "spec.yaml")
				if err != nil {
					t.Fatal(err)
				}
				c := simtest.StartCluster(t, ctx, spec.PartyNames(), sim.ClusterOptions{Kinds: kinds, TablesDir: ex,
					Setup: simtest.ThresholdKeys(keyBits), Timing: node.Timing{SendMS: 5000, StepMS: 60000}, Policy: policy.Default()})
				defer c.Close()
				id, err := c.Running()[0].Submit(ctx, raw)
				if err != nil {
					t.Fatal(err)
				}
				rec, err := c.Running()[0].Wait(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Status == node.StatusDone {
					t.Logf("the job ran to the end: the spoilt %s did not stop it", spoil)
					return
				}
				t.Logf("%s %v", rec.Error, rec.Failures)
				text := rec.Error + fmt.Sprint(rec.Failures)
				if strings.Contains(text, poison) {
					t.Errorf("the failure carries the cell's value:\n%s", text)
				}
				if strings.Contains(text, dir) || strings.Contains(text, os.TempDir()+"/") {
					t.Errorf("the failure carries a path of the node:\n%s", text)
				}
				// A missing file is refused at admission with the one
				// answer a forbidden table gets, naming the spec's table.
				unavailable := spoil != "cell" && strings.Contains(text, "rule tables: table ") && strings.Contains(text, "is not available to this job at this node")
				if !unavailable && !strings.Contains(text, tc.file[strings.LastIndex(tc.file, "/")+1:]) && !strings.Contains(text, tc.column) {
					t.Errorf("the failure names neither the file nor the column:\n%s", text)
				}
			})
		}
	}
}

// poisonCell replaces column's value in the file's second data row.
func poisonCell(t *testing.T, path, column string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := slices.Index(rows[0], column)
	if c < 0 || len(rows) < 3 {
		t.Fatalf("%s has no column %s", path, column)
	}
	rows[2][c] = poison
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(out)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
