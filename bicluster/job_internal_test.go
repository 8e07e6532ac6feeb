package bicluster

import (
	"reflect"
	"testing"
)

// The coordinator's merge bookkeeping on public descriptions: candidate
// pairs by column overlap across parties only, in Merge's order; similar
// pairs joined transitively; small groups dropped; sums only on the
// groups' published columns.
func TestMergeBookkeeping(t *testing.T) {
	locals := [][]LocalDesc{
		{{Cols: []int{0, 1, 2, 3}, Count: 3}, {Cols: []int{0, 1, 2}, Count: 1}}, // party 0: two overlapping locals
		{{Cols: []int{1, 2, 3}, Count: 2}, {Cols: []int{7, 8}, Count: 2}},
		{{Cols: []int{7, 8, 9}, Count: 1}, {Cols: []int{5}, Count: 9}},
	}
	pairs := candidatePairs(locals)
	want := []pairDesc{
		{A: Ref{0, 0}, B: Ref{1, 0}, Cols: []int{0, 1, 2, 3}},
		{A: Ref{0, 1}, B: Ref{1, 0}, Cols: []int{0, 1, 2, 3}},
		{A: Ref{1, 1}, B: Ref{2, 0}, Cols: []int{7, 8, 9}},
	}
	if !reflect.DeepEqual(pairs, want) {
		t.Fatalf("pairs %v, want %v", pairs, want)
	}
	// Only the first and third pairs test similar: {0,1} stays alone
	// although its columns overlap {1,0}'s.
	groups := joinPairs(locals, pairs, []bool{true, false, true})
	wantG := [][]Ref{{{0, 0}, {1, 0}}, {{0, 1}}, {{1, 1}, {2, 0}}, {{2, 1}}}
	if !reflect.DeepEqual(groups, wantG) {
		t.Fatalf("groups %v, want %v", groups, wantG)
	}
	// {0,0}+{1,0} hold 5 rows, {2,1} 9; the others are under min_rows 5.
	kept := keepGroups(groups, locals, 5)
	if want := [][]Ref{groups[0], groups[3]}; !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	slots, n := groupSlots(kept, locals)
	if want := [][]int{{0, 1, 2, 3}, {5}}; !reflect.DeepEqual(slots, want) || n != 5 {
		t.Fatalf("slots %v (%d), want %v", slots, n, want)
	}
	// Columns held by members with half of a group's rows: of {0,1,2,3}
	// (3 rows) and {1,2,3} (2 rows), column 0 has 3 of 5: all four.
	rep := groupRep(kept[0], locals, []float64{5, 10, 15, 20}, slots[0], 10)
	if want := []float64{1, 2, 3, 4, 0, 0, 0, 0, 0, 0}; !reflect.DeepEqual(rep, want) {
		t.Fatalf("representative %v, want %v", rep, want)
	}
	// A column held by fewer than half the rows is neither published nor
	// aggregated.
	odd := [][]LocalDesc{{{Cols: []int{0, 1, 2}, Count: 4}}, {{Cols: []int{0, 1, 2, 3}, Count: 1}}}
	if s, _ := groupSlots([][]Ref{{{0, 0}, {1, 0}}}, odd); !reflect.DeepEqual(s, [][]int{{0, 1, 2}}) {
		t.Fatalf("slots %v include a minority column", s)
	}
}

// numBits: the later iterations' bound on a party's Num from the public
// ΣDen, with two bits to spare, never above the configured bound.
func TestNumBits(t *testing.T) {
	for _, c := range []struct {
		den        []float64
		frac, want int
	}{
		{[]float64{0, 3.5, 1000}, 16, 28}, // 1000·2^16 < 2^26
		{[]float64{0, 0}, 16, 3},
		{[]float64{0.25}, 0, 3},
		{[]float64{1 << 50}, 16, 62}, // capped
		{[]float64{1e308}, 16, 62},   // 2^16·1e308 overflows: capped
	} {
		if got := numBits(c.den, c.frac, 62); got != c.want {
			t.Errorf("numBits(%v, %d) = %d, want %d", c.den, c.frac, got, c.want)
		}
	}
}
