package bicluster_test

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/score"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/table"
)

// TestCHawkFindsImplantedAtZeroNoise: the paper's claim (§5.2) that at
// γ = 0 cHawk "can always find the implanted biclusters correctly": every
// implanted bicluster exactly (match 1) and nothing else (consensus 1).
func TestCHawkFindsImplantedAtZeroNoise(t *testing.T) {
	t.Parallel()
	for n := range 20 {
		m, truth, err := synth.Paper(0).Generate(seedN(n))
		if err != nil {
			t.Fatal(err)
		}
		res, err := bicluster.CHawk(m, seedN(n), bicluster.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		if s := score.Match(truth, res.Biclusters); s != 1 {
			t.Errorf("seed %d: match %v, want 1", n, s)
		}
		if s := score.Consensus(truth, res.Biclusters); s != 1 {
			t.Errorf("seed %d: consensus %v with %d biclusters, want 1", n, s, len(res.Biclusters))
		}
		for _, b := range res.Biclusters {
			if b.Score != 0 && b.Score > 1e-9 || b.Mean != 1 && math.Abs(b.Mean-1) > 1e-9 {
				t.Errorf("seed %d: constant bicluster with score %v mean %v", n, b.Score, b.Mean)
			}
		}
	}
}

// TestCHawkAboveKMeans: cHawk's match score is above the k-means baseline
// (K = 10) at every noise level of the paper (Fig. 2(a)), by a wide margin.
func TestCHawkAboveKMeans(t *testing.T) {
	t.Parallel()
	for _, g := range []float64{0, 0.05, 0.1, 0.15, 0.2, 0.25} {
		var c, k float64
		for n := range 4 {
			m, truth, err := synth.Paper(g).Generate(seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			res, err := bicluster.CHawk(m, seedN(n), bicluster.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			km, err := score.KMeans(m, 10, 100, seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			c += score.Match(truth, res.Biclusters) / 4
			k += score.Match(truth, km) / 4
		}
		if c < k+0.5 {
			t.Errorf("γ=%v: cHawk match %.3f, k-means %.3f: want cHawk ahead by 0.5", g, c, k)
		}
	}
}

// TestCHawkShifted: on the make_biclusters-style data (300×300, five
// shifted constant biclusters, Gaussian noise σ = 2) cHawk recovers the
// biclusters: consensus ≥ 0.95, with either divergence.
func TestCHawkShifted(t *testing.T) {
	t.Parallel()
	for _, d := range []bicluster.Divergence{bicluster.IDivergence, bicluster.ItakuraSaito} {
		p := bicluster.DefaultParams()
		p.Divergence = d
		for n := range 3 {
			m, truth, err := synth.Sklearn(2).Generate(seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			res, err := bicluster.CHawk(m, seedN(n), p)
			if err != nil {
				t.Fatal(err)
			}
			if s := score.Consensus(truth, res.Biclusters); s < 0.95 {
				t.Errorf("%s seed %d: consensus %.3f, want ≥ 0.95", d, n, s)
			}
		}
	}
}

// TestCHawkOverlapping: biclusters that share columns are all found,
// overlaps included.
func TestCHawkOverlapping(t *testing.T) {
	t.Parallel()
	overlapping(t, 1, []bicluster.Bicluster{
		{Rows: span(0, 15), Cols: span(0, 15)},
		{Rows: span(15, 30), Cols: span(10, 25)},
		{Rows: span(35, 50), Cols: span(20, 35)},
	})
}

// TestCHawkOverlappingRows pins a limit of the local search: when two
// biclusters share rows (rows 10–14 below), crossing minimisation may put
// another bicluster's rows between the shared rows and the second
// bicluster's own rows, and the search then reports the second bicluster
// without the shared rows, and the shared rows on the union of both
// column sets (a maximal block of ones too). Match stays ≥ 0.85.
func TestCHawkOverlappingRows(t *testing.T) {
	t.Parallel()
	overlapping(t, 0.85, []bicluster.Bicluster{
		{Rows: span(0, 15), Cols: span(0, 10)},
		{Rows: span(10, 25), Cols: span(10, 20)},
		{Rows: span(35, 50), Cols: span(15, 30)},
	})
}

// overlapping implants truth (1s in 0s) in a 60×40 matrix and checks that
// cHawk's match score reaches min for five seeds, and that every reported
// bicluster is all 1s.
func overlapping(t *testing.T, min float64, truth []bicluster.Bicluster) {
	t.Helper()
	const R, C = 60, 40
	data := make([]float64, R*C)
	for _, b := range truth {
		for _, r := range b.Rows {
			for _, c := range b.Cols {
				data[r*C+c] = 1
			}
		}
	}
	m, err := bicluster.NewMatrix(R, C, data)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 5 {
		res, err := bicluster.CHawk(m, seedN(n), bicluster.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		if s := score.Match(truth, res.Biclusters); s < min {
			t.Errorf("seed %d: match %v, want ≥ %v; got %v", n, s, min, res.Biclusters)
		}
		for _, b := range res.Biclusters {
			if b.Score != 0 {
				t.Errorf("seed %d: bicluster %v with score %v, want only blocks of 1s", n, b, b.Score)
			}
		}
	}
}

func span(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestCHawkDeterministic: the same seed gives the same orders and
// biclusters; another seed starts from another column order.
func TestCHawkDeterministic(t *testing.T) {
	t.Parallel()
	m, _, err := synth.Paper(0.15).Generate(seedN(1))
	if err != nil {
		t.Fatal(err)
	}
	a, err := bicluster.CHawk(m, []byte("s"), bicluster.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := bicluster.CHawk(m, []byte("s"), bicluster.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two runs with the same seed differ")
		}
	}
	if slices.Equal(bicluster.InitialColumns([]byte("s"), 100), bicluster.InitialColumns([]byte("t"), 100)) {
		t.Error("two seeds give the same initial column order")
	}
}

// TestIdentifyRejects: the minimum rows and the minimum columns bound
// what is reported.
func TestIdentifyRejects(t *testing.T) {
	t.Parallel()
	m, _, err := synth.Paper(0).Generate(seedN(0))
	if err != nil {
		t.Fatal(err)
	}
	p := bicluster.DefaultParams()
	p.MinRows = 11 // every implanted bicluster has 10 rows
	res, err := bicluster.CHawk(m, seedN(0), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Biclusters) != 0 {
		t.Errorf("min rows 11: %d biclusters, want none", len(res.Biclusters))
	}
	p = bicluster.DefaultParams()
	p.MinCols = 11
	if res, err = bicluster.CHawk(m, seedN(0), p); err != nil || len(res.Biclusters) != 0 {
		t.Errorf("min cols 11: %v, %v, want none", res, err)
	}
}

// TestIdentifyScore: a bicluster's score is the mean I-divergence of its
// cells from their mean, relative to the mean, −ln(density) on 0/1 data;
// every reported score is below δ, and the scores match that definition.
func TestIdentifyScore(t *testing.T) {
	t.Parallel()
	m, truth, err := synth.Paper(0).Generate(seedN(0))
	if err != nil {
		t.Fatal(err)
	}
	b0 := truth[0]
	m.Data[b0.Rows[3]*m.Cols+b0.Cols[6]] = 0 // one hole: density 0.99
	res, err := bicluster.CHawk(m, seedN(0), bicluster.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if s := score.Consensus(truth, res.Biclusters); s != 1 {
		t.Fatalf("consensus %v, want the ten biclusters, the hole included", s)
	}
	for _, b := range res.Biclusters {
		want := 0.0
		if slices.Equal(b.Rows, b0.Rows) {
			want = -math.Log(0.99)
		}
		if math.Abs(b.Score-want) > 1e-12 {
			t.Errorf("bicluster %v: score %v, want %v", b.Rows, b.Score, want)
		}
	}
	noisy, _, err := synth.Paper(0.2).Generate(seedN(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, delta := range []float64{0.05, 0.2, 0.5, 0.7} {
		p := bicluster.DefaultParams()
		p.Delta = delta
		res, err := bicluster.CHawk(noisy, seedN(2), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Biclusters) == 0 {
			t.Errorf("δ=%v: no bicluster", delta)
		}
		for _, b := range res.Biclusters {
			mu := 0.0
			for _, r := range b.Rows {
				for _, c := range b.Cols {
					mu += noisy.At(r, c)
				}
			}
			mu /= float64(b.Cells())
			sc := 0.0
			for _, r := range b.Rows {
				for _, c := range b.Cols {
					if x := noisy.At(r, c) / mu; x > 0 {
						sc += x * math.Log(x)
					}
				}
			}
			sc /= float64(b.Cells())
			if !(b.Score < delta) || math.Abs(sc-b.Score) > 1e-9 || math.Abs(mu-b.Mean) > 1e-9 {
				t.Errorf("δ=%v: bicluster score %v (recomputed %v), mean %v (recomputed %v)", delta, b.Score, sc, b.Mean, mu)
			}
		}
	}
}

// TestBadInput: malformed input is an error naming the cause, never a panic.
func TestBadInput(t *testing.T) {
	t.Parallel()
	load := func(csv string) (*bicluster.Matrix, error) {
		tb, err := table.Read(strings.NewReader(csv), "t.csv", "t", nil)
		if err != nil {
			return nil, err
		}
		return bicluster.FromTable(tb)
	}
	m, err := load("id,a,b\nx,1,2\ny,3,4\n")
	if err != nil || m.Rows != 2 || m.Cols != 2 || m.At(1, 0) != 3 || m.RowIDs[1] != "y" || m.ColNames[1] != "b" {
		t.Fatalf("good table: %+v, %v", m, err)
	}
	cases := []struct {
		name, csv string
		want      error
	}{
		{"non-numeric", "id,a,b\nx,1,2\ny,3,oops\n", bicluster.ErrColumns},
		{"no id", "a,b\n1,2\n", bicluster.ErrColumns},
		{"no rows", "id,a,b\n", bicluster.ErrColumns}, // kinds cannot be inferred without rows
		{"only id", "id\nx\n", bicluster.ErrEmpty},
	}
	for _, c := range cases {
		if _, err := load(c.csv); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A party with no rows, loaded with a schema.
	tb, err := table.Read(strings.NewReader("id,a\n"), "t.csv", "t", map[string]table.Kind{"id": table.ID, "a": table.Numeric})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bicluster.FromTable(tb); !errors.Is(err, bicluster.ErrEmpty) {
		t.Errorf("no rows: %v, want ErrEmpty", err)
	}
	if _, err := bicluster.NewMatrix(0, 3, nil); !errors.Is(err, bicluster.ErrEmpty) {
		t.Errorf("empty matrix: %v", err)
	}
	if _, err := bicluster.NewMatrix(1, 2, []float64{1, math.NaN()}); !errors.Is(err, bicluster.ErrValue) {
		t.Errorf("NaN: %v", err)
	}
	if _, err := bicluster.NewMatrix(2, 1, []float64{1e308, 1e308}); !errors.Is(err, bicluster.ErrValue) {
		t.Errorf("values whose sum overflows: %v", err)
	}
	if _, err := bicluster.NewMatrix(1, 2, []float64{1}); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("short data: %v", err)
	}
	if _, err := bicluster.CHawk(&bicluster.Matrix{}, nil, bicluster.DefaultParams()); !errors.Is(err, bicluster.ErrEmpty) {
		t.Errorf("cHawk on empty: %v", err)
	}
	err = bicluster.CheckColumns([]string{"org1", "org2"}, [][]string{{"a", "b"}, {"a", "c"}})
	if !errors.Is(err, bicluster.ErrColumns) || !strings.Contains(err.Error(), "org2") {
		t.Errorf("different columns: %v", err)
	}
	if err := bicluster.CheckColumns([]string{"o1", "o2"}, [][]string{{"a", "b"}, {"b", "a"}}); !errors.Is(err, bicluster.ErrColumns) {
		t.Errorf("columns in another order: %v", err)
	}
	if err := bicluster.CheckColumns([]string{"o1", "o2"}, [][]string{{"a", "b"}, {"a", "b"}}); err != nil {
		t.Errorf("same columns: %v", err)
	}
	good, _ := bicluster.NewMatrix(2, 2, []float64{1, 0, 0, 1})
	for _, mut := range []func(*bicluster.Params){
		func(p *bicluster.Params) { p.Delta = 0 },
		func(p *bicluster.Params) { p.MinRows = 0 },
		func(p *bicluster.Params) { p.Divergence = "euclid" },
		func(p *bicluster.Params) { p.MaxIter = 0 },
		func(p *bicluster.Params) { p.Epsilon = 0 },
		func(p *bicluster.Params) { p.MaxOverlap = 2 },
		func(p *bicluster.Params) { p.Mode = "median" },
		func(p *bicluster.Params) { p.Delta = math.NaN() },
	} {
		p := bicluster.DefaultParams()
		mut(&p)
		if _, err := bicluster.CHawk(good, nil, p); !errors.Is(err, bicluster.ErrParams) {
			t.Errorf("params %+v: %v, want ErrParams", p, err)
		}
	}
	if _, err := bicluster.Identify(good, []int{0, 0}, []int{0, 1}, bicluster.DefaultParams()); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("row order not a permutation: %v", err)
	}
	if _, err := bicluster.SortRows(good, []int{1}, nil); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("short column order: %v", err)
	}
	if _, err := bicluster.ParseDivergence("hellinger"); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("divergence name: %v", err)
	}
	if _, err := bicluster.ParseMode("median"); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("mode name: %v", err)
	}
}

// TestCHawkLarge: on 2,000×50 noisy data (γ = 0.1) with five 400-row
// biclusters, the rows that crossing minimisation leaves outside a
// bicluster's run come back as fragments and are absorbed: five
// biclusters, consensus ≥ 0.95 (0.82 without absorbing).
func TestCHawkLarge(t *testing.T) {
	t.Parallel()
	m, truth, err := synth.Constant{Rows: 2000, Cols: 50, K: 5, BRows: 400, BCols: 10, Noise: 0.1}.Generate([]byte("bench"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := bicluster.CHawk(m, []byte("bench"), bicluster.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if s := score.Consensus(truth, res.Biclusters); s < 0.95 || len(res.Biclusters) != 5 {
		t.Errorf("consensus %.3f with %d biclusters, want ≥ 0.95 with 5", s, len(res.Biclusters))
	}
}

// TestCHawkLift: with Gaussian noise σ = 10 on shifts in [10, 100] the
// background has even patches (mean ≈ 4) that pass δ; MinLift keeps them
// out, so the five biclusters come alone (consensus 0.77 without it on
// the report's ten seeds, 0.97 with it).
func TestCHawkLift(t *testing.T) {
	t.Parallel()
	var c, c0 float64
	const reps = 10
	for n := range reps {
		m, truth, err := synth.Sklearn(10).Generate(seedN(n))
		if err != nil {
			t.Fatal(err)
		}
		p := bicluster.DefaultParams()
		res, err := bicluster.CHawk(m, seedN(n), p)
		if err != nil {
			t.Fatal(err)
		}
		c += score.Consensus(truth, res.Biclusters) / reps
		p.MinLift = 0
		if res, err = bicluster.CHawk(m, seedN(n), p); err != nil {
			t.Fatal(err)
		}
		c0 += score.Consensus(truth, res.Biclusters) / reps
	}
	if c < 0.95 || c0 >= c {
		t.Errorf("consensus %.3f with MinLift 1.5, %.3f without: want ≥ 0.95 and an improvement", c, c0)
	}
}

// TestIdentifyOrder: biclusters come largest first, ties by first row.
func TestIdentifyOrder(t *testing.T) {
	t.Parallel()
	for _, g := range []float64{0, 0.2} {
		m, _, err := synth.Constant{Rows: 120, Cols: 60, K: 4, BRows: 30, BCols: 10, Noise: g}.Generate(seedN(4))
		if err != nil {
			t.Fatal(err)
		}
		res, err := bicluster.CHawk(m, seedN(4), bicluster.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		ok := slices.IsSortedFunc(res.Biclusters, func(a, b bicluster.Bicluster) int {
			if a.Cells() != b.Cells() {
				return b.Cells() - a.Cells()
			}
			return a.Rows[0] - b.Rows[0]
		})
		if !ok || len(res.Biclusters) < 4 {
			t.Errorf("γ=%v: %d biclusters, sorted %v", g, len(res.Biclusters), ok)
		}
	}
}
