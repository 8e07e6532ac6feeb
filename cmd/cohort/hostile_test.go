package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHostileRenameAsProcesses: five `cohort node run` processes under the
// default policy. A sum over {B, C, D} of table t, then over {B, C, D, E}
// of the same files named t_alias (the difference would be E's exact
// input), and a spec naming one of A's files twice, are refused by the
// nodes whose datasets they are, naming the rule (issue 30, findings 1
// and 2, as a hostile member found them).
func TestHostileRenameAsProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := buildBinary(t)
	tables := t.TempDir()
	names := []string{"a", "b", "c", "d", "e"}
	for i, n := range names {
		if err := os.WriteFile(filepath.Join(tables, n+".csv"), fmt.Appendf(nil, "v\n%d.5\n%d\n", i+1, 7*(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, _ := startProcesses(t, bin, names, tables)
	cfg := filepath.Join(root, "a", "node.yaml")
	submit := func(name, body string) (string, string) {
		t.Helper()
		spec := filepath.Join(tables, name+".yaml")
		if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, stderr string
		var err error
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			out, stderr, err = run(t, bin, "job", "submit", spec, "--config", cfg, "--wait", "--format", "json")
			if err == nil || strings.Contains(stderr, "rule ") || time.Now().After(deadline) {
				return out, stderr
			}
		}
	}
	sumOver := func(table string, parties ...string) string {
		var b strings.Builder
		b.WriteString("kind: sum\nparties:\n")
		for _, p := range parties {
			fmt.Fprintf(&b, "  - name: %s\n    tables: [{name: %s, path: %s.csv}]\n", p, table, p)
		}
		b.WriteString("params: {column: v}\n")
		return b.String()
	}
	if out, stderr := submit("three", sumOver("t", "b", "c", "d")); !strings.Contains(out, `"sum"`) {
		t.Fatalf("the sum of three: %q %q", out, stderr)
	}
	_, stderr := submit("renamed", sumOver("t_alias", "b", "c", "d", "e"))
	for _, p := range []string{"b", "c", "d"} {
		if want := p + ": rule floors.differencing"; !strings.Contains(stderr, want) {
			t.Errorf("the renamed sum of four: %q does not say %q", stderr, want)
		}
	}
	twice := strings.Replace(sumOver("t", "a", "b", "c"), "tables: [{name: t, path: a.csv}]",
		"tables: [{name: t, path: a.csv}, {name: t_dup, path: a.csv}]", 1)
	if _, stderr := submit("twice", twice); !strings.Contains(stderr, "a: rule datasets") {
		t.Errorf("one file twice: %q does not say %q", stderr, "a: rule datasets")
	}
}
