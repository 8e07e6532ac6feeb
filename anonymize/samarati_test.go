package anonymize

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"
)

// strategyRec is Sun's recurrence (Theorem 2.1, Corollary 2.1) computed
// literally: the strategies are the ways to take the first step.
func strategyRec(steps []int) int64 {
	n, any := int64(0), false
	for i, s := range steps {
		if s > 0 {
			any = true
			next := slices.Clone(steps)
			next[i]--
			n += strategyRec(next)
		}
	}
	if !any {
		return 1
	}
	return n
}

// Sun's counts: f(1, 2) = 3 for ⟨G₀, Z₀⟩ (Fig. 2.4), 6 for §2.5's two
// hierarchies of two steps, and the closed form agrees with the recurrence;
// on Adult's seven quasi-identifiers (steps 4,2,3,2,2,2,1) 9,081,072,000.
func TestStrategyCountSun(t *testing.T) {
	for _, c := range []struct {
		steps []int
		want  int64
	}{{[]int{1, 2}, 3}, {[]int{2, 2}, 6}, {[]int{0, 0}, 1}, {[]int{4, 2, 3, 2, 2, 2, 1}, 9081072000}} {
		got, err := StrategyCount(c.steps)
		if err != nil || got.Cmp(big.NewInt(c.want)) != 0 {
			t.Errorf("%v: %v %v, want %d", c.steps, got, err, c.want)
		}
	}
	for _, steps := range [][]int{{3}, {1, 1, 1}, {3, 1, 2}, {2, 0, 4}, {1, 2, 1, 2}} {
		got, _ := StrategyCount(steps)
		if want := strategyRec(steps); got.Int64() != want {
			t.Errorf("%v: closed form %v, recurrence %d", steps, got, want)
		}
	}
	if _, err := StrategyCount([]int{1, -1}); !errors.Is(err, ErrRequirement) {
		t.Errorf("negative steps: %v", err)
	}
}

// Samarati on Sun's TV-2 (Table 2.1, ⟨Gender, Zip⟩): k = 2 stops at height
// 2 with both minimal nodes [1,1] and [0,2]; k = 3 at [0,2]; with distinct
// 2-diversity on Disease at [1,1] only (the Male group of [0,2] is all
// Cancer). The heights probed are those of a bisection of 0..3.
func TestSamaratiSunTV2(t *testing.T) {
	ds, disease := sunTV1(t)
	l2, err := SensitiveModel{L: 2}.Code(disease)
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"gender", "zip"}
	for _, c := range []struct {
		k    int
		sens *Coded
		sols [][]int
	}{{2, nil, [][]int{{1, 1}, {0, 2}}}, {3, nil, [][]int{{0, 2}}}, {2, l2, [][]int{{1, 1}}}, {1, nil, [][]int{{0, 0}}}} {
		res, err := Samarati(ds, []Requirement{{QID: all, K: c.k}}, c.sens)
		if err != nil {
			t.Fatal(err)
		}
		if res.Height != sum(c.sols[0]) || !slices.EqualFunc(res.Solutions, c.sols, slices.Equal) {
			t.Errorf("k=%d: height %d solutions %v, want %v", c.k, res.Height, res.Solutions, c.sols)
		}
		if res.Probes[0] != 3 || res.Lattice != 6 || res.MinGroup < c.k {
			t.Errorf("k=%d: probes %v lattice %d min group %d", c.k, res.Probes, res.Lattice, res.MinGroup)
		}
	}
	if _, err := Samarati(ds, []Requirement{{QID: all, K: 7}}, nil); !errors.Is(err, ErrRequirement) {
		t.Errorf("k above the table: %v", err)
	}
}

