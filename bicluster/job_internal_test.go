package bicluster

import (
	"reflect"
	"testing"
)

// The coordinator's merge bookkeeping on public descriptions: groups by
// column overlap across parties only, transitively; small groups dropped;
// misfits split off; sums only on the members' columns.
func TestMergeBookkeeping(t *testing.T) {
	locals := [][]LocalDesc{
		{{Cols: []int{0, 1, 2, 3}, Count: 3}, {Cols: []int{0, 1, 2}, Count: 1}}, // party 0: two overlapping locals
		{{Cols: []int{1, 2, 3}, Count: 2}, {Cols: []int{7, 8}, Count: 2}},
		{{Cols: []int{7, 8, 9}, Count: 1}, {Cols: []int{5}, Count: 9}},
	}
	groups := initialGroups(locals)
	want := [][]Ref{{{0, 0}, {0, 1}, {1, 0}}, {{1, 1}, {2, 0}}, {{2, 1}}}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
	// {1,1}+{2,0} hold 3 rows: dropped at min_rows 5; {2,1} holds 9.
	kept := keepGroups(groups, locals, 5)
	if want := [][]Ref{groups[0], groups[2]}; !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	slots, n := groupSlots(kept, locals)
	if want := [][]int{{0, 1, 2, 3}, {5}}; !reflect.DeepEqual(slots, want) || n != 5 {
		t.Fatalf("slots %v (%d), want %v", slots, n, want)
	}
	// Columns held by members with half the group's 6 rows: 1, 2, 3 (6)
	// and 0 (4); all of them.
	if got := groupCols(kept[0], locals); !reflect.DeepEqual(got, []int{0, 1, 2, 3}) {
		t.Fatalf("group columns %v", got)
	}
	rep := groupRep(kept[0], locals, []float64{6, 12, 18, 24}, slots[0], 10)
	if want := []float64{1, 2, 3, 4, 0, 0, 0, 0, 0, 0}; !reflect.DeepEqual(rep, want) {
		t.Fatalf("representative %v, want %v", rep, want)
	}
	split := splitMisfits(kept, []Ref{{1, 0}})
	if want := [][]Ref{{{0, 0}, {0, 1}}, {{2, 1}}, {{1, 0}}}; !reflect.DeepEqual(split, want) {
		t.Fatalf("after the misfit %v, want %v", split, want)
	}
}
