package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/transform"
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
	t.Parallel()
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
		// A variable no other test reads (t.Setenv would keep the test
		// from running beside the others: starting the server takes seconds).
		const env = "COHORT_TEST_PG_DATA_IMPORT_EXPORT"
		os.Setenv(env, srv.ConnString(srv.Password))
		t.Cleanup(func() { os.Unsetenv(env) })
		steps = append(steps,
			[]string{"data", "import", in, "postgres-env:" + env + "#adm"},
			[]string{"data", "export", "postgres-env:" + env + "#adm", p("n3.csv")})
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

// transform recodes a table and decode-tree maps a tree grown on the
// recoded table back: the class flips at x = 50, so any gini or entropy
// miner splits the recoded x between the recodings of 49 and 50, which
// decodes to x <= 49.5, from Cohort's tree JSON and from the sklearn-style
// export, with the key alone and with the table.
func TestDataTransformDecodeTree(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var csv strings.Builder
	csv.WriteString("id,x,z,cat,y\n")
	for i := range 100 {
		y := "A"
		if i >= 50 {
			y = "B"
		}
		fmt.Fprintf(&csv, "%d,%d,%d,c%d,%s\n", 1000+i, i, (i*37)%23, i%3, y)
	}
	if err := os.WriteFile(p("in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"data", "transform", "--schema", "id=id,x=numeric,z=numeric,cat=categorical,y=class", p("in.csv"), "--class", "y", "--out", p("out")}
	if out, err := runApp(t, args...); err != nil || !strings.Contains(out, "recoded 100 rows, 2 numeric columns") {
		t.Fatalf("transform: %v\n%s", err, out)
	}
	if st, err := os.Stat(p("out/transform.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	raw, _ := table.Load(p("in.csv"), "in", nil)
	rec, err := table.Load(p("out/in.csv"), "in", nil)
	if err != nil || rec.NumRows() != 100 {
		t.Fatalf("recoded table: %v", err)
	}
	for _, name := range []string{"id", "x", "z", "cat", "y"} {
		a, _ := raw.Column(name)
		b, _ := rec.Column(name)
		same := slices.Equal(a.Str, b.Str)
		if same != (name == "id" || name == "cat" || name == "y") {
			t.Errorf("column %s: unchanged %v", name, same)
		}
	}
	x, _ := rec.Column("x")
	lo, hi := math.Inf(-1), math.Inf(1)
	for i, v := range x.Num {
		if i < 50 {
			lo = max(lo, v)
		} else {
			hi = min(hi, v)
		}
	}
	thr := (lo + hi) / 2
	one := fmt.Sprintf(`{"split":{"party":"","table":"in","column":"x","op":"<=","value":%v},"counts":{"A":50,"B":50},
		"left":{"leaf":"A","counts":{"A":50,"B":0}},"right":{"leaf":"B","counts":{"A":0,"B":50}}}`, thr)
	sk := fmt.Sprintf(`{"feature_names":["z","x"],"classes":["A","B"],"children_left":[1,-1,-1],"children_right":[2,-1,-1],
		"feature":[1,-2,-2],"threshold":[%v,-2,-2],"n_node_samples":[100,50,50],"value":[[[0.5,0.5]],[[1,0]],[[0,1]]]}`, thr)
	os.WriteFile(p("tree.json"), []byte(one), 0o644)
	os.WriteFile(p("sk.json"), []byte(sk), 0o644)
	want := `{"split":{"party":"","table":"in","column":"x","op":"<=","value":49.5}`
	for _, extra := range [][]string{{p("tree.json")}, {"--table", p("in.csv"), p("tree.json")}, {p("sk.json")}} {
		out, err := runApp(t, append([]string{"data", "decode-tree", "--key", p("out/transform.key")}, extra...)...)
		if err != nil {
			t.Fatalf("decode-tree %v: %v\n%s", extra, err, out)
		}
		if extra[0] == p("sk.json") {
			want = strings.Replace(want, `"table":"in"`, `"table":""`, 1)
		}
		if !strings.HasPrefix(out, want) {
			t.Errorf("decode-tree %v:\n%s\nwant prefix %s", extra, out, want)
		}
	}
	os.WriteFile(p("bad.json"), []byte(strings.Replace(one, `"column":"x"`, `"column":"w"`, 1)), 0o644)
	os.WriteFile(p("bad.key"), []byte(`{"format":"cohort-transform-key","version":1}`), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args, "exists"},
		{[]string{"data", "transform", p("in.csv"), "--out", p("o2")}, "--class and --out are required"},
		{[]string{"data", "transform", p("in.csv"), "--class", "nope", "--out", p("o3")}, "class"},
		{[]string{"data", "transform", p("in.csv"), "--class", "y", "--direction", "up", "--out", p("o4")}, "direction"},
		{[]string{"data", "decode-tree", p("tree.json")}, "--key is required"},
		{[]string{"data", "decode-tree", "--key", p("out/transform.key"), p("bad.json")}, `split on column "w"`},
		{[]string{"data", "decode-tree", "--key", p("bad.key"), p("tree.json")}, "bad key"},
		{[]string{"data", "decode-tree", "--key", p("out/transform.key"), "--table", p("out/in.csv"), p("tree.json")}, "not in the key's domain"},
	} {
		if _, err := runApp(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	for _, d := range []string{"o2", "o3", "o4"} {
		if _, err := os.Stat(p(d)); !os.IsNotExist(err) {
			t.Errorf("a failed transform left %s", d)
		}
	}
	out, err := runApp(t, "--format", "json", "data", "transform", p("in.csv"), "--schema", "x=numeric,y=class", "--class", "y", "--out", p("o5"))
	var res struct {
		Rows    int
		Columns []transform.ColumnStats
	}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Rows != 100 || len(res.Columns) != 1 || res.Columns[0].Distinct != 100 {
		t.Fatalf("json: %v\n%s", err, out)
	}
}
