package rating

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sunTable72 is Sun's Table 6.2 / 7.1 (r = 7; the last issue sensitive).
func sunTable72() *Matrix {
	return &Matrix{Max: 7, Sensitive: []bool{false, false, false, true}, R: [][]int{
		{3, 6, 0, 6}, {2, 5, 0, 1}, {4, 7, 0, 4}, {5, 6, 0, 1}, {1, 0, 5, 1}, {2, 0, 6, 5},
	}}
}

// Sun Table 6.2 / 7.1 (TV-9), the graph of Fig. 6.4 at ε = 2: edges 12,
// 13, 14, 23, 34 and 56; two components and two Hamming groups;
// 2-decomposable (so (2, 2)-anonymous, Cor. 6.1), not 3-decomposable
// (G₁'s 3-cliques {1,2,3} and {1,3,4} overlap). At ε = 1 maxsize is 3
// (t1's neighbourhood {t1, t2, t3}) and the degree semantics of Defs.
// 6.2–6.3 give the smallest group 2 and the smallest standard deviation
// 1.5 ({t4, t3}: ratings 1 and 4).
func TestSunGraphTable72(t *testing.T) {
	m := sunTable72()
	adj := m.Graph(2)
	want := [][]int{{1, 2, 3}, {0, 2}, {0, 1, 3}, {0, 2}, {5}, {4}}
	if !slices.EqualFunc(adj, want, slices.Equal) {
		t.Fatalf("graph at ε = 2: %v, want %v", adj, want)
	}
	if c := Components(adj); !slices.EqualFunc(c, [][]int{{0, 1, 2, 3}, {4, 5}}, slices.Equal) {
		t.Errorf("components %v", c)
	}
	if h := m.HammingGroups(); h != 2 {
		t.Errorf("Hamming groups %d, want 2", h)
	}
	if d := KDecompose(adj, 2); d.Verdict != Yes || len(d.Groups) != 3 {
		t.Errorf("2-decomposable: %+v", d)
	}
	if d := KDecompose(adj, 3); d.Verdict != No || d.Not != 2 {
		t.Errorf("3-decomposable: %+v", d)
	}
	if r := m.DegreeCheck(adj, 2); r.MinGroup != 2 || r.Below != 0 {
		t.Errorf("degree check at ε = 2: %+v", r)
	}
	r := m.DegreeCheck(m.Graph(1), 3)
	if r.MaxSize != 3 || r.MinGroup != 2 || r.Below != 4 || math.Abs(r.MinSD-1.5) > 1e-12 {
		t.Errorf("degree check at ε = 1: %+v", r)
	}
}

// Sun Table 6.3 (Fig. 6.7(a)) at ε = 2: two Hamming groups but three
// components ({t5, t6} and {t7, t8} are 3 apart at least); none is
// 3-decomposable (the thesis's case 2), all are 2-decomposable.
func TestSunTable63(t *testing.T) {
	m := &Matrix{Max: 7, Sensitive: []bool{false, false, false, true}, R: [][]int{
		{3, 6, 0, 6}, {2, 5, 0, 1}, {4, 7, 0, 4}, {5, 6, 0, 1},
		{1, 0, 5, 1}, {2, 0, 6, 5}, {6, 0, 6, 3}, {5, 0, 5, 2},
	}}
	adj := m.Graph(2)
	if c := Components(adj); len(c) != 3 || m.HammingGroups() != 2 {
		t.Fatalf("components %v, Hamming groups %d", c, m.HammingGroups())
	}
	if d := KDecompose(adj, 3); d.Verdict != No || d.Not != 3 {
		t.Errorf("3: %+v", d)
	}
	if d := KDecompose(adj, 2); d.Verdict != Yes {
		t.Errorf("2: %+v", d)
	}
}

