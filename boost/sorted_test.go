package boost

import (
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"testing"
)

// TestFinder: a finder answers as slices.BinarySearch does for queries in
// order (with repeats, values between and beyond the set's, the whole set)
// and out of order, over sets of 0 to 300 values.
func TestFinder(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for trial := range 400 {
		set := make([]string, rng.IntN(300))
		for i := range set {
			set[i] = fmt.Sprintf("%05d", rng.IntN(1000))
		}
		slices.Sort(set)
		set = slices.Compact(set)
		queries := make([]string, rng.IntN(400))
		for i := range queries {
			queries[i] = fmt.Sprintf("%05d", rng.IntN(1100)-50)
			if len(set) > 0 && rng.IntN(2) == 0 {
				queries[i] = set[rng.IntN(len(set))]
			}
		}
		switch trial % 3 {
		case 0:
			slices.Sort(queries)
		case 1:
			queries = slices.Clone(set)
		}
		f := newFinder(set)
		for _, q := range queries {
			j, ok := f.find(q)
			wj, wok := slices.BinarySearch(set, q)
			if j != wj || ok != wok {
				t.Fatalf("trial %d: find(%q) = %d, %v; BinarySearch gives %d, %v", trial, q, j, ok, wj, wok)
			}
		}
	}
}

// BenchmarkFinder: a9a's 32,561 join values looked up in order in their
// own set, by the finder and by binary search.
func BenchmarkFinder(b *testing.B) {
	set := make([]string, 32561)
	for i := range set {
		set[i] = fmt.Sprintf("%d", 100000+i)
	}
	b.Run("finder", func(b *testing.B) {
		for b.Loop() {
			f := newFinder(set)
			for _, v := range set {
				f.find(v)
			}
		}
	})
	b.Run("binary", func(b *testing.B) {
		for b.Loop() {
			for _, v := range set {
				if _, ok := slices.BinarySearch(set, v); !ok {
					b.Fatal("a value not found in its own set")
				}
			}
		}
	})
}

// TestGroupByKey: each key's values, in the order they came, and groups
// that cannot grow into the next.
func TestGroupByKey(t *testing.T) {
	items := []keyed[string]{{2, "a"}, {0, "b"}, {2, "c"}, {3, "d"}, {0, "e"}}
	flat, start := groupByKey(items, 5)
	want := [][]string{{"b", "e"}, {}, {"a", "c"}, {"d"}, {}}
	for k, w := range want {
		g := group(flat, start, k)
		if !slices.Equal(g, w) || cap(g) != len(g) {
			t.Fatalf("group %d: %v (cap %d), want %v", k, g, cap(g), w)
		}
	}
}
