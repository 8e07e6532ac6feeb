package anonymize

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Sun TV-7 (Table 5.1): the dependency matrix to four decimals (the
// thesis's printed A2–A5, 1.6681, is 1.6680), Kruskal's tree, the degrees
// (3 and 3, not the printed 4 and 2) and the key attributes {A2, A3}.
func TestDependencyTreeSunTV7(t *testing.T) {
	rows := []string{"000111", "011010", "110100", "001111", "011100", "001001", "111001", "011000", "111011", "011101", "011100", "111111"}
	cols := make([][]string, 6)
	for _, r := range rows {
		for j := range cols {
			cols[j] = append(cols[j], r[j:j+1])
		}
	}
	want := [][]float64{
		{0, 1.3796, 1.5339, 1.8777, 1.8777, 1.8126},
		{1.3796, 0, 1.3753, 1.7772, 1.6680, 1.3180},
		{1.5339, 1.3753, 0, 1.3368, 1.6217, 1.6217},
		{1.8777, 1.7772, 1.3368, 0, 1.9586, 1.9586},
		{1.8777, 1.6680, 1.6217, 1.9586, 0, 1.7510},
		{1.8126, 1.3180, 1.6217, 1.9586, 1.7510, 0},
	}
	vi := VIMatrix(cols)
	for i := range want {
		for j := range want {
			if math.Abs(vi[i][j]-want[i][j]) > 5e-5 {
				t.Errorf("VI(A%d, A%d) = %.4f, want %.4f", i+1, j+1, vi[i][j], want[i][j])
			}
		}
	}
	tree := DependencyTree(vi)
	var got []string
	for _, e := range tree {
		got = append(got, fmt.Sprintf("A%d-A%d", e.I+1, e.J+1))
	}
	if w := []string{"A2-A6", "A3-A4", "A2-A3", "A1-A2", "A3-A5"}; !slices.Equal(got, w) {
		t.Errorf("tree %v, want %v", got, w)
	}
	if keys := KeyAttributes(tree, 6); !slices.Equal(keys, []int{1, 2}) {
		t.Errorf("key attributes %v, want A2, A3", keys)
	}
}

// Sun TV-5 (Table 4.1(a)): entropies and VI.
func TestVISunTV5(t *testing.T) {
	gender := []string{"m", "m", "m", "f", "f", "f"}
	age := []string{"middle", "middle", "young", "young", "old", "old"}
	post := []string{"4350", "4350", "4351", "4352", "4353", "4353"}
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"H(Gender)", columnEntropy(gender), 1}, {"H(Age)", columnEntropy(age), 1.5850}, {"H(Postcode)", columnEntropy(post), 1.9183},
		{"VI(Gender, Age)", VI(gender, age), 1.2516}, {"VI(Gender, Postcode)", VI(gender, post), 0.9183}, {"VI(Age, Postcode)", VI(age, post), 0.3333},
	} {
		if math.Abs(c.got-c.want) > 5e-5 {
			t.Errorf("%s = %.4f, want %.4f", c.name, c.got, c.want)
		}
	}
}

