package anonymize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveDataflyCheck: every published cell is the record's value or "*", and
// every combination of published values is shared by at least k records.
func naiveDataflyCheck(t *testing.T, cols [][]string, res *DataflyResult, k int) {
	t.Helper()
	count := map[string]int{}
	kept := 0
	for r := range cols[0] {
		var key []string
		for a := range cols {
			v := res.Cells[a][r]
			if v != Suppressed && v != cols[a][r] {
				t.Fatalf("record %d column %d published %q, not its value", r, a, v)
			}
			if v != Suppressed {
				kept++
			}
			key = append(key, v)
		}
		count[strings.Join(key, "\x00")]++
	}
	for key, n := range count {
		if n < k {
			t.Fatalf("k=%d: %d records published as %q", k, n, key)
		}
	}
	if kept != res.Kept {
		t.Fatalf("kept %d, counted %d", res.Kept, kept)
	}
}

// By hand: (race, sex) with two Black records of different sex: at k = 2
// the sexes of both are suppressed (two cells), nothing else.
func TestDataflyByHand(t *testing.T) {
	cols := [][]string{
		{"White", "White", "White", "White", "Black", "Black"},
		{"M", "M", "F", "F", "M", "F"},
	}
	res, err := Datafly(cols, 2, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != 10 || res.Cells[1][4] != Suppressed || res.Cells[1][5] != Suppressed {
		t.Fatalf("kept %d, cells %v", res.Kept, res.Cells)
	}
	// a lone under-k child is merged with the smallest child of k or more
	cols = [][]string{{"a", "a", "a", "b", "b", "c"}}
	if res, err = Datafly(cols, 2, []int{0}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "a", "a", "*", "*", "*"}; !slices.Equal(res.Cells[0], want) {
		t.Fatalf("cells %v, want %v", res.Cells[0], want)
	}
	if DataflyOrder([][]string{{"x", "y"}, {"1", "2", "3"}, {"p", "p"}})[0] != 1 {
		t.Fatal("Datafly's order does not start with the column with most values")
	}
}

// Random tables: Datafly in every order and OGF publish k-anonymous tables
// (checked naively); OGF is deterministic given its seed and keeps at
// least as many cells as the best order it evaluated first.
func TestDataflyAndOGF(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	cols := make([][]string, 5)
	for a := range cols {
		for range 300 {
			cols[a] = append(cols[a], fmt.Sprintf("v%d", rng.IntN(2+a*2)))
		}
	}
	for _, k := range []int{2, 5, 20} {
		res, err := Datafly(cols, k, DataflyOrder(cols))
		if err != nil {
			t.Fatal(err)
		}
		naiveDataflyCheck(t, cols, res, k)
		o1, err := OGF(cols, k, OGFOptions{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		o2, _ := OGF(cols, k, OGFOptions{Seed: 4})
		if !slices.Equal(o1.Best.Order, o2.Best.Order) || o1.Best.Kept != o2.Best.Kept {
			t.Fatalf("k=%d: OGF not deterministic", k)
		}
		naiveDataflyCheck(t, cols, o1.Best, k)
		t.Logf("k=%d: Datafly keeps %d cells, OGF %d (%d generations, %d evaluations)", k, res.Kept, o1.Best.Kept, o1.Generations, o1.Evaluations)
	}
}