// Fig. 6.6's point, on a matrix of our own: five users rating one issue
// 1, 4, 2, 3, 3 at ε = 2 make K₅ less the edge t1–t2, every degree at
// least 3 ((4, 2)-anonymous by Thm. 6.1) but not 4-decomposable.
func TestDegreeWithoutDecomposition(t *testing.T) {
	m := &Matrix{Max: 5, Sensitive: []bool{false}, R: [][]int{{1}, {4}, {2}, {3}, {3}}}
	adj := m.Graph(2)
	if r := m.DegreeCheck(adj, 4); r.MinGroup != 4 || r.Below != 0 {
		t.Fatalf("degree %+v", r)
	}
	if d := KDecompose(adj, 4); d.Verdict != No {
		t.Errorf("4-decomposable: %+v", d)
	}
	if d := KDecompose(adj, 2); d.Verdict != Yes {
		t.Errorf("2-decomposable: %+v", d)
	}
}

// The ε search for l (§7.2.4) on Table 7.1: l₀ = 2.082; l = 2 ends at
// ε = 3 ({t1..t4} with 2.121, {t5, t6} with 2.0), with or without k = 2;
// l above l₀ has no solution (Cor. 7.1).
func TestEpsilonForL(t *testing.T) {
	m := sunTable72()
	if l0 := m.WholeSD(); math.Abs(l0-2.082) > 5e-4 {
		t.Errorf("l₀ = %.4f", l0)
	}
	for _, k := range []int{1, 2} {
		eps, g, err := m.EpsilonFor(k, 2)
		if err != nil || eps != 3 || !slices.EqualFunc(g, [][]int{{0, 1, 2, 3}, {4, 5}}, slices.Equal) {
			t.Errorf("k = %d: ε = %d, groups %v, %v", k, eps, g, err)
		}
	}
	if _, _, err := m.EpsilonFor(2, 2.1); !errors.Is(err, ErrNoSolution) {
		t.Errorf("l = 2.1: %v", err)
	}
}

