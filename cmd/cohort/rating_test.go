package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize/rating"
)

// ratingJSON runs `cohort --format json data rating ARGS` and decodes it.
func ratingJSON(t *testing.T, args ...string) ratingReport {
	t.Helper()
	out, err := runApp(t, append([]string{"--format", "json", "data", "rating"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var r ratingReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r
}

// Sun's Table 7.1 (bundled, r = 7) from the command line: at ε = 1
// slicing finds {t1,t2}, {t3,t4}, {t5,t6} with k = 2 and l = 1.5 (TV-9),
// the pairwise baseline the same partition; maxsize 3; two components,
// 2-decomposable. Without --epsilon, the searches give ε = 1 for k = 2
// and ε = 3 for l = 2 (§7.2.4's example); anonymised at ε = 3 the table
// reads back (2, 3, 2)-anonymous with its sensitive column unchanged.
func TestDataRatingSunTable71(t *testing.T) {
	in := filepath.Join("..", "..", "examples", "rating", "sun-table-7.1.csv")
	r := ratingJSON(t, in, "--k", "2", "--epsilon", "1", "--sensitive", "s", "--max", "7", "--pairwise")
	if s := r.Slicing; s.Groups != 3 || s.K != 2 || s.L != 1.5 || !s.Satisfied || r.SamePartition == nil || !*r.SamePartition {
		t.Errorf("slicing %+v pairwise %+v", r.Slicing, r.Pairwise)
	}
	if !r.DegreeOK || r.Degree.MaxSize != 3 || r.Decomposition.Verdict != rating.Yes || r.Decomposition.Components != 2 || r.Hamming != 2 {
		t.Errorf("degree %+v decomposition %+v", r.Degree, r.Decomposition)
	}
	out := filepath.Join(t.TempDir(), "anon.csv")
	r = ratingJSON(t, in, "--k", "2", "--l", "2", "--sensitive", "s", "--max", "7", "--out", out)
	if s := r.Search; s == nil || s.ForK == nil || *s.ForK != 1 || s.ForL == nil || *s.ForL != 3 || r.Epsilon != 3 {
		t.Fatalf("search %+v, ε %d", r.Search, r.Epsilon)
	}
	if a := r.Anonymised; a == nil || !a.Satisfied || a.Smallest < 2 || a.IssuesBefore != 3 || a.IssuesAfter != 3 {
		t.Fatalf("anonymised %+v", r.Anonymised)
	}
	back := ratingJSON(t, out, "--k", "2", "--epsilon", "3", "--l", "2", "--sensitive", "s", "--max", "7")
	if !back.DegreeOK || back.Degree.MinSD < 2 {
		t.Errorf("read back: %+v", back.Degree)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var sens []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		sens = append(sens, f[len(f)-1])
	}
	if got := strings.Join(sens, " "); got != "6 1 4 1 1 5" {
		t.Errorf("sensitive column %q", got)
	}
}

// Table 6.1(a) (TV-8, r = 6): the search for k = 2 ends at ε = 5, a
// (2, 5, 2) solution.
func TestDataRatingSunTable61(t *testing.T) {
	in := filepath.Join(t.TempDir(), "t61.csv")
	body := "id,a,b,c,s\nt1,6,1,,6\nt2,1,6,,1\nt3,2,5,,1\nt4,1,,5,1\nt5,2,,6,5\n"
	if err := os.WriteFile(in, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ratingJSON(t, in, "--k", "2", "--sensitive", "s", "--max", "6")
	if r.Epsilon != 5 || r.Slicing.Groups != 2 || r.Slicing.L < 2 {
		t.Errorf("ε %d, slicing %+v", r.Epsilon, r.Slicing)
	}
}

// A long table of a generated matrix: not (5, 1)-anonymous as it is;
// anonymised, it reads back (5, 1, 0.5)-anonymous in the long layout with
// every user still there, and the text output names each check.
func TestDataRatingLong(t *testing.T) {
	m := rating.Generate(60, 25, 400, 3, 7)
	var b strings.Builder
	b.WriteString("user,item,rating,when\n")
	for u, row := range m.R {
		for i, x := range row {
			if x > 0 {
				item := "m" + string(rune('a'+i%26)) + string(rune('a'+i/26))
				if m.Sensitive[i] {
					item = "age"
				}
				b.WriteString(strings.Join([]string{"u" + string(rune('A'+u%26)) + string(rune('A'+u/26)), item, string(rune('0' + x)), "0"}, ",") + "\n")
			}
		}
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "long.csv"), filepath.Join(dir, "anon.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{in, "--layout", "long", "--sensitive", "age", "--k", "5", "--epsilon", "1", "--l", "0.5"}
	r := ratingJSON(t, args...)
	if r.Users != 60 || r.Issues != 26 || r.DegreeOK || r.Slicing.Satisfied {
		t.Fatalf("before: %+v", r)
	}
	text, err := runApp(t, append([]string{"data", "rating"}, append(args, "--out", out)...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"degree check (Thm. 6.1)", "5-decomposable", "slicing (ch. 7)", "anonymised to", "query error", "membership change"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	back := ratingJSON(t, out, "--layout", "long", "--sensitive", "age", "--k", "5", "--epsilon", "1", "--l", "0.5", "--max", "5")
	if back.Users != 60 || !back.DegreeOK || !back.Slicing.Satisfied {
		t.Errorf("read back: %d users, degree %+v, slicing %+v", back.Users, back.Degree, back.Slicing)
	}
	if _, err := runApp(t, append([]string{"data", "rating"}, append(args, "--out", out)...)...); err == nil {
		t.Error("an existing --out was replaced")
	}
}

// Bad input names the flag, the row or the column, never a table value.
func TestDataRatingBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("user,a,b\nzed,1,secret9\nyan,2,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("..", "..", "examples", "rating", "sun-table-7.1.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{bad, "--k", "2", "--epsilon", "1"}, `row 1, column "b"`},
		{[]string{good, "--k", "0"}, "--k"},
		{[]string{good, "--k", "9", "--sensitive", "s"}, "--k"},
		{[]string{good, "--k", "2", "--sensitive", "nope"}, "--sensitive"},
		{[]string{good, "--k", "2", "--sensitive", "s", "--max", "3"}, "--max"},
		{[]string{good, "--k", "2", "--sensitive", "s", "--epsilon", "9"}, "--epsilon"},
		{[]string{good, "--k", "2", "--sensitive", "s", "--l", "2.5"}, "Corollary 7.1"},
		{[]string{good, "--k", "2", "--sensitive", "s", "--epsilon", "1", "--l", "2.5", "--out", filepath.Join(dir, "x.csv")}, "--l"},
		{[]string{good, "--k", "2", "--layout", "long"}, "--layout long"},
	} {
		out, err := runApp(t, append([]string{"data", "rating"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
			continue
		}
		for _, v := range []string{"secret9", "zed", "yan", "t1"} {
			if strings.Contains(err.Error(), v) || strings.Contains(out, v) {
				t.Errorf("%v: a table value in %q / %q", c.args, err, out)
			}
		}
	}
}

// --literal reproduces the thesis's modification of Table 6.4 (case
// 2.1.1, ε = 2, distortion 4, Def. 6.4's example); without it only issue
// 1, whose range exceeds ε, is modified (distortion 2).
func TestDataRatingLiteral(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t64.csv")
	if err := os.WriteFile(in, []byte("id,a,b,c\nt1,5,6,\nt2,2,5,\nt3,4,7,\nt4,5,6,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag, want string
		dist       int
	}{{"--literal", "id,a,b,c\nt1,5,5,\nt2,3,5,\nt3,3,7,\nt4,5,7,\n", 4}, {"--literal=false", "id,a,b,c\nt1,5,6,\nt2,3,5,\nt3,3,7,\nt4,5,6,\n", 2}} {
		out := filepath.Join(dir, c.flag[2:]+".csv")
		r := ratingJSON(t, in, "--k", "4", "--epsilon", "2", "--max", "7", c.flag, "--out", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if r.Anonymised == nil || r.Anonymised.Distortion != c.dist || string(b) != c.want {
			t.Errorf("%s: distortion %+v, table\n%s", c.flag, r.Anonymised, b)
		}
	}
}
