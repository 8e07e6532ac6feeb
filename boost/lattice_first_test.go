package boost

import (
	"slices"
	"testing"
)

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
