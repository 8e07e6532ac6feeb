package sjc_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

func TestGenChain(t *testing.T) {
	t.Parallel()
	p := sjc.ChainParams{Tables: 3, N: 400, V: 100, X: 3, Seed: 7}
	c, err := sjc.GenChain(p)
	if err != nil {
		t.Fatal(err)
	}
	// Same seed, same data; train and test differ.
	c2, _ := sjc.GenChain(p)
	var a, b, tst bytes.Buffer
	for _, name := range []string{"T1", "T2", "T3"} {
		if err := sjc.WriteCSV(&a, c.Train[name]); err != nil {
			t.Fatal(err)
		}
		_ = sjc.WriteCSV(&b, c2.Train[name])
		_ = sjc.WriteCSV(&tst, c.Test[name])
	}
	if a.String() != b.String() || a.String() == tst.String() {
		t.Fatal("the generator is not deterministic in its seed, or test equals train")
	}
	// Every table has the same group sizes: about N rows each.
	n1 := c.Train["T1"].NumRows()
	for _, name := range []string{"T2", "T3"} {
		if c.Train[name].NumRows() != n1 {
			t.Fatalf("%s has %d rows, T1 %d: group sizes differ", name, c.Train[name].NumRows(), n1)
		}
	}
	if n1 < 300 || n1 > 500 {
		t.Fatalf("T1 has %d rows, want about N = 400", n1)
	}
	// Balanced classes (about half the groups are Yes).
	cls, _ := c.Train["T1"].Column("class")
	yes := strings.Count(strings.Join(cls.Str, ","), "Yes")
	if yes < n1/4 || yes > 3*n1/4 {
		t.Fatalf("%d Yes of %d", yes, n1)
	}
	// The spec is valid, and written CSV reads back with its schema.
	g, err := sjc.NewGraph(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	_ = sjc.WriteCSV(&csv, c.Train["T2"])
	schema := map[string]table.Kind{}
	for col, k := range c.Spec.Schema["T2"] {
		schema[col] = table.Kind(k)
	}
	if _, err := table.Read(&csv, "T2.csv", "T2", schema); err != nil {
		t.Fatal(err)
	}
	// The join-aware tree equals the reference and predicts well: the
	// class is a function of the numeric attributes of the join.
	ref, err := reftree.Build(g, c.Train, sjc.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	got, err := sjc.Build(g, c.Train, sjc.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(ref, got); d != "" {
		t.Fatalf("trees differ: %s", d)
	}
	ok, tot, err := sjc.Evaluate(got, g, c.Test)
	if err != nil {
		t.Fatal(err)
	}
	rok, rtot, err := reftree.Accuracy(ref, g, c.Test)
	if err != nil || uint64(rok) != ok || uint64(rtot) != tot {
		t.Fatalf("test accuracy sjc %d/%d, reference %d/%d %v", ok, tot, rok, rtot, err)
	}
	if acc := float64(ok) / float64(tot); acc < 0.6 {
		t.Fatalf("test accuracy %.3f over %d join rows: the generator's class is not learnable", acc, tot)
	}
	t.Logf("train %d rows per table; test accuracy %d/%d", n1, ok, tot)

	for _, bad := range []sjc.ChainParams{{Tables: 0, N: 10, V: 2}, {Tables: 2, N: 1, V: 1}, {Tables: 2, N: 10, V: 11}, {Tables: 2, N: 10, V: 2, X: -1}} {
		if _, err := sjc.GenChain(bad); err == nil {
			t.Errorf("GenChain(%+v) accepted", bad)
		}
	}
}
