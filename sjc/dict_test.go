package sjc

import (
	"math"
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
	t.Parallel()
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

// TestLog2 holds the gain function's log2 to math.Log2 within 1e-15
// relative, over small, mantissa-boundary and large counts.
func TestLog2(t *testing.T) {
	t.Parallel()
	tab := gainTables()
	rng := rand.New(rand.NewPCG(3, 4))
	xs := []uint64{1, 2, 3, xlogSmall - 1, xlogSmall, 1<<20 - 1, 1 << 20, 1<<20 + 1, 1<<53 + 7, 1<<63 + 5, ^uint64(0)}
	for range 100000 {
		xs = append(xs, rng.Uint64()>>rng.IntN(64)|1)
	}
	for _, x := range xs {
		got, want := tab.log2(x), math.Log2(float64(x))
		if math.Abs(got-want) > 1e-15*max(1, want) {
			t.Fatalf("log2(%d) = %.17g, math.Log2 %.17g", x, got, want)
		}
		if x < xlogSmall {
			if xl := tab.xlog2x(x); xl != float64(x)*math.Log2(float64(x)) {
				t.Fatalf("xlog2x(%d) = %.17g", x, xl)
			}
		}
	}
}

// TestGallop holds gallop to a linear scan.
func TestGallop(t *testing.T) {
	t.Parallel()
	vals := []string{"b", "d", "f", "h", "j", "l", "n", "p"}
	for j := 0; j <= len(vals); j++ {
		for _, v := range []string{"a", "b", "c", "d", "e", "h", "i", "o", "p", "q"} {
			want := j
			for want < len(vals) && vals[want] < v {
				want++
			}
			if got := gallop(vals, j, v); got != want {
				t.Fatalf("gallop from %d for %q = %d, want %d", j, v, got, want)
			}
		}
	}
}
