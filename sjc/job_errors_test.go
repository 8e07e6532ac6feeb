package sjc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
)

// TestJobBadInput: each kind of bad input fails the job (or its
// validation) with an error naming the table and column, or the edge.
func TestJobBadInput(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"T1": "J1,J2,Class\na,x,C1\nb,x,C2\nb,y,C1\nc,y,C2\n",
		"T2": "J1,Age\na,3\nb,20\nc,5\nd,7\n",
		"T3": "J2,Note\nx,n1\ny,n2\n",
	}
	base := func() *job.Spec {
		return &job.Spec{
			Kind: "sjc", Source: "bad.yaml",
			Parties: []job.PartySpec{
				{Name: "p1", Tables: []job.TableSpec{{Name: "T1", Path: "T1.csv"}}},
				{Name: "p2", Tables: []job.TableSpec{{Name: "T2", Path: "T2.csv"}}},
				{Name: "p3", Tables: []job.TableSpec{{Name: "T3", Path: "T3.csv"}}},
			},
			Schema: map[string]map[string]string{
				"T1": {"J1": "key", "J2": "key", "Class": "class"},
				"T2": {"J1": "key", "Age": "numeric"},
				"T3": {"J2": "key", "Note": "categorical"},
			},
			Join: []string{"T1.J1 = T2.J1", "T1.J2 = T3.J2"},
		}
	}
	cases := []struct {
		name  string
		edit  func(s *job.Spec, csv map[string]string)
		wants []string
	}{
		{"cyclic join", func(s *job.Spec, _ map[string]string) {
			s.Schema["T2"]["J2"] = "key"
			s.Join = append(s.Join, "T2.J2 = T3.J2")
		}, []string{"cycle", "T1", "T2", "T3"}},
		{"no class column", func(s *job.Spec, _ map[string]string) { s.Schema["T1"]["Class"] = "categorical" }, []string{"class"}},
		{"unknown column", func(s *job.Spec, _ map[string]string) { s.Schema["T2"]["Height"] = "numeric" }, []string{"T2", "Height"}},
		{"text in a numeric column", func(_ *job.Spec, csv map[string]string) {
			csv["T2"] = "J1,Age\na,3\nb,twenty\n"
		}, []string{"T2", "Age", "T2.csv:3", "not a finite number"}},
		{"no common join value", func(_ *job.Spec, csv map[string]string) {
			csv["T3"] = "J2,Note\nq,n1\nr,n2\n"
		}, []string{"T1.J2 = T3.J2", "no join value in common"}},
		{"join key with no match", func(_ *job.Spec, csv map[string]string) {
			// Every edge shares a value, but no T1 row matches on both.
			csv["T1"] = "J1,J2,Class\na,q,C1\nz,x,C2\n"
			csv["T2"] = "J1,Age\na,3\n"
		}, []string{"T1", "joins rows of every other table"}},
		{"test set without a table", func(s *job.Spec, _ map[string]string) {
			s.Test = map[string]string{"T1": "T1.csv"}
		}, []string{"test", "T2"}},
		{"bad param", func(s *job.Spec, _ map[string]string) { s.Params = map[string]any{"max_depth": -1} }, []string{"max_depth"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			spec := base()
			csv := map[string]string{}
			for k, v := range good {
				csv[k] = v
			}
			c.edit(spec, csv)
			spec.Dir = t.TempDir()
			for name, text := range csv {
				if err := os.WriteFile(filepath.Join(spec.Dir, name+".csv"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := runJob(t, ctx, spec, jobtest.Options{})
			if err == nil {
				t.Fatal("the job succeeded")
			}
			t.Log(err)
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			// The error reaches the log as the party's failure reason:
			// it names the row, never the private cell.
			if strings.Contains(err.Error(), "twenty") {
				t.Errorf("error %q quotes a private cell value", err)
			}
		})
	}
}
