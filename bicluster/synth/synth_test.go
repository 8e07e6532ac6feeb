package synth

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/table"
)

// TestPaper: 100×100, ten disjoint 10×10 blocks of 1s, 0s elsewhere at
// γ = 0; at γ = 0.2 exactly 2,000 cells were redrawn, so about 1,000
// differ; the same seed gives the same data.
func TestPaper(t *testing.T) {
	m, bs, err := Paper(0).Generate([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 100 || m.Cols != 100 || len(bs) != 10 {
		t.Fatalf("%d×%d, %d biclusters", m.Rows, m.Cols, len(bs))
	}
	rowSeen, colSeen := map[int]bool{}, map[int]bool{}
	ones := 0
	for _, x := range m.Data {
		if x == 1 {
			ones++
		} else if x != 0 {
			t.Fatalf("value %v", x)
		}
	}
	for _, b := range bs {
		if len(b.Rows) != 10 || len(b.Cols) != 10 || !slices.IsSorted(b.Rows) || !slices.IsSorted(b.Cols) {
			t.Fatalf("bicluster %v", b)
		}
		for _, r := range b.Rows {
			if rowSeen[r] {
				t.Fatalf("row %d in two biclusters", r)
			}
			rowSeen[r] = true
			for _, c := range b.Cols {
				if m.At(r, c) != 1 {
					t.Fatalf("cell %d,%d not 1", r, c)
				}
			}
		}
		for _, c := range b.Cols {
			if colSeen[c] {
				t.Fatalf("column %d in two biclusters", c)
			}
			colSeen[c] = true
		}
	}
	if ones != 1000 {
		t.Errorf("%d ones, want 1000", ones)
	}
	noisy, bs2, err := Paper(0.2).Generate([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bs, bs2) {
		t.Error("noise moved the biclusters")
	}
	diff := 0
	for i := range m.Data {
		if m.Data[i] != noisy.Data[i] {
			diff++
		}
	}
	if diff < 850 || diff > 1150 { // Binomial(2000, ½): mean 1000, sd 22
		t.Errorf("%d cells differ after redrawing 2000", diff)
	}
	again, _, _ := Paper(0.2).Generate([]byte("s"))
	other, _, _ := Paper(0.2).Generate([]byte("t"))
	if !reflect.DeepEqual(noisy, again) || reflect.DeepEqual(noisy, other) {
		t.Error("not deterministic for a seed, or seeds collide")
	}
	ov := Paper(0)
	ov.Overlap = true
	if _, bs, err := ov.Generate([]byte("s")); err != nil || len(bs) != 10 {
		t.Errorf("overlapping variant: %v", err)
	}
}

// TestShifted: every row and column in one group of at least MinSize,
// group k × group k shifted by a constant in [MinVal, MaxVal], the rest 0
// when there is no noise.
func TestShifted(t *testing.T) {
	m, bs, err := Sklearn(0).Generate([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	rows, cols := 0, 0
	for _, b := range bs {
		if len(b.Rows) < 10 || len(b.Cols) < 10 || b.Mean < 10 || b.Mean > 100 {
			t.Errorf("bicluster %d×%d shift %v", len(b.Rows), len(b.Cols), b.Mean)
		}
		rows += len(b.Rows)
		cols += len(b.Cols)
	}
	if rows != 300 || cols != 300 || len(bs) != 5 {
		t.Fatalf("groups cover %d rows, %d columns", rows, cols)
	}
	sum, want := 0.0, 0.0
	for _, x := range m.Data {
		sum += x
	}
	for _, b := range bs {
		want += b.Mean * float64(b.Cells())
	}
	if sum-want > 1e-6*want || want-sum > 1e-6*want {
		t.Errorf("total %v, want %v (shifted cells only)", sum, want)
	}
	if _, _, err := (Shifted{Rows: 20, Cols: 20, K: 5, MinSize: 5}).Generate(nil); !errors.Is(err, ErrParams) {
		t.Errorf("too small: %v", err)
	}
}

// TestSplitCSV: the parts partition the rows, sizes differ by at most
// one, and each part written as CSV reads back as the same matrix.
func TestSplitCSV(t *testing.T) {
	m, _, err := Paper(0.1).Generate([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := Split(m, 3, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, p := range parts {
		if n := len(p.Rows); n < 33 || n > 34 {
			t.Errorf("part of %d rows", n)
		}
		all = append(all, p.Rows...)
		for i, r := range p.Rows {
			if !slices.Equal(p.Matrix.Row(i), m.Row(r)) || p.Matrix.RowIDs[i] != m.RowIDs[r] {
				t.Fatalf("row %d of a part is not row %d", i, r)
			}
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, p.Matrix); err != nil {
			t.Fatal(err)
		}
		tb, err := table.Read(&buf, "p.csv", "p", nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := bicluster.FromTable(tb)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, p.Matrix) {
			t.Error("CSV round trip changed the matrix")
		}
	}
	slices.Sort(all)
	for i, r := range all {
		if i != r {
			t.Fatalf("rows are not a partition: %v", all)
		}
	}
	if _, err := Split(m, 101, nil); !errors.Is(err, ErrParams) {
		t.Errorf("more parties than rows: %v", err)
	}
	if _, _, err := (Constant{Rows: 10, Cols: 10, K: 2, BRows: 6, BCols: 6}).Generate(nil); !errors.Is(err, ErrParams) {
		t.Errorf("blocks that do not fit: %v", err)
	}
	if _, _, err := (Constant{Rows: 10, Cols: 10, K: 1, BRows: 5, BCols: 5, Noise: 2}).Generate(nil); !errors.Is(err, ErrParams) {
		t.Errorf("noise 2: %v", err)
	}
}
