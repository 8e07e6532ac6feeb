package sjc_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// TestReferenceJoin: the reference's join of the worked example is the 8
// rows of the thesis (R11 with R21, R24 and R31, R33; R12 with R23 and
// R31, R33; R13 and R14 with R23 and R32); R22 dangles.
func TestReferenceJoin(t *testing.T) {
	t.Parallel()
	_, g, data := loadSpec(t, "testdata/xu-example/spec.yaml")
	j, err := reftree.Materialise(g, data)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for r := 0; r < j.Len(); r++ {
		rows = append(rows, fmt.Sprintf("R1%d R2%d R3%d", j.Rows[0][r]+1, j.Rows[1][r]+1, j.Rows[2][r]+1))
	}
	slices.Sort(rows)
	want := []string{
		"R11 R21 R31", "R11 R21 R33", "R11 R24 R31", "R11 R24 R33",
		"R12 R23 R31", "R12 R23 R33", "R13 R23 R32", "R14 R23 R32",
	}
	if !slices.Equal(rows, want) {
		t.Fatalf("join rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	// Accuracy over the training join: 7 of 8 (the ⟨1,3⟩ leaf labels
	// R13's row wrongly).
	tr, err := reftree.Build(g, data, sjc.Params{MaxDepth: 10, MinSplit: 2})
	if err != nil {
		t.Fatal(err)
	}
	ok, tot, err := reftree.Accuracy(tr, g, data)
	if err != nil || ok != 7 || tot != 8 {
		t.Fatalf("accuracy %d/%d %v, want 7/8", ok, tot, err)
	}
	c, n, err := sjc.Evaluate(tr, g, data)
	if err != nil || c != 7 || n != 8 {
		t.Fatalf("Evaluate %d/%d %v, want 7/8", c, n, err)
	}
}

// TestSingleTable: with one table and no join, the tree is the ordinary
// tree of the table, and both builders agree.
func TestSingleTable(t *testing.T) {
	t.Parallel()
	g, err := sjc.BuildGraph(map[string]string{"T": "p"},
		map[string]map[string]table.Kind{"T": {"c": table.Class, "x": table.Numeric, "k": table.Categorical}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := "c,x,k\nyes,1,a\nyes,2,b\nno,3,a\nno,4,b\nyes,5,a\nno,6,b\n"
	tb, err := table.Read(strings.NewReader(text), "T.csv", "T", map[string]table.Kind{"c": table.Class, "x": table.Numeric, "k": table.Categorical})
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]*table.Table{"T": tb}
	p := sjc.Params{MaxDepth: 10, MinSplit: 2}
	got, err := sjc.Build(g, data, p)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := reftree.Build(g, data, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(ref, got); d != "" {
		t.Fatal(d)
	}
	if n, _ := got.Size(); n < 3 {
		t.Fatalf("tree of %d nodes on a separable table", n)
	}
}