// On seed 003's lattice, for every k: Samarati's height is the least height
// of a minimal node (the privacy hash table's enumeration), its solutions
// are exactly the minimal nodes of that height, and it returns the one of
// least NCP, checked by label.
func TestSamaratiMatchesHashTable(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{2, 3, 4, 5, 7, 12, 17, 34} {
		minimal, err := MinimalFullDomain(ds, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := sum(minimal[0])
		var want [][]int
		for _, m := range minimal {
			if sum(m) == h {
				want = append(want, m)
			}
		}
		res, err := Samarati(ds, []Requirement{{QID: qid, K: k}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sortVecs := func(v [][]int) { slices.SortFunc(v, slices.Compare) }
		got := slices.Clone(res.Solutions)
		sortVecs(got)
		sortVecs(want)
		if res.Height != h || !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("k=%d: height %d %v, hash table %d %v", k, res.Height, got, h, want)
		}
		best := math.Inf(1)
		for _, v := range want {
			best = math.Min(best, naiveNCP(t, ds.Publish(ds.FullDomain(v)), tax, raw))
		}
		pub := ds.Publish(res.Gen)
		if n := naiveNCP(t, pub, tax, raw); math.Abs(n-best) > 1e-12 || math.Abs(n-res.NCP) > 1e-12 {
			t.Fatalf("k=%d: NCP %v (by label %v), least at that height %v", k, res.NCP, n, best)
		}
		if m := naiveMinGroup(pub, qid); m < k || m != res.MinGroup {
			t.Fatalf("k=%d: naive min group %d, reported %d", k, m, res.MinGroup)
		}
	}
}

// The weighted discernibility metric, by hand on TV-1: at [1,1] the classes
// are (person, 437*) of 4 and (person, 435*) of 2, Gender one step up its
// two-level hierarchy (Def. 4.4 degree 1) and Zip one of its two steps
// (degree 1/2); at [0,2] (Male, 43**) and (Female, 43**) of 3 each.
func TestWeightedDiscernibility(t *testing.T) {
	ds, _ := sunTV1(t)
	for _, c := range []struct {
		levels    []int
		prio      []float64
		wdm, deg  float64
		dm, class float64
	}{
		{[]int{1, 1}, nil, 20 * 0.75, 0.75, 20, 2},
		{[]int{1, 1}, []float64{1, 0}, 20, 1, 20, 2},
		{[]int{1, 1}, []float64{0, 1}, 10, 0.5, 20, 2},
		{[]int{0, 2}, nil, 18 * 0.5, 0.5, 18, 2},
		{[]int{1, 2}, nil, 36, 1, 36, 1},
		{[]int{0, 0}, nil, 0, 0, 2*4 + 2, 4},
	} {
		f, err := ds.Figures(c.levels, c.prio)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.WDM-c.wdm) > 1e-12 || math.Abs(f.Degree-c.deg) > 1e-12 || f.DM != c.dm || float64(f.Classes) != c.class {
			t.Errorf("%v %v: %+v, want WDM %v degree %v DM %v classes %v", c.levels, c.prio, f, c.wdm, c.deg, c.dm, c.class)
		}
	}
	if _, err := ds.Figures([]int{1}, nil); !errors.Is(err, ErrRequirement) {
		t.Errorf("short levels: %v", err)
	}
	if _, _, err := ds.WeightedDiscernibility(ds.FullDomain([]int{0, 0}), []float64{1, -1}, 0); err == nil || !errors.Is(err, ErrRequirement) {
		t.Errorf("negative priority: %v", err)
	}
}

// MinimalNodes reports the hash table's minimal nodes with their figures:
// TV-2 at k = 2 has [1,1] (NCP 3/4: Gender at the root, Zip halfway) and
// [0,2].
func TestMinimalNodesSunTV2(t *testing.T) {
	ds, _ := sunTV1(t)
	nodes, err := MinimalNodes(ds, 2, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || !slices.Equal(nodes[0].Levels, []int{1, 1}) || !slices.Equal(nodes[1].Levels, []int{0, 2}) {
		t.Fatalf("%+v", nodes)
	}
	if nodes[0].NCP != 0.75 || nodes[0].Classes != 2 || nodes[0].MinGroup != 2 || nodes[1].NCP != 0.5 || nodes[1].MinGroup != 3 {
		t.Errorf("%+v", nodes)
	}
}

// Lodha and Thomas's Examples 6–8: D′ for (0.9, 100)-anonymity over the
// U.S. is about 2.4·10⁶; split equally among (Gender, DoB, ZIP) it gives
// about 133 each, Gender keeps its 2 values and the others about 1.1·10³
// (month of birth, three ZIP digits); HIPAA's k = 2·10⁴ with Gender and
// Age in years kept leaves 75 ZIP values (two digits).
func TestProbabilisticLodhaThomas(t *testing.T) {
	dp, err := ProbabilisticPartitions(3e8, 100, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if dp < 2.4e6 || dp > 2.45e6 {
		t.Errorf("D′ = %v, want about 2.4e6", dp)
	}
	d, err := AllocateDistinct([]float64{1, 1, 1}, []float64{2, 2.2e4, 1e5}, 2.4e6)
	if err != nil {
		t.Fatal(err)
	}
	if d[0] != 2 || math.Abs(d[1]-1095.4) > 0.1 || math.Abs(d[2]-1095.4) > 0.1 {
		t.Errorf("Example 7: %v", d)
	}
	if eq := math.Cbrt(2.4e6); math.Abs(eq-133.9) > 0.1 {
		t.Errorf("Example 7 before fixing Gender: %v", eq)
	}
	d, err = AllocateDistinct([]float64{1, 10, 1}, []float64{2, 100, 1e5}, 3e8/2e4)
	if err != nil {
		t.Fatal(err)
	}
	if d[0] != 2 || d[1] != 100 || math.Abs(d[2]-75) > 1e-9 {
		t.Errorf("Example 8: %v", d)
	}
	for _, c := range []struct {
		n    float64
		k    int
		beta float64
	}{{100, 1, 0.1}, {100, 5, 0}, {100, 5, 1}, {3, 5, 0.1}, {math.NaN(), 5, 0.1}} {
		if _, err := ProbabilisticPartitions(c.n, c.k, c.beta); !errors.Is(err, ErrRequirement) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := AllocateDistinct([]float64{1, 0}, []float64{2, 3}, 10); !errors.Is(err, ErrRequirement) {
		t.Errorf("zero weight: %v", err)
	}
}

// Examples 9–11: the quantile transformation of {1, 12, 4, 7, 3} at k = 2
// is Example 9's f ({1, 3, 4} → 3, {7, 12} → 7) with rank difference 3; and
// (Theorem 5) on random sets no k-anonymous transformation found by
// the dynamic programme of §4.1 has a smaller rank difference.
func TestQuantileTransformLodhaThomas(t *testing.T) {
	vals := []float64{1, 12, 4, 7, 3}
	groups, mapped, err := QuantileTransform(vals, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mapped, []float64{3, 7, 3, 7, 3}) || len(groups) != 2 {
		t.Fatalf("groups %v mapped %v", groups, mapped)
	}
	if rd, _ := RankDifference(vals, groups); rd != 3 {
		t.Errorf("rank difference %d, want 3", rd)
	}
	seed := uint64(7)
	next := func() float64 { seed = seed*6364136223846793005 + 1442695040888963407; return float64(seed >> 58) }
	for trial := range 200 {
		n, k := 5+trial%23, 1+trial%4
		xs := make([]float64, n) // distinct: Def. 7 ranks a set
		for i := range xs {
			xs[i] = float64(i)
		}
		for i := n - 1; i > 0; i-- {
			j := int(next()) % (i + 1)
			xs[i], xs[j] = xs[j], xs[i]
		}
		groups, q, err := QuantileTransform(xs, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if len(g) < k || len(g) >= 2*k+1 && k > 1 {
				t.Fatalf("group of %d at k = %d", len(g), k)
			}
		}
		cl, _, err := OneDimK(xs, k)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range groups { // each value goes to its group's median
			for _, j := range g {
				if q[j] != xs[g[(len(g)-1)/2]] {
					t.Fatalf("trial %d: group %d maps %v to %v", trial, i, xs[j], q[j])
				}
			}
		}
		rq, _ := RankDifference(xs, groups)
		rd, _ := RankDifference(xs, cl)
		if rq > rd {
			t.Fatalf("trial %d: quantile rank difference %d above the DP's %d", trial, rq, rd)
		}
	}
	if _, err := RankDifference(vals, [][]int{{0, 1}, {1, 2, 3, 4}}); !errors.Is(err, ErrRequirement) {
		t.Errorf("overlapping groups: %v", err)
	}
	if _, _, err := QuantileTransform(vals, 6); !errors.Is(err, ErrRequirement) {
		t.Errorf("k above n: %v", err)
	}
}

// ProbabilisticAnonymise on seed 003 against its own rows: each attribute
// sits at the lowest level with at most d′_i distinct values (checked by
// label), and Covered is the share of records in classes of at least k,
// counted naively.
func TestProbabilisticAnonymise(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{2, 3, 5} {
		res, err := ProbabilisticAnonymise(ds, k, 0.1, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		for a, q := range qid {
			col, _ := raw.Column(q)
			distinctAt := func(l int) int {
				seen := map[string]bool{}
				for _, v := range col.Str {
					g, _ := tax[q].Generalise(v, l)
					seen[g] = true
				}
				return len(seen)
			}
			l := res.Levels[a]
			if float64(distinctAt(l)) > res.Allowed[a]+1e-9 && l < tax[q].MaxLevel() || l > 0 && float64(distinctAt(l-1)) <= res.Allowed[a] {
				t.Errorf("k=%d %s: level %d, allowed %v", k, q, l, res.Allowed[a])
			}
		}
		pub := ds.Publish(res.Gen)
		in := 0
		for r := range pub.NumRows() {
			n := 0
			for s := range pub.NumRows() {
				if sameRow(rowKey(pub, qid, r), rowKey(pub, qid, s)) {
					n++
				}
			}
			if n >= k {
				in++
			}
		}
		if got := float64(in) / float64(pub.NumRows()); got != res.Covered {
			t.Errorf("k=%d: covered %v, naive %v", k, res.Covered, got)
		}
		if float64(res.Combos) > res.DPrime+1e-9 {
			t.Errorf("k=%d: %d combinations above D′ %v", k, res.Combos, res.DPrime)
		}
	}
}

// MinimalVectors (rolled up) finds exactly the vectors MinimalFullDomain
// (each hashed from the records) finds, on seed 003 for every k and on TV-2
// with and without distinct and entropy 2-diversity; a joint requirement is
// checked against a naive test of every vector.
func TestMinimalVectorsMatchHashTable(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b [][]int) bool {
		a, b = slices.Clone(a), slices.Clone(b)
		slices.SortFunc(a, slices.Compare)
		slices.SortFunc(b, slices.Compare)
		return slices.EqualFunc(a, b, slices.Equal)
	}
	for k := 1; k <= 34; k++ {
		want, err := MinimalFullDomain(ds, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := MinimalVectors(ds, []Requirement{{QID: qid, K: k}}, nil)
		if err != nil || !same(got, want) {
			t.Fatalf("k=%d: %v %v, hash table %v", k, got, err, want)
		}
	}
	tv, disease := sunTV1(t)
	for _, m := range []SensitiveModel{{}, {L: 2}, {EntropyL: 2}} {
		var sens *Coded
		if !m.IsZero() {
			if sens, err = m.Code(disease); err != nil {
				t.Fatal(err)
			}
		}
		for k := 1; k <= 3; k++ {
			want, _ := MinimalFullDomain(tv, k, sens)
			got, _, err := MinimalVectors(tv, []Requirement{{QID: []string{"gender", "zip"}, K: k}}, sens)
			if err != nil || !same(got, want) {
				t.Errorf("TV-2 %v k=%d: %v %v, hash table %v", m, k, got, err, want)
			}
		}
	}
	// joint: <{gender, age}, 6> and <{education}, 4>, every vector tested naively
	reqs := []Requirement{{QID: []string{"gender", "age"}, K: 6}, {QID: []string{"education"}, K: 4}}
	got, _, err := MinimalVectors(ds, reqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sat [][]int
	for g := 0; g <= tax["gender"].MaxLevel(); g++ {
		for e := 0; e <= tax["education"].MaxLevel(); e++ {
			for a := 0; a <= tax["age"].MaxLevel(); a++ {
				pub := ds.Publish(ds.FullDomain([]int{g, e, a}))
				if naiveMinGroup(pub, reqs[0].QID) >= 6 && naiveMinGroup(pub, reqs[1].QID) >= 4 {
					sat = append(sat, []int{g, e, a})
				}
			}
		}
	}
	var want [][]int
	for _, v := range sat {
		if !slices.ContainsFunc(sat, func(w []int) bool { return !slices.Equal(v, w) && dominates(v, w) }) {
			want = append(want, v)
		}
	}
	if !same(got, want) {
		t.Errorf("joint: %v, naive %v", got, want)
	}
}
