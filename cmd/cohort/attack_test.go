package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// attackTable writes a table whose attacks have known answers: x holds
// 1..60 once each (no discontinuity; every value monochromatic, a piece of
// one, so the recoding cannot permute it: the worst-case sorting attack
// cracks every value exactly, with §5.4's probability 1), y holds 0..9
// in both classes (dense, no monochromatic value: sorting cracks it too),
// z is a class-correlated column with gaps; c is the class.
func attackTable(t *testing.T) (dir, csv string) {
	t.Helper()
	dir = t.TempDir()
	var b strings.Builder
	b.WriteString("x,y,z,c\n")
	for i := 1; i <= 60; i++ {
		c := "n"
		if i%2 == 0 {
			c = "p"
		}
		fmt.Fprintf(&b, "%d,%d,%d,%s\n", i, (i/2)%10, 7*i+(i%2)*300, c)
	}
	csv = filepath.Join(dir, "t.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, csv
}

// End to end: transform a table, grow a tree on the recoded table, and
// attack: the sorting attack's answers as known; every share in [0, 1]; an
// expert with a good point at every value cracks every value by polyline;
// the subspaces and the pattern figures are there; the text output names
// every attack.
func TestDataAttack(t *testing.T) {
	dir, csv := attackTable(t)
	rec := filepath.Join(dir, "rec")
	if out, err := runApp(t, "data", "transform", "--schema", "x=numeric,y=numeric,z=numeric,c=class", csv, "--class", "c", "--out", rec); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	key := filepath.Join(rec, "transform.key")
	treePath := filepath.Join(dir, "tree.json")
	growOn(t, filepath.Join(rec, "t.csv"), treePath)
	out, err := runApp(t, "--format", "json", "data", "attack", "--key", key, "--table", csv, "--tree", treePath, "--trials", "20", "--subspace", "x,y")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var r attackReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Rows != 60 || len(r.Columns) != 3 || len(r.Subspaces) != 2 || r.Pattern == nil || r.Pattern.Paths < 2 {
		t.Fatalf("report %+v", r)
	}
	for _, c := range r.Columns {
		for _, x := range []float64{c.FaceValue, c.Constant, c.LinReg, c.Spline, c.Polyline, c.Union, c.TwoOrMore, c.SortingExact, c.Sorting} {
			if x < 0 || x > 1+1e-12 {
				t.Errorf("%s: a share %v outside [0, 1]", c.Stats.Column, x)
			}
		}
		if name := c.Stats.Column; (name == "x" || name == "y") && (c.SortingExact != 1 || c.SortingProb != 1) {
			t.Errorf("%s: sorting %v, probability %v, want 1 and 1", name, c.SortingExact, c.SortingProb)
		}
	}
	if s := r.Subspaces[1]; s.Risk != 1 || len(s.Sorting) != 2 {
		t.Errorf("subspace {x, y} %+v, want every row by sorting", s)
	}
	out, err = runApp(t, "--format", "json", "data", "attack", "--key", key, "--good", "60", "--trials", "3")
	if err != nil {
		t.Fatal(err)
	}
	var all attackReport
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatal(err)
	}
	if x := all.Columns[0]; x.Polyline != 1 || len(all.Subspaces) != 0 {
		t.Errorf("expert with every point: polyline %v", x.Polyline)
	}
	text, err := runApp(t, "data", "attack", "--key", key, "--table", csv, "--tree", treePath, "--trials", "5")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"polyline", "sorting exact", "P(sorting)", "subspace {x, y, z}", "pattern disclosure:"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// growOn grows an entropy tree on the recoded table and writes it.
func growOn(t *testing.T, csv, out string) {
	t.Helper()
	tb, err := table.Open(context.Background(), table.Source{Path: csv}, "t", map[string]table.Kind{"x": table.Numeric, "y": table.Numeric, "z": table.Numeric, "c": table.Class}, table.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := &tree.Data{}
	for _, c := range tb.Columns {
		if c.Kind == table.Class {
			d.Labels, d.Class = tree.Encode(c.Str)
		} else {
			d.Attrs = append(d.Attrs, &tree.Attr{Name: c.Name, Numeric: true, Num: c.Num})
		}
	}
	b, err := tree.Grow(d, tree.GrowParams{MaxDepth: 6, MinSplit: 2}, "", "t").MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bad input names the flag, never a table value.
func TestDataAttackBadInput(t *testing.T) {
	dir, csv := attackTable(t)
	rec := filepath.Join(dir, "rec")
	if _, err := runApp(t, "data", "transform", "--schema", "x=numeric,y=numeric,z=numeric,c=class", csv, "--class", "c", "--out", rec); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(rec, "transform.key")
	other := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(other, []byte("x,y,z,c\n4242,1,7,n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--key"},
		{[]string{"--key", key, "--rho", "0"}, "--rho"},
		{[]string{"--key", key, "--trials", "0"}, "--trials"},
		{[]string{"--key", key, "--subspace", "x"}, "--subspace needs --table"},
		{[]string{"--key", key, "--table", csv, "--subspace", "x,nope"}, "--subspace"},
		{[]string{"--key", key, "--table", other}, "row 1"},
		{[]string{"--key", key, "--tree", filepath.Join(dir, "missing.json")}, "--tree"},
	} {
		_, err := runApp(t, append([]string{"data", "attack"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		} else if strings.Contains(err.Error(), "4242") {
			t.Errorf("%v: a table value in %v", c.args, err)
		}
	}
}
