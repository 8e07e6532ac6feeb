package sjc

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestDictRank holds the dictionary encoding to the plain definition (sort
// the distinct values, rank each row's), for few distinct values (the map)
// and for more than dictLimit (the fallback to sorting), strings and
// floats, -0 and 0 included.
func TestDictRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, distinct := range []int{1, 7, 1000, 3 * dictLimit} {
		n := 2 * distinct
		strs := make([]string, n)
		nums := make([]float64, n)
		for i := range n {
			k := rng.IntN(distinct)
			strs[i] = "v" + strconv.Itoa(k)
			nums[i] = float64(k) - float64(distinct/2)
			if nums[i] == 0 && i%2 == 1 {
				nums[i] = -nums[i] * 1 // -0 and 0 are one value
			}
		}
		checkRank(t, strs)
		checkRank(t, nums)
	}
}

func checkRank[T int | float64 | string](t *testing.T, xs []T) {
	t.Helper()
	rank := make([]int32, len(xs))
	got := dictRank(xs, rank)
	want := slices.Clone(xs)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%d values: distinct values differ: %d vs %d", len(xs), len(got), len(want))
	}
	for r, x := range xs {
		if got[rank[r]] != x {
			t.Fatalf("row %d: rank %d is %v, not %v", r, rank[r], got[rank[r]], x)
		}
	}
}
