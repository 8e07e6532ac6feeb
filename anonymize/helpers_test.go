package anonymize

import (
	"github.com/cohortdm/cohort/internal/shareddata"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// seed003 loads Reddy et al.'s Table 1 and taxonomies (corrected; testdata/seed003).
func seed003(t testing.TB) (*table.Table, map[string]*Taxonomy) {
	t.Helper()
	tab, err := table.Load("testdata/seed003/table1.csv", "T", map[string]table.Kind{
		"id": table.ID, "class": table.Class, "gender": table.Categorical,
		"education": table.Categorical, "age": table.Numeric,
	})
	if err != nil {
		t.Fatal(err)
	}
	tax := map[string]*Taxonomy{}
	for _, c := range []string{"gender", "education", "age"} {
		tx, err := LoadYAMLFile(filepath.Join("testdata/seed003", c+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		tax[c] = tx
	}
	return tab, tax
}

// The independent checkers below are deliberately naive (quadratic pairwise
// comparison of rows) and share no code with the package under test.

func rowKey(t *table.Table, cols []string, r int) []string {
	var k []string
	for _, c := range cols {
		for _, col := range t.Columns {
			if col.Name == c {
				k = append(k, col.Str[r])
			}
		}
	}
	return k
}

func sameRow(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// naiveMinGroup returns the smallest number of rows sharing a row's QID values.
func naiveMinGroup(t *table.Table, qid []string) int {
	n := t.NumRows()
	m := math.MaxInt
	for i := 0; i < n; i++ {
		ki := rowKey(t, qid, i)
		c := 0
		for j := 0; j < n; j++ {
			if sameRow(ki, rowKey(t, qid, j)) {
				c++
			}
		}
		m = min(m, c)
	}
	if n == 0 {
		return 0
	}
	return m
}

// naiveSensitive returns, for each row, the sensitive values of its class.
func naiveSensitive(t *table.Table, qid []string, s string) [][]string {
	n := t.NumRows()
	out := make([][]string, n)
	for i := 0; i < n; i++ {
		ki := rowKey(t, qid, i)
		for j := 0; j < n; j++ {
			if sameRow(ki, rowKey(t, qid, j)) {
				out[i] = append(out[i], rowKey(t, []string{s}, j)[0])
			}
		}
	}
	return out
}

func naiveDistinct(vals []string) int {
	seen := map[string]bool{}
	for _, v := range vals {
		seen[v] = true
	}
	return len(seen)
}

func naiveEntropy(vals []string) float64 {
	c := map[string]float64{}
	for _, v := range vals {
		c[v]++
	}
	h := 0.0
	for _, x := range c {
		p := x / float64(len(vals))
		h -= p * math.Log2(p)
	}
	return h
}

func mkTable(cols []string, rows ...string) *table.Table {
	t := &table.Table{Name: "t"}
	for _, c := range cols {
		t.Columns = append(t.Columns, &table.Column{Name: c, Kind: table.Categorical})
	}
	for _, r := range rows {
		f := strings.Split(r, ",")
		for i := range cols {
			t.Columns[i].Str = append(t.Columns[i].Str, f[i])
		}
	}
	return t
}

// adultDir is where the shared UCI Adult data lives: COHORT_ADULT_DIR, or
// ../shared/data/adult from the repository root (shareddata.Dir); tests
// that need it skip with a message when it is absent.
var adultDir, adultErr = shareddata.Dir(".", "adult", "COHORT_ADULT_DIR")

func needAdult(t testing.TB) {
	t.Helper()
	if adultErr != nil {
		t.Skipf("UCI Adult not found (set COHORT_ADULT_DIR): %v", adultErr)
	}
	if _, err := os.Stat(filepath.Join(adultDir, "arx", "adult.csv")); err != nil {
		t.Skipf("UCI Adult not found (set COHORT_ADULT_DIR): %v", err)
	}
}
