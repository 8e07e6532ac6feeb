package score

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
)

func bc(rows, cols []int) bicluster.Bicluster { return bicluster.Bicluster{Rows: rows, Cols: cols} }

// TestMatch checks the match score on hand-computed cases.
func TestMatch(t *testing.T) {
	a := bc([]int{0, 1}, []int{0, 1})
	b := bc([]int{1, 2}, []int{0, 1})
	c := bc([]int{5}, []int{5})
	cases := []struct {
		m1, m2 []bicluster.Bicluster
		want   float64
	}{
		{[]bicluster.Bicluster{a}, []bicluster.Bicluster{a}, 1},
		{[]bicluster.Bicluster{a}, []bicluster.Bicluster{c}, 0},
		// |I∩| = 1, |J∩| = 2, |I∪| = 3, |J∪| = 2: 2/6.
		{[]bicluster.Bicluster{a}, []bicluster.Bicluster{b}, 1.0 / 3},
		// The best match counts; extra output does not lower the score.
		{[]bicluster.Bicluster{a}, []bicluster.Bicluster{c, b, a}, 1},
		// Averaged over M1: (1 + 0)/2.
		{[]bicluster.Bicluster{a, c}, []bicluster.Bicluster{a}, 0.5},
		{[]bicluster.Bicluster{a}, nil, 0},
		{nil, []bicluster.Bicluster{a}, 0},
	}
	for i, tc := range cases {
		if got := Match(tc.m1, tc.m2); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("case %d: %v, want %v", i, got, tc.want)
		}
	}
}

// TestConsensus: scikit-learn's consensus_score cases (its test_bicluster
// metrics: a and b are complementary halves of four rows and columns),
// then hand-computed partial ones.
func TestConsensus(t *testing.T) {
	a := []int{0, 1}
	b := []int{2, 3}
	set := func(pairs ...[2][]int) []bicluster.Bicluster {
		var out []bicluster.Bicluster
		for _, p := range pairs {
			out = append(out, bc(p[0], p[1]))
		}
		return out
	}
	// consensus_score((rows, cols), (rows, cols)) with one bicluster per
	// list entry: ((a, a)) means rows a, columns a.
	cases := []struct {
		x, y []bicluster.Bicluster
		want float64
	}{
		{set([2][]int{a, a}), set([2][]int{a, a}), 1},
		{set([2][]int{a, a}, [2][]int{b, b}), set([2][]int{b, b}, [2][]int{a, a}), 1},
		{set([2][]int{a, b}, [2][]int{b, a}), set([2][]int{b, a}, [2][]int{a, b}), 1},
		{set([2][]int{a, a}), set([2][]int{b, a}), 0},
		{set([2][]int{a, a}), set([2][]int{a, b}), 0},
		// Rows {0,1} × cols {0,1} against × cols {0,1,2}: 4/6; one of two: /2.
		{set([2][]int{a, a}), set([2][]int{a, []int{0, 1, 2}}), 4.0 / 6},
		{set([2][]int{a, a}, [2][]int{b, b}), set([2][]int{a, []int{0, 1, 2}}), 4.0 / 6 / 2},
		{set([2][]int{a, a}), nil, 0},
	}
	for i, tc := range cases {
		if got := Consensus(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("case %d: %v, want %v", i, got, tc.want)
		}
	}
}

// TestAssign: the Hungarian algorithm against brute force on small
// matrices, square and rectangular.
func TestAssign(t *testing.T) {
	cases := [][][]float64{
		{{1, 2, 3}, {2, 4, 6}, {3, 6, 9}},
		{{0.9, 0.1, 0.5}, {0.8, 0.7, 0.1}},
		{{0.9, 0.1}, {0.8, 0.7}, {0.95, 0.2}},
		{{0}},
		{{5, 1, 1, 1}, {5, 1, 1, 1}, {1, 1, 1, 7}, {1, 6, 1, 1}},
	}
	for i, w := range cases {
		got := Assign(w)
		total, used := 0.0, map[int]bool{}
		for r, c := range got {
			if c < 0 {
				continue
			}
			if used[c] {
				t.Fatalf("case %d: column %d used twice: %v", i, c, got)
			}
			used[c] = true
			total += w[r][c]
		}
		if best := brute(w, 0, map[int]bool{}); math.Abs(total-best) > 1e-12 {
			t.Errorf("case %d: assignment %v sums to %v, best is %v", i, got, total, best)
		}
	}
	if got := Assign([][]float64{{0.1, 0.9}, {0.9, 0.1}}); !reflect.DeepEqual(got, []int{1, 0}) {
		t.Errorf("2×2 anti-diagonal: %v", got)
	}
}

func brute(w [][]float64, r int, used map[int]bool) float64 {
	if r == len(w) {
		return 0
	}
	best := brute(w, r+1, used) // row r unpaired
	for c := range w[r] {
		if !used[c] {
			used[c] = true
			best = max(best, w[r][c]+brute(w, r+1, used))
			used[c] = false
		}
	}
	return best
}

// TestKMeans: two well-separated groups of rows are recovered exactly,
// each as its rows × all columns, the same for the same seed.
func TestKMeans(t *testing.T) {
	data := []float64{
		0, 0, 1,
		10, 10, 10,
		0.1, 0, 1,
		10, 9.9, 10,
		0, 0.2, 1,
	}
	m, err := bicluster.NewMatrix(5, 3, data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := KMeans(m, 2, 100, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	want := []bicluster.Bicluster{bc([]int{0, 2, 4}, []int{0, 1, 2}), bc([]int{1, 3}, []int{0, 1, 2})}
	if Consensus(want, got) != 1 || len(got) != 2 {
		t.Errorf("k-means: %v", got)
	}
	again, _ := KMeans(m, 2, 100, []byte("k"))
	if !reflect.DeepEqual(got, again) {
		t.Error("k-means is not deterministic for a seed")
	}
	if _, err := KMeans(m, 0, 10, nil); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("k = 0: %v", err)
	}
	if _, err := KMeans(&bicluster.Matrix{}, 2, 10, nil); !errors.Is(err, bicluster.ErrEmpty) {
		t.Errorf("empty matrix: %v", err)
	}
}