// Graph agrees with comparing every pair, and KDecompose's groups are
// disjoint k-cliques covering the graph; on small random graphs its "no"
// agrees with a brute-force search over every set partition.
func TestGraphAndDecomposition(t *testing.T) {
	m := Generate(150, 30, 600, 3, 2)
	for _, eps := range []int{1, 3, 5} {
		adj := m.Graph(eps)
		for a := range m.R {
			var want []int
			for b := range m.R {
				if a != b && m.Dis(a, b) <= eps {
					want = append(want, b)
				}
			}
			if !slices.Equal(adj[a], want) {
				t.Fatalf("ε = %d, user %d: %v, want %v", eps, a, adj[a], want)
			}
		}
		if d := m.DegreeCheck(adj, 1); d.MinGroup != m.Degree(eps) {
			t.Errorf("ε = %d: degree %d, want %d", eps, d.MinGroup, m.Degree(eps))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n, k := 3+rng.IntN(6), 2+rng.IntN(2)
		x := make([][]int, n)
		for u := range x {
			x[u] = []int{1 + rng.IntN(6), 1 + rng.IntN(6)}
		}
		g := &Matrix{Max: 6, Sensitive: []bool{false, false}, R: x}
		adj := g.Graph(1 + rng.IntN(2))
		d := KDecompose(adj, k)
		if want := bruteDecomposable(adj, k); (d.Verdict == Yes) != want || d.Verdict == Unknown {
			t.Fatalf("trial %d: %v, brute force %v on %v", trial, d.Verdict, want, adj)
		}
		if d.Verdict == Yes {
			checkCliques(t, adj, d.Groups, k)
		}
	}
	big := make([][]int, 40) // one component beyond ExactLimit: a path of 4-cliques
	for u := range big {
		for v := range big {
			if u != v && (u/4 == v/4 || (u%4 == 3 && v == u+1) || (v%4 == 3 && u == v+1)) {
				big[u] = append(big[u], v)
			}
		}
	}
	if d := KDecompose(big, 4); d.Verdict != Yes {
		t.Fatalf("path of cliques: %+v", d)
	} else {
		checkCliques(t, big, d.Groups, 4)
	}
	if d := KDecompose(big, 5); d.Verdict == Yes {
		t.Errorf("path of 4-cliques called 5-decomposable")
	}
}

func checkCliques(t *testing.T, adj [][]int, groups [][]int, k int) {
	t.Helper()
	seen := map[int]bool{}
	for _, g := range groups {
		if len(g) < k {
			t.Fatalf("group %v under k = %d", g, k)
		}
		for _, u := range g {
			if seen[u] {
				t.Fatalf("user %d twice", u)
			}
			seen[u] = true
			for _, v := range g {
				if _, ok := slices.BinarySearch(adj[u], v); u != v && !ok {
					t.Fatalf("group %v is not a clique", g)
				}
			}
		}
	}
	if len(seen) != len(adj) {
		t.Fatalf("groups cover %d of %d users", len(seen), len(adj))
	}
}

// bruteDecomposable tries every assignment of users to blocks.
func bruteDecomposable(adj [][]int, k int) bool {
	n := len(adj)
	block := make([]int, n)
	var try func(u, blocks int) bool
	try = func(u, blocks int) bool {
		if u == n {
			size := make([]int, blocks)
			for _, b := range block {
				size[b]++
			}
			return !slices.ContainsFunc(size, func(s int) bool { return s < k })
		}
		for b := 0; b <= blocks; b++ {
			ok := true
			for v := range u {
				if _, e := slices.BinarySearch(adj[u], v); block[v] == b && !e {
					ok = false
					break
				}
			}
			if ok {
				block[u] = b
				if try(u+1, max(blocks, b+1)) {
					return true
				}
			}
		}
		return false
	}
	return try(0, 0)
}

// Anonymise with l makes the matrix (k, ε, l)-anonymous by partition and
// degree (Defs. 6.2–6.3), keeps every issue's range within a group to ε
// (so the average within-group standard deviation is at most ε/2,
// Fig. 6.16(c)); l above l₀ is refused; the measures are neutral on an
// unchanged matrix.
func TestAnonymiseL(t *testing.T) {
	m := Generate(200, 40, 1200, 4, 5)
	l0 := m.WholeSD()
	for _, c := range []struct {
		k, eps int
		l      float64
	}{{3, 1, 1}, {5, 2, 1.2}, {4, 1, l0}} {
		a, groups, _, err := m.Anonymise(c.k, c.eps, c.l, Improved)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Satisfies(groups, c.k, c.eps, c.l) {
			t.Fatalf("%+v: not (k, ε, l)-anonymous by partition", c)
		}
		if r := a.DegreeCheck(a.Graph(c.eps), c.k); r.Below != 0 || r.MinSD < c.l {
			t.Fatalf("%+v: degree check %+v", c, r)
		}
		if sd := a.AverageSD(groups); sd > float64(c.eps)/2+1e-12 {
			t.Errorf("%+v: within-group SD %.3f above ε/2", c, sd)
		}
	}
	if _, _, _, err := m.Anonymise(3, 1, l0+0.01, Improved); !errors.Is(err, ErrNoSolution) {
		t.Errorf("l above l₀: %v", err)
	}
	if r := MembershipChange(m, m, 8, 50, 1); r != 0 {
		t.Errorf("membership change of a matrix with itself %v", r)
	}
	if _, cos, self := CentroidComparison(m, m); math.Abs(cos-1) > 1e-12 || math.Abs(self-1) > 1e-12 {
		t.Errorf("centroid comparison with itself %v %v", cos, self)
	}
}

// MembershipChange by hand: four users on two issues, seeds users 0 and
// 2; anonymising moves user 1 from (1, 1) to (5, 5), from cluster 0 to cluster 1, so one of four
// (25 %) changes. AverageSD: issue 0 of {1, 1, 5, 5} has SD 2.
func TestMeasuresByHand(t *testing.T) {
	orig := &Matrix{Max: 5, Sensitive: []bool{false, false}, R: [][]int{{1, 1}, {1, 1}, {5, 5}, {5, 5}}}
	anon := &Matrix{Max: 5, Sensitive: []bool{false, false}, R: [][]int{{1, 1}, {5, 5}, {5, 5}, {5, 5}}}
	if got := orig.AverageSD(nil); got != 2 {
		t.Errorf("average SD %v, want 2", got)
	}
	if got := orig.kmeans([]int{0, 2}, 10); !slices.Equal(got, []int{0, 0, 1, 1}) {
		t.Fatalf("k-means %v", got)
	}
	if got := anon.kmeans([]int{0, 2}, 10); !slices.Equal(got, []int{0, 1, 1, 1}) {
		t.Fatalf("k-means %v", got)
	}
	if r := membershipChange(orig, anon, []int{0, 2}, 10); r != 0.25 {
		t.Errorf("membership change %v, want 0.25", r)
	}
	inner, _, _ := CentroidComparison(orig, anon)
	if want := 3*4.0 + 3*4.0; math.Abs(inner-want) > 1e-12 { // centroids (3, 3) and (4, 4)
		t.Errorf("inner product %v, want %v", inner, want)
	}
}

// A k-decomposable matrix is published unchanged (§6.3.3's case 1): one
// issue rated 2, 3, 1, 4 at k = 2, ε = 1 splits into {2, 1} and {3, 4}
// with no distortion, where grouping the nearest first ({2, 3}, then
// {1, 4}) would modify {1, 4}. Table 7.1 at ε = 2 likewise, and with
// l = 2 its pairs merge into {t1..t4} and {t5, t6}, modified within ε.
func TestAnonymiseKeepsDecomposable(t *testing.T) {
	m := &Matrix{Max: 5, Sensitive: []bool{false}, R: [][]int{{2}, {3}, {1}, {4}}}
	a, groups, dist, err := m.Anonymise(2, 1, 0, Improved)
	if err != nil || dist != 0 || !slices.EqualFunc(groups, [][]int{{0, 2}, {1, 3}}, slices.Equal) || !slices.EqualFunc(a.R, m.R, slices.Equal) {
		t.Fatalf("groups %v distortion %d %v", groups, dist, err)
	}
	tab := sunTable72()
	if _, g, dist, _ := tab.Anonymise(2, 2, 0, Improved); dist != 0 || len(g) != 3 {
		t.Errorf("Table 7.1 at ε = 2: groups %v, distortion %d", g, dist)
	}
	a, g, _, err := tab.Anonymise(2, 2, 2, Improved)
	if err != nil || !slices.EqualFunc(g, [][]int{{0, 1, 2, 3}, {4, 5}}, slices.Equal) || !a.Satisfies(g, 2, 2, 2) {
		t.Errorf("Table 7.1 at ε = 2, l = 2: groups %v, %v", g, err)
	}
}

// Sun TV-10 through Anonymise (one group of all users, ε = 2): the
// thesis's literal outputs (Table 6.4's T′ for case 2.1.1 with its
// distortion 4, Def. 6.4's example; cases 2.2.1 and 2.2.2, distortions 4
// and 8) and the improved ones (2, 2 and 2).
func TestAnonymiseSunTV10(t *testing.T) {
	for _, c := range []struct {
		in, literal, improved [][]int
		dl, di                int
	}{
		{[][]int{{5, 6, 0}, {2, 5, 0}, {4, 7, 0}, {5, 6, 0}},
			[][]int{{5, 5, 0}, {3, 5, 0}, {3, 7, 0}, {5, 7, 0}}, [][]int{{5, 6, 0}, {3, 5, 0}, {3, 7, 0}, {5, 6, 0}}, 4, 2},
		{[][]int{{5, 6}, {2, 5}, {4, 6}},
			[][]int{{5, 7}, {3, 5}, {3, 5}}, [][]int{{4, 6}, {3, 5}, {4, 6}}, 4, 2},
		{[][]int{{5, 6}, {2, 5}, {4, 7}, {4, 5}},
			[][]int{{4, 6}, {4, 6}, {3, 5}, {4, 6}}, [][]int{{4, 6}, {3, 5}, {4, 7}, {4, 5}}, 8, 2},
	} {
		m := &Matrix{Max: 7, Sensitive: make([]bool, len(c.in[0])), R: c.in}
		for _, x := range []struct {
			mode Mode
			want [][]int
			dist int
		}{{Literal, c.literal, c.dl}, {Improved, c.improved, c.di}} {
			a, g, dist, err := m.Anonymise(len(c.in), 2, 0, x.mode)
			if err != nil || len(g) != 1 || dist != x.dist || !slices.EqualFunc(a.R, x.want, slices.Equal) {
				t.Errorf("mode %d on %v: %v, distortion %d, want %v and %d (%v)", x.mode, c.in, a.R, dist, x.want, x.dist, err)
			}
		}
	}
}
