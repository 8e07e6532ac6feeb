package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sunTable writes Sun's Table 2.1 (Gender, Zip, Disease; an id) and the
// hierarchies of Fig. 2.1 (Gender → person; Zip 4370 → 437* → 43**).
func sunTable(t *testing.T, edit func(string) string) (csv string, taxonomy []string) {
	t.Helper()
	dir := t.TempDir()
	rows := "id,gender,zip,disease\np1,Male,4370,Cancer\np2,Male,4370,Cancer\np3,Male,4352,Cancer\np4,Female,4373,Chest Pain\np5,Female,4373,Obesity\np6,Female,4350,Flu\n"
	if edit != nil {
		rows = edit(rows)
	}
	files := map[string]string{
		"t.csv":      rows,
		"gender.yml": "column: gender\nroot: {label: person, children: [{label: Male}, {label: Female}]}\n",
		"zip.yml":    "column: zip\nroot: {label: '43**', children: [{label: '437*', children: [{label: '4370'}, {label: '4373'}]}, {label: '435*', children: [{label: '4350'}, {label: '4352'}]}]}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "t.csv"), []string{"--taxonomy", "gender=" + filepath.Join(dir, "gender.yml"), "--taxonomy", "zip=" + filepath.Join(dir, "zip.yml")}
}

// Sun's TV-2 from the command line: the lattice ⟨G, Z⟩ has 6 vectors and 3
// strategies (f(1, 2) = 3); at k = 2 the minimal vectors are [1,1] and
// [0,2], Samarati stops at height 2, and strategy 1 (Zip, Gender, Zip)
// stops at its step 2 (⟨G₁, Z₁⟩); with distinct 2-diversity on Disease only
// [1,1] is minimal. Weighted DM at [1,1] with equal priorities is 15.
func TestDataLattice(t *testing.T) {
	csv, tax := sunTable(t, nil)
	args := append([]string{"--format", "json", "data", "lattice", csv, "--k", "2", "--qid", "gender,zip", "--strategy", "zip,gender,zip"}, tax...)
	out, err := runApp(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var rep latticeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var levels [][]int
	for _, n := range rep.Minimal {
		levels = append(levels, n.Levels)
	}
	if rep.Lattice != 6 || rep.Strategies != "3" || !slices.EqualFunc(levels, [][]int{{1, 1}, {0, 2}}, slices.Equal) {
		t.Fatalf("lattice %d strategies %s minimal %v", rep.Lattice, rep.Strategies, levels)
	}
	if rep.Minimal[0].WDM != 15 || rep.Minimal[0].DM != 20 {
		t.Errorf("weighted DM %v DM %v at [1,1]", rep.Minimal[0].WDM, rep.Minimal[0].DM)
	}
	if rep.Samarati == nil || rep.Samarati.Node.Height != 2 || len(rep.Samarati.Solutions) != 2 {
		t.Errorf("samarati %+v", rep.Samarati)
	}
	if s := rep.Strategy; s == nil || s.Stop != 2 || !slices.Equal(s.Node.Levels, []int{1, 1}) {
		t.Errorf("strategy %+v", rep.Strategy)
	}
	args = append([]string{"data", "lattice", csv, "--k", "2", "--qid", "gender,zip", "--sensitive", "disease", "--l", "2"}, tax...)
	out, err = runApp(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "minimal vectors for k = 2, distinct 2-diversity") && !strings.Contains(out, "minimal vectors for k = 2,") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(out, "1  [1 1]") || strings.Contains(out, "[0 2]") {
		t.Errorf("l = 2 output:\n%s", out)
	}
}

// Bad input names the flag or the column, never a value of the table.
func TestDataLatticeBadInput(t *testing.T) {
	csv, tax := sunTable(t, func(s string) string { return strings.Replace(s, "4352", "9999", 1) })
	good, gtax := sunTable(t, nil)
	cases := []struct {
		args []string
		want string
	}{
		{append([]string{"data", "lattice", csv, "--k", "2"}, tax...), "--taxonomy zip: 1 of 6 rows"},
		{append([]string{"data", "lattice", good, "--k", "0"}, gtax...), "--k"},
		{append([]string{"data", "lattice", good, "--k", "9"}, gtax...), "--k"},
		{[]string{"data", "lattice", good, "--k", "2"}, "--taxonomy"},
		{append([]string{"data", "lattice", good, "--k", "2", "--qid", "gender,age"}, gtax...), "--qid"},
		{append([]string{"data", "lattice", good, "--k", "2", "--strategy", "gender,gender"}, gtax...), "--strategy"},
		{append([]string{"data", "lattice", good, "--k", "2", "--priority", "zip=x"}, gtax...), "--priority"},
		{append([]string{"data", "lattice", good, "--k", "2", "--l", "2"}, gtax...), "--sensitive"},
		{append([]string{"data", "lattice", good, "--k", "2", "--search", "flash"}, gtax...), "--search"},
		{append([]string{"data", "prob-anon", good, "--k", "2", "--beta", "1"}, gtax...), "--beta"},
		{append([]string{"data", "prob-anon", good, "--k", "2", "--beta", "0.1", "--weight", "zip=0"}, gtax...), "--weight"},
		{[]string{"data", "onedim", good, "--column", "gender", "--k", "2"}, `--column "gender": 6 of 6 rows`},
		{[]string{"data", "onedim", good, "--column", "zip", "--k", "2", "--method", "kmeans"}, "--method"},
	}
	for _, c := range cases {
		_, err := runApp(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args[2:], err, c.want)
			continue
		}
		for _, v := range []string{"9999", "Male", "Female", "Cancer", "4370"} {
			if strings.Contains(err.Error(), v) {
				t.Errorf("%v: the error names the value %q: %v", c.args[2:], v, err)
			}
		}
	}
}

// prob-anon and onedim from the command line. Against the table's own six
// rows (0.5, 2)-anonymity allows D′ = 6·(1 + x − √(x²+2x)), x = ln 2, ≈ 1.96
// combinations; Gender, weighted 4, keeps its two values and Zip goes to
// its root (every row in a class of 3). Against a universe of 10⁶ rows
// nothing is generalised and only 4 of the 6 rows share their values with
// another in the table itself (the guarantee is the universe's). onedim on
// Lodha and Thomas's Example 9 set {1, 12, 4, 7, 3} at k = 2 gives their
// 2-anonymous f with rank difference 3 (Example 11), by both methods.
func TestDataLodha(t *testing.T) {
	csv, tax := sunTable(t, nil)
	type plan struct {
		DPrime  float64 `json:"d_prime"`
		Levels  []int   `json:"levels"`
		Covered float64 `json:"covered"`
		Combos  int     `json:"combinations"`
	}
	for _, c := range []struct {
		args []string
		want plan
	}{
		{[]string{"--weight", "gender=4"}, plan{1.96, []int{0, 2}, 1, 2}},
		{[]string{"--universe", "1000000"}, plan{326857.5, []int{0, 0}, 4.0 / 6, 4}},
	} {
		args := append([]string{"--format", "json", "data", "prob-anon", csv, "--k", "2", "--beta", "0.5", "--qid", "gender,zip"}, tax...)
		out, err := runApp(t, append(args, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var rep plan
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if math.Abs(rep.DPrime/c.want.DPrime-1) > 1e-3 || !slices.Equal(rep.Levels, c.want.Levels) || rep.Covered != c.want.Covered || rep.Combos != c.want.Combos {
			t.Errorf("%v: %s", c.args, out)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.csv")
	if err := os.WriteFile(path, []byte("x\n1\n12\n4\n7\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"dp", "quantile"} {
		out, err := runApp(t, "data", "onedim", path, "--column", "x", "--k", "2", "--method", m, "--clusters")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "2 clusters of 2 to 3 rows; k-median cost 8 ") || !strings.Contains(out, "rank difference 3;") ||
			!strings.Contains(out, "1   4   3     3") || !strings.Contains(out, "7   12  2     7") {
			t.Errorf("%s:\n%s", m, out)
		}
	}
}
