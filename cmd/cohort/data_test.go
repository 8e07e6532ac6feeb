package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/pgtest"
)

// runApp runs the CLI in-process.
func runApp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	a := &app{format: "text", stdout: &out, stderr: &out, getenv: os.Getenv}
	cmd := a.root()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// A CSV goes through every source type and comes back with the same rows.
func TestDataImportExport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join("..", "..", "examples", "sum", "data", "north.csv")
	want, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	steps := [][]string{
		{"data", "import", in, p("n.parquet")},
		{"data", "export", p("n.parquet"), p("n1.csv")},
		{"data", "import", in, "sqlite:" + p("n.db") + "#adm"},
		{"data", "export", "sqlite:" + p("n.db") + "#adm", p("n2.csv")},
	}
	outs := []string{"n2.csv"}
	if srv := pgtest.Try(t); srv != nil {
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		steps = append(steps,
			[]string{"data", "import", in, "postgres-env:COHORT_TEST_PG#adm"},
			[]string{"data", "export", "postgres-env:COHORT_TEST_PG#adm", p("n3.csv")})
		outs = append(outs, "n3.csv")
	}
	for _, s := range steps {
		if out, err := runApp(t, s...); err != nil || !strings.Contains(out, "copied 3 rows") {
			t.Fatalf("%v: %v\n%s", s, err, out)
		}
	}
	for _, f := range outs {
		got, _ := os.ReadFile(p(f))
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant\n%s", f, got, want)
		}
	}
	// Parquet keeps its columns in name order.
	if got, _ := os.ReadFile(p("n1.csv")); !strings.HasPrefix(string(got), "v,ward\n12,cardio\n") {
		t.Errorf("n1.csv:\n%s", got)
	}
	out, err := runApp(t, "data", "export", "--query", "SELECT ward FROM adm WHERE v > 10", "sqlite:"+p("n.db"), p("q.csv"))
	if err != nil || !strings.Contains(out, "copied 2 rows") {
		t.Fatalf("query export: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "import", in, p("n.parquet")}, "exists"},
		{[]string{"data", "export", "sqlite:" + p("missing.db") + "#adm", p("x.csv")}, "missing.db"},
		{[]string{"data", "export", "sqlite:" + p("n.db") + "#adm", "sqlite:" + p("y.db") + "#t"}, "export writes a CSV or Parquet file"},
		{[]string{"data", "import", "sqlite:" + p("n.db") + "#adm", p("y.csv")}, "import reads a CSV or Parquet file"},
		{[]string{"data", "export", "--query", "DELETE FROM adm", "sqlite:" + p("n.db"), p("y.csv")}, "read-only SELECT"},
		{[]string{"data", "import", "--schema", "v=number", in, p("y.csv")}, "unknown column kind"},
		{[]string{"data", "bogus"}, "unknown"},
	} {
		if _, err := runApp(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	for _, f := range []string{"x.csv", "y.csv", "y.db"} {
		if _, err := os.Stat(p(f)); !os.IsNotExist(err) {
			t.Errorf("a failed command left %s", f)
		}
	}
}
