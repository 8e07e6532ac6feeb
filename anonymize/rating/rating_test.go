package rating

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"
)

// Sun TV-8 (Table 6.1(a), r = 6): the L∞ dissimilarities, the standard
// deviations of issue 4, and the search for ε at k = 2: ε = 5 with groups
// {t1, t2, t3} and {t4, t5}, a (2, 5, 2) solution.
func TestSunTV8(t *testing.T) {
	m := &Matrix{Max: 6, Sensitive: []bool{false, false, false, true}, R: [][]int{
		{6, 1, 0, 6}, {1, 6, 0, 1}, {2, 5, 0, 1}, {1, 0, 5, 1}, {2, 0, 6, 5},
	}}
	want := [][]int{{0, 5, 4, 6, 6}, {5, 0, 1, 6, 6}, {4, 1, 0, 6, 6}, {6, 6, 6, 0, 1}, {6, 6, 6, 1, 0}}
	for a := range want {
		for b := range want {
			if d := m.Dis(a, b); d != want[a][b] {
				t.Errorf("Dis(t%d, t%d) = %d, want %d", a+1, b+1, d, want[a][b])
			}
		}
	}
	for _, c := range []struct {
		users []int
		sd    float64
	}{{[]int{0, 1, 2, 3, 4}, 2.227}, {[]int{3, 4}, 2.0}, {[]int{0, 1, 2}, 2.357}} {
		if sd := m.SD(c.users, 3); math.Abs(sd-c.sd) > 5e-4 {
			t.Errorf("SD of %v = %.4f, want %.3f", c.users, sd, c.sd)
		}
	}
	eps, groups, ok := m.EpsilonForK(2)
	if !ok || eps != 5 || !slices.EqualFunc(groups, [][]int{{0, 1, 2}, {3, 4}}, slices.Equal) {
		t.Fatalf("ε = %d, groups %v", eps, groups)
	}
	if k, l := m.KL(groups); k != 2 || l < 2 {
		t.Errorf("k = %d, l = %v", k, l)
	}
}

// Sun TV-9 (Table 7.1, r = 7): slicing at ε = 1 gives {t1, t2}, {t3, t4},
// {t5, t6} with sensitive SDs 2.5, 1.5, 2: (2, 1, 1.5)-anonymous; the
// pairwise baseline gives the same partition.
func TestSunTV9(t *testing.T) {
	m := &Matrix{Max: 7, Sensitive: []bool{false, false, false, true}, R: [][]int{
		{3, 6, 0, 6}, {2, 5, 0, 1}, {4, 7, 0, 4}, {5, 6, 0, 1}, {1, 0, 5, 1}, {2, 0, 6, 5},
	}}
	g := m.Slice(2, 1)
	if want := [][]int{{0, 1}, {2, 3}, {4, 5}}; !slices.EqualFunc(g, want, slices.Equal) {
		t.Fatalf("slicing %v, want %v", g, want)
	}
	if k, l := m.KL(g); k != 2 || math.Abs(l-1.5) > 1e-12 {
		t.Errorf("k = %d, l = %v", k, l)
	}
	if p := m.Pairwise(2, 1); !slices.EqualFunc(p, g, slices.Equal) {
		t.Errorf("pairwise %v", p)
	}
	if !m.Satisfies(g, 2, 1, 1.5) || m.Satisfies(g, 2, 1, 1.6) {
		t.Error("Satisfies disagrees with (2, 1, 1.5)")
	}
}

// Sun TV-10 (ε = 2), "improved" outputs: the modified issues keep their
// sums and a range of at most ε.
func TestModifyIssueSunTV10(t *testing.T) {
	for _, c := range []struct{ in, want []int }{
		{[]int{5, 2, 4, 5}, []int{5, 3, 3, 5}}, // issue 1 of case 2.1.1 (mean 4)
		{[]int{6, 5, 7, 6}, []int{6, 5, 7, 6}}, // issue 2: within ε, untouched
		{[]int{5, 2, 4}, []int{4, 3, 4}},       // case 2.2.1 (mean 11/3)
		{[]int{5, 2, 4, 4}, []int{4, 3, 4, 4}}, // case 2.2.2 (mean 15/4)
	} {
		got := ModifyIssue(c.in, 2, 7)
		sum := func(x []int) (s int) {
			for _, v := range x {
				s += v
			}
			return
		}
		if !slices.Equal(got, c.want) || sum(got) != sum(c.in) || slices.Max(got)-slices.Min(got) > 2 {
			t.Errorf("ModifyIssue(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Slicing and the pairwise baseline agree on generated data; Anonymise
// gives groups of at least k that are ε-cliques, so the result passes the
// degree check of Thm. 6.1.
func TestSliceAndAnonymise(t *testing.T) {
	m := Generate(120, 60, 1500, 6, 1)
	for _, eps := range []int{1, 2, 3} {
		if s, p := m.Slice(3, eps), m.Pairwise(3, eps); !slices.EqualFunc(s, p, slices.Equal) {
			t.Fatalf("ε = %d: slicing and pairwise differ", eps)
		}
	}
	for _, k := range []int{2, 5} {
		for _, eps := range []int{1, 2} {
			a, groups, dist, err := m.Anonymise(k, eps, 0, Improved)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Satisfies(groups, k, eps, 0) || a.Degree(eps) < k {
				t.Fatalf("k = %d ε = %d: not (k, ε)-anonymous", k, eps)
			}
			t.Logf("k = %d ε = %d: %d groups, distortion %d, query error %.3f", k, eps, len(groups), dist, QueryError(m, a, 100, 1))
		}
	}
}

// The figures of docs/anonymize.md (COHORT_RATING=1): a seeded matrix of
// MovieLens 100K's shape (943 users, 1,682 items, 100,000 ratings, at least
// 20 a user); slicing against the pairwise baseline, and the query error of
// (k, ε)-anonymisation at k = 10.
func TestRatingFigures(t *testing.T) {
	if os.Getenv("COHORT_RATING") == "" {
		t.Skip("set COHORT_RATING=1 for the rating-data figures")
	}
	m := Generate(943, 1682, 100000, 20, 1)
	n := 0
	for _, row := range m.R {
		for i, x := range row {
			if x > 0 && !m.Sensitive[i] {
				n++
			}
		}
	}
	t.Logf("generated: %d users, %d items, %d ratings", len(m.R), len(m.R[0])-1, n)
	for _, eps := range []int{1, 2, 3, 4} {
		st := time.Now()
		s := m.Slice(20, eps)
		ts := time.Since(st)
		st = time.Now()
		p := m.Pairwise(20, eps)
		tp := time.Since(st)
		k, _ := m.KL(s)
		t.Logf("ε = %d: slicing %v, pairwise %v (%.1f×), %d groups, smallest %d, same partition %v", eps, ts.Round(time.Millisecond), tp.Round(time.Millisecond), tp.Seconds()/ts.Seconds(), len(s), k, slices.EqualFunc(s, p, slices.Equal))
	}
	for _, eps := range []int{1, 2, 3} {
		st := time.Now()
		a, groups, dist, err := m.Anonymise(10, eps, 0, Improved)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("k = 10, ε = %d: %d groups, distortion %d, query error %.1f %%, %v", eps, len(groups), dist, 100*QueryError(m, a, 100, 1), time.Since(st).Round(time.Millisecond))
	}
}
