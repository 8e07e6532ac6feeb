package boost

import (
	"slices"
	"testing"

	"github.com/cohortdm/cohort/lattice"
)

// TestColumnTermsLeaveBinZero: a column's terms count each entry's rows
// in every bin but bin 0 (one term a bin, the rows' counts added), so
// that the Ws of a column whose rows mostly lie in bin 0 are sparse.
func TestColumnTermsLeaveBinZero(t *testing.T) {
	t.Parallel()
	bin := []int32{0, 1, 0, 2, 1, 0}
	entries := [][]rowCount{{{0, 1}, {1, 2}, {4, 3}}, {{2, 1}, {5, 4}}, {{3, 1}, {0, 2}}}
	got := columnTerms(nil, bin, entries)
	want := []lattice.BinTerm{{Row: 0, Bin: 1, Weight: 5}, {Row: 2, Bin: 2, Weight: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("terms %v, want %v", got, want)
	}
}

// TestFillFirstBins: bin 0 of each column at the summed nodes is the
// node's totals less the other bins' sums (so the column's bins add up to
// the totals, as the full sums do); other nodes are left alone.
func TestFillFirstBins(t *testing.T) {
	t.Parallel()
	// Two columns, three open nodes (g, h pairs), nodes 0 and 2 summed.
	bs := BinSums{
		{{0, 0, 7, 7, 0, 0}, {3, 1, 1, 1, -2, 4}, {5, 2, 1, 1, 6, 1}},
		{{0, 0, 9, 9, 0, 0}, {-4, 6, 2, 2, 1, 1}},
	}
	totals := map[int][2]int64{0: {10, 20}, 2: {-1, 8}}
	fillFirstBins(bs, []int{0, 2}, func(k int) (int64, int64) { return totals[k][0], totals[k][1] })
	want := BinSums{
		{{2, 17, 7, 7, -5, 3}, {3, 1, 1, 1, -2, 4}, {5, 2, 1, 1, 6, 1}},
		{{14, 14, 9, 9, -2, 7}, {-4, 6, 2, 2, 1, 1}},
	}
	for f := range want {
		for b := range want[f] {
			if !slices.Equal(bs[f][b], want[f][b]) {
				t.Fatalf("column %d bin %d: %v, want %v", f, b, bs[f][b], want[f][b])
			}
		}
	}
}
