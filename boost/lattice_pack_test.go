package boost

import (
	"errors"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/lattice"
)

// TestPackColumns: columns take their bins less bin 0's position, packed
// first fit by decreasing width into groups of the layout's positions, no
// two columns of a group overlapping; default_credit's host (4 groups for
// 10 columns) and a9a's binary columns (2 a group) as the figures assume.
func TestPackColumns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		bins   []int
		width  int
		groups int
	}{
		{"default_credit host", []int{32, 2, 7, 4, 32, 11, 11, 11, 11, 10}, 32, 4},
		{"a9a binary", slices.Repeat([]int{2}, 123), 2, 62},
		{"one column", []int{5}, 5, 1},
		{"constant columns", []int{1, 1}, 4, 1},
		{"a column a group", []int{4, 4, 4}, 4, 3},
	}
	for _, c := range cases {
		p, err := packColumns(c.bins, c.width)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.groups != c.groups {
			t.Errorf("%s: %d groups, want %d", c.name, p.groups, c.groups)
		}
		used := make([][]bool, p.groups)
		for g := range used {
			used[g] = make([]bool, c.width)
		}
		for f, a := range p.at {
			if !slices.Contains(p.cols[a.group], f) {
				t.Errorf("%s: column %d not listed in its group %d", c.name, f, a.group)
			}
			for q := a.offset; q < a.offset+c.bins[f]-1; q++ {
				if q >= c.width || used[a.group][q] {
					t.Fatalf("%s: column %d's position %d of group %d is outside the layout or taken", c.name, f, q, a.group)
				}
				used[a.group][q] = true
			}
		}
	}
	for _, bad := range [][]int{{3, 0}, {3, 6}} {
		if _, err := packColumns(bad, 5); !errors.Is(err, ErrLayoutBins) {
			t.Errorf("bins %v in a layout of 5: %v, want ErrLayoutBins", bad, err)
		}
	}
}

// TestGroupTermsLeaveBinZero: a group's terms count each entry's rows in
// every bin but bin 0 of each of its columns, at the column's offset (one
// term a position, the rows' counts added), so that the Ws of columns
// whose rows mostly lie in bin 0 are sparse.
func TestGroupTermsLeaveBinZero(t *testing.T) {
	t.Parallel()
	l := &Local{feats: []Feature{
		{Cuts: []float64{1, 2}, bin: []int32{0, 1, 0, 2, 1, 0}},
		{Cuts: []float64{1}, bin: []int32{1, 1, 0, 0, 0, 1}},
	}}
	p, err := l.pack(4) // column 0 at positions 0-1, column 1 at 2
	if err != nil || p.groups != 1 || p.at[1].offset != 2 {
		t.Fatalf("pack %+v: %v", p, err)
	}
	entries := [][]rowCount{{{0, 1}, {1, 2}, {4, 3}}, {{2, 1}, {5, 4}}, {{3, 1}, {0, 2}}}
	got := l.groupTermsFrom(nil, &p, 0, entries, 10)
	want := []lattice.BinTerm{
		{Row: 10, Bin: 0, Weight: 5}, {Row: 10, Bin: 2, Weight: 3},
		{Row: 11, Bin: 2, Weight: 4},
		{Row: 12, Bin: 1, Weight: 1}, {Row: 12, Bin: 2, Weight: 2},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("terms %v, want %v", got, want)
	}
}

// TestUnpack: a decrypted group's positions go back to their columns'
// bins at every summed node, bin 0 and the bins a column lacks left
// alone, and a node's sums from two openings add.
func TestUnpack(t *testing.T) {
	t.Parallel()
	p, err := packColumns([]int{3, 3, 4}, 4) // column 2 alone; columns 0 and 1 share a group
	if err != nil || p.groups != 2 {
		t.Fatalf("pack %+v: %v", p, err)
	}
	out := make(BinSums, 3)
	for f := range out {
		out[f] = make([]Vec, 4) // the layout's bins, as the class holder reads
		for b := range out[f] {
			out[f][b] = make(Vec, 2*3) // three open nodes
		}
	}
	// Group 1 (columns 0, 1) for nodes 0 and 2: position q of node y
	// holds 10·y + q (gradients) and 100 + 10·y + q (hessians).
	g := p.at[0].group
	gs, hs := make([]int64, 2*4), make([]int64, 2*4)
	for i := range gs {
		gs[i], hs[i] = int64(10*(i/4)+i%4), int64(100+10*(i/4)+i%4)
	}
	p.unpack(out, g, gs, hs, []int{0, 2})
	p.unpack(out, g, gs, hs, []int{0, 2}) // a re-used node's sums add
	at := func(f, b int) int64 { return int64(p.at[f].offset + b - 1) }
	for f, bins := range []int{3, 3} {
		for b := range 4 {
			for k := range 3 {
				var wg, wh int64
				if b >= 1 && b < bins && k != 1 {
					y := int64(k / 2)
					wg, wh = 2*(10*y+at(f, b)), 2*(100+10*y+at(f, b))
				}
				if out[f][b][2*k] != wg || out[f][b][2*k+1] != wh {
					t.Errorf("column %d bin %d node %d: %d, %d, want %d, %d", f, b, k, out[f][b][2*k], out[f][b][2*k+1], wg, wh)
				}
			}
		}
	}
	for b := range out[2] {
		if slices.ContainsFunc(out[2][b], func(v int64) bool { return v != 0 }) {
			t.Errorf("column 2, not in the group read, has sums at bin %d", b)
		}
	}
}

// FuzzPackColumns: the class holder packs the columns' bins a table's
// party names to it (untrusted): any list is refused or packed with every
// column's positions inside the layout and no two columns of a group
// overlapping.
func FuzzPackColumns(f *testing.F) {
	f.Add([]byte{32, 2, 7, 4, 32, 11, 11, 11, 11, 10}, uint8(32))
	f.Add([]byte{2, 2, 2}, uint8(2))
	f.Add([]byte{0, 9}, uint8(4))
	f.Fuzz(func(t *testing.T, raw []byte, w uint8) {
		width := int(w)
		bins := make([]int, len(raw))
		for i, b := range raw {
			bins[i] = int(b)
		}
		p, err := packColumns(bins, width)
		if err != nil {
			if !errors.Is(err, ErrLayoutBins) {
				t.Fatalf("bins %v width %d: %v, want ErrLayoutBins", bins, width, err)
			}
			return
		}
		if p.groups < 1 || len(p.cols) != p.groups {
			t.Fatalf("bins %v width %d: %d groups, %d listed", bins, width, p.groups, len(p.cols))
		}
		used := make(map[[2]int]bool)
		for c, a := range p.at {
			if a.group < 0 || a.group >= p.groups || a.offset < 0 || a.offset+bins[c]-1 > width {
				t.Fatalf("bins %v width %d: column %d at %+v", bins, width, c, a)
			}
			for q := a.offset; q < a.offset+bins[c]-1; q++ {
				if used[[2]int{a.group, q}] {
					t.Fatalf("bins %v width %d: position %d of group %d taken twice", bins, width, q, a.group)
				}
				used[[2]int{a.group, q}] = true
			}
		}
	})
}
