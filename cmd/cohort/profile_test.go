package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The three profile commands in process on the thesis's Example 19 (Xu,
// thesis, chapter 5): build, expose at minDetail 0.3, rerank.
func TestProfileCommands(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join("..", "..", "profile", "testdata", "example19.txt")
	want, err := os.ReadFile(filepath.Join("..", "..", "profile", "testdata", "example19.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runApp(t, "profile", "build", docs, "--minsup", "2", "--delta", "0.6")
	if err != nil || out != string(want) {
		t.Fatalf("build: %v\n%s", err, out)
	}
	prof := filepath.Join(dir, "p.json")
	if out, err := runApp(t, "profile", "build", docs, "--minsup", "2", "--delta", "0.6", "--out", prof); err != nil || !strings.Contains(out, "3 top-level interests from 10 documents") {
		t.Fatalf("build --out: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(prof); string(got) != string(want) {
		t.Errorf("--out wrote\n%s", got)
	}
	if st, err := os.Stat(prof); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the profile is private data, mode %v: %v", st.Mode(), err)
	}

	out, err = runApp(t, "profile", "expose", prof, "--min-detail", "0.3")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"research             0.301", "personalized/search  0.523", "sports               0.456",
		"expRatio 0.848  exposed 3  H(U[exp]) 0.580  H(U) 0.684"} {
		if !strings.Contains(out, line) {
			t.Errorf("expose lacks %q:\n%s", line, out)
		}
	}
	for _, hidden := range []string{"AI", "soccer", "sex"} {
		if strings.Contains(out, hidden) {
			t.Errorf("expose shows hidden %s:\n%s", hidden, out)
		}
	}
	out, err = runApp(t, "profile", "expose", prof, "--min-detail", "0", "--format", "json")
	var e struct {
		Terms    []struct{ Term string }
		ExpRatio float64 `json:"exp_ratio"`
	}
	if err != nil || json.Unmarshal([]byte(out), &e) != nil || len(e.Terms) != 6 || e.ExpRatio != 1 {
		t.Errorf("expose --format json: %v\n%s", err, out)
	}

	results := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(results, []byte("1,sports,news,sports\n2,personalized,search,engine\n3,weather\n4,research,search\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runApp(t, "profile", "rerank", prof, results, "--alpha", "0.6", "--min-detail", "0.3")
	if err != nil {
		t.Fatal(err)
	}
	// PPRank 1.4, 1.6, 3.4, 3.6 (hand-computed in profile's TestRerank).
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		order = append(order, strings.Fields(l)[0]+"/"+strings.Fields(l)[1])
	}
	if strings.Join(order, " ") != "1.4/2 1.6/1 3.4/4 3.6/3" {
		t.Errorf("rerank order %v:\n%s", order, out)
	}
}

// Bad flags and bad input fail naming the flag or the line, never the
// input's text.
func TestProfileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	writeTestFile(t, bad, "a,b\nsecret/term\n")
	prof := filepath.Join(dir, "p.json")
	writeTestFile(t, prof, `{"label":"","sup":1,"secretfield":1}`)
	docs := filepath.Join("..", "..", "profile", "testdata", "example19.txt")
	res := filepath.Join(dir, "r.txt")
	writeTestFile(t, res, "1,a\nsecret,b\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile", "build", docs, "--minsup", "0"}, "--minsup"},
		{[]string{"profile", "build", docs, "--delta", "2"}, "--delta"},
		{[]string{"profile", "build", bad}, "line 2"},
		{[]string{"profile", "expose", prof, "--min-detail", "0.1"}, "a field other than"},
		{[]string{"profile", "expose", docs}, "--min-detail is required"},
		{[]string{"profile", "expose", docs, "--min-detail", "-1"}, "--min-detail"},
		{[]string{"profile", "rerank", prof, res, "--alpha", "1.5"}, "--alpha"},
		{[]string{"profile", "gen", "--docs", "0"}, "docs must be"},
		{[]string{"profile", "nope"}, "unknown command"},
	} {
		out, err := runApp(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error echoes the input: %v", tc.args, err)
		}
	}
	// A good profile with a bad result list names the line.
	good := filepath.Join(dir, "g.json")
	if _, err := runApp(t, "profile", "build", docs, "--minsup", "2", "--out", good); err != nil {
		t.Fatal(err)
	}
	if _, err := runApp(t, "profile", "rerank", good, res); err == nil || !strings.Contains(err.Error(), "line 2: the rank") || strings.Contains(err.Error(), "secret") {
		t.Errorf("rerank of a bad result list: %v", err)
	}
}

// gen follows its seed and writes documents build reads.
func TestProfileGen(t *testing.T) {
	a, err := runApp(t, "profile", "gen", "--docs", "300", "--seed", "7")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runApp(t, "profile", "gen", "--docs", "300", "--seed", "7")
	c, _ := runApp(t, "profile", "gen", "--docs", "300", "--seed", "8")
	if a != b || a == c || strings.Count(a, "\n") != 300 {
		t.Fatalf("gen does not follow its seed (%d lines)", strings.Count(a, "\n"))
	}
	corpus := filepath.Join(t.TempDir(), "c.txt")
	if err := os.WriteFile(corpus, []byte(a), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runApp(t, "profile", "build", corpus)
	if err != nil || !strings.Contains(out, `"label": "t1"`) {
		t.Errorf("build of a generated corpus: %v\n%.300s", err, out)
	}
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