// MDAV on random points, both variants: every record in one group, groups
// of k to 2k−1 records, SSE and SST as computed here by hand, SSE ≤ SST.
func TestMDAV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{7, 30, 101} {
		x := make([][]float64, n)
		for i := range x {
			x[i] = []float64{rng.NormFloat64(), rng.NormFloat64() * 3, float64(rng.IntN(5))}
		}
		for _, k := range []int{2, 3, 5} {
			for _, v := range []MDAVVariant{MDAVStandard, MDAVThesis} {
				groups, err := MDAV(x, k, v)
				if err != nil {
					t.Fatal(err)
				}
				seen := make([]bool, n)
				for _, g := range groups {
					if len(g) < k || len(g) > 2*k-1 && len(groups) > 1 {
						t.Errorf("n=%d k=%d variant %d: group of %d", n, k, v, len(g))
					}
					for _, r := range g {
						if seen[r] {
							t.Fatalf("record %d in two groups", r)
						}
						seen[r] = true
					}
				}
				if slices.Contains(seen, false) {
					t.Fatalf("n=%d k=%d: a record in no group", n, k)
				}
				out, sse, sst, err := Microaggregate(x, groups)
				if err != nil {
					t.Fatal(err)
				}
				var mean [3]float64
				for _, row := range x {
					for j := range mean {
						mean[j] += row[j] / float64(n)
					}
				}
				hs, ht := 0.0, 0.0
				for r, row := range x {
					for j := range row {
						hs += (row[j] - out[r][j]) * (row[j] - out[r][j])
						ht += (row[j] - mean[j]) * (row[j] - mean[j])
					}
				}
				if math.Abs(hs-sse) > 1e-9*ht || math.Abs(ht-sst) > 1e-9*ht || sse > sst {
					t.Errorf("SSE %v (by hand %v), SST %v (by hand %v)", sse, hs, sst, ht)
				}
			}
		}
	}
}

// Issue 32, item 1: with ties, the second record of a pair (farthest from
// the first) may already be in the first record's group. Ten identical
// points at k = 3 gave [[0 1 2] [0 3 4] [5 … 9]]: record 0 twice.
func TestMDAVTies(t *testing.T) {
	x := make([][]float64, 10)
	for i := range x {
		x[i] = []float64{1, 2}
	}
	for _, v := range []MDAVVariant{MDAVStandard, MDAVThesis} {
		groups, err := MDAV(x, 3, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkGroups(groups, len(x), 3); err != nil {
			t.Errorf("variant %d: %v: %v", v, groups, err)
		}
	}
}

// MDAV and AMA's grouping on the first 5,000 Adult records (six numeric
// columns, many ties) at k = 3, 5, 10: disjoint groups of at least k that
// cover every record.
func TestMDAVAdultPartition(t *testing.T) {
	tab := loadUCIAdult(t, false)
	z, proj, _ := adultNumeric(tab, 5000)
	for _, k := range []int{3, 5, 10} {
		for _, c := range []struct {
			name string
			x    [][]float64
			v    MDAVVariant
		}{{"MDAV", z, MDAVStandard}, {"MDAV (thesis)", z, MDAVThesis}, {"AMA", proj, MDAVStandard}, {"AMA (thesis)", proj, MDAVThesis}} {
			groups, err := MDAV(c.x, k, c.v)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkGroups(groups, len(z), k); err != nil {
				t.Errorf("k=%d %s: %v", k, c.name, err)
			}
		}
	}
}

// checkGroups is an independent check of a grouping: every record of n in
// exactly one group, every group at least k.
func checkGroups(groups [][]int, n, k int) error {
	seen := make([]int, n)
	for _, g := range groups {
		if len(g) < k {
			return fmt.Errorf("a group of %d < k = %d", len(g), k)
		}
		for _, r := range g {
			if r < 0 || r >= n {
				return fmt.Errorf("record %d out of range", r)
			}
			seen[r]++
		}
	}
	for r, c := range seen {
		if c != 1 {
			return fmt.Errorf("record %d in %d groups", r, c)
		}
	}
	return nil
}

// Microaggregate refuses groups that are not a partition of the records
// (the old MDAV's output on ten identical points among them).
func TestMicroaggregatePartition(t *testing.T) {
	x := make([][]float64, 10)
	for i := range x {
		x[i] = []float64{float64(i % 2)}
	}
	for _, groups := range [][][]int{
		{{0, 1, 2}, {0, 3, 4}, {5, 6, 7, 8, 9}},
		{{0, 1, 2}, {3, 4, 5, 6, 7, 8}},
		{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9, 10}},
		{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {}},
	} {
		if _, _, _, err := Microaggregate(x, groups); !errors.Is(err, ErrRequirement) {
			t.Errorf("%v: err = %v", groups, err)
		}
	}
	if _, _, _, err := Microaggregate(x, [][]int{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}); err != nil {
		t.Error(err)
	}
}
