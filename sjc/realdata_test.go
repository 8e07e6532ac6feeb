package sjc_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/tree"
)

// TestRealDataEqualReference: on the bundled real data (Mondial's six
// tables, FATE's vertically split breast data) the join-aware tree is the
// central tree grown on the materialised join, and so is its test
// accuracy. The job grows the join-aware tree (TestJob*, TestSimRealNodes).
func TestRealDataEqualReference(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"mondial/spec.yaml", "mondial/target-only.yaml", "breast/spec.yaml", "credit/spec.yaml"} {
		path := filepath.Join("..", "examples", "sjc-real", name)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "data")); err != nil && name == "credit/spec.yaml" {
			t.Logf("%s: no data (7 MB, not in the repository; examples/sjc-real/prepare.py writes it)", name)
			continue
		}
		spec, g, data := loadSpec(t, path)
		p, err := sjc.ParseParams(spec)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		got, err := sjc.Build(g, data, p)
		took := time.Since(t0)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := reftree.Build(g, data, p)
		if err != nil {
			t.Fatal(err)
		}
		if d := tree.Diff(ref, got); d != "" {
			t.Fatalf("%s: the join-aware tree differs from the central one: %s", name, d)
		}
		test := map[string]string{}
		for tb, f := range spec.Test {
			test[tb] = readFile(t, filepath.Join(spec.Dir, f))
		}
		td := loadTables(t, spec, test)
		c, n, err := sjc.Evaluate(got, g, td)
		if err != nil {
			t.Fatal(err)
		}
		rc, rn, err := reftree.Accuracy(ref, g, td)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(rc) != c || uint64(rn) != n {
			t.Fatalf("%s: accuracy %d/%d, central %d/%d", name, c, n, rc, rn)
		}
		nodes, leaves := got.Size()
		t.Logf("%s: %d nodes, %d leaves, built in process in %v; test %d of %d join rows (%.2f%%), the central tree's too", name, nodes, leaves, took.Round(time.Millisecond), c, n, 100*float64(c)/float64(n))
	}
}
