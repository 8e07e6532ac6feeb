package bicluster_test

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/score"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/wire"
)

// TestPhoenixMatchesCHawk: the pure Phoenix steps run in process for 3
// and 4 parties, contributions summed in the clear and local biclusters
// merged in the clear, are within 0.02 match score of centralised cHawk
// (the target), averaged over seeds: in Exact mode up to γ = 0.2,
// in the paper's MeanOfMeans mode up to γ = 0.1 (it falls further behind
// above; docs/bicluster.md has the table up to 0.25).
func TestPhoenixMatchesCHawk(t *testing.T) {
	t.Parallel()
	for _, parties := range []int{3, 4} {
		for _, mode := range []bicluster.Mode{bicluster.Exact, bicluster.MeanOfMeans} {
			noise := []float64{0, 0.1, 0.2}
			if mode == bicluster.MeanOfMeans {
				noise = noise[:2]
			}
			for _, g := range noise {
				p := bicluster.DefaultParams()
				p.Mode = mode
				var c, ph float64
				const reps = 6
				for n := range reps {
					m, truth, err := synth.Paper(g).Generate(seedN(n))
					if err != nil {
						t.Fatal(err)
					}
					res, err := bicluster.CHawk(m, seedN(n), p)
					if err != nil {
						t.Fatal(err)
					}
					bs, err := phoenixInClear(m, parties, seedN(n), p)
					if err != nil {
						t.Fatal(err)
					}
					c += score.Match(truth, res.Biclusters) / reps
					ph += score.Match(truth, bs) / reps
				}
				if g == 0 && ph < 1-1e-12 {
					t.Errorf("%d parties, %s, γ=0: Phoenix match %v, want 1", parties, mode, ph)
				}
				if ph < c-0.02 {
					t.Errorf("%d parties, %s, γ=%v: Phoenix match %.3f, cHawk %.3f: more than 0.02 apart", parties, mode, g, ph, c)
				}
			}
		}
	}
}

// TestPhoenixOnePartyIsCHawk: with one party the pure steps are cHawk's
// crossing minimisation exactly (same orders, same biclusters).
func TestPhoenixOnePartyIsCHawk(t *testing.T) {
	t.Parallel()
	m, _, err := synth.Paper(0.1).Generate(seedN(3))
	if err != nil {
		t.Fatal(err)
	}
	p := bicluster.DefaultParams()
	res, err := bicluster.CHawk(m, seedN(3), p)
	if err != nil {
		t.Fatal(err)
	}
	cols := bicluster.InitialColumns(seedN(3), m.Cols)
	var st bicluster.PartyState
	for iter := 1; ; iter++ {
		var c bicluster.Contribution
		if st, c, err = bicluster.Round(m, st, cols, bicluster.Exact); err != nil {
			t.Fatal(err)
		}
		// The fixed-point vector of one aggregation round-trips.
		back, err := bicluster.ContributionFromVector(c.Vector(), m.Cols)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("vector round trip: %v", err)
		}
		next, changed, err := bicluster.UpdateColumns(back, cols)
		if err != nil {
			t.Fatal(err)
		}
		cols = next
		if bicluster.Done(changed, iter, p.MaxIter) {
			if iter != res.Iterations {
				t.Errorf("%d iterations, cHawk ran %d", iter, res.Iterations)
			}
			break
		}
	}
	p.LocalMinRows = p.MinRows
	st, bs, err := bicluster.Finish(m, st, cols, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cols, res.ColOrder) || !slices.Equal(st.RowOrder, res.RowOrder) || !reflect.DeepEqual(bs, res.Biclusters) {
		t.Error("one-party Phoenix differs from cHawk")
	}
}

// TestRoundContribution checks one party's contribution by hand.
//
//	rows: r0 = (2, 0, 1), r1 = (0, 3, 1), r2 = (−1, 0, 0) (no edge)
//	column order (2, 0, 1): ranks c0→1, c1→2, c2→0
//	row barycenters: r0 (2·1+1·0)/3 = 2/3, r1 (3·2+1·0)/4 = 3/2, r2 +Inf
//	row order r0, r1, r2; ρ = 0, 1/2, 1
//	exact: Num = (2·0, 3·½, 1·0+1·½) = (0, 1.5, 0.5), Den = (2, 3, 2)
//	mean-of-means: Num = (0, 0.5, 0.25), Den = (1, 1, 1)
func TestRoundContribution(t *testing.T) {
	t.Parallel()
	m, err := bicluster.NewMatrix(3, 3, []float64{2, 0, 1, 0, 3, 1, -1, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	st, c, err := bicluster.Round(m, bicluster.PartyState{RowOrder: []int{2, 1, 0}}, []int{2, 0, 1}, bicluster.Exact)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.RowOrder, []int{0, 1, 2}) {
		t.Errorf("row order %v", st.RowOrder)
	}
	if !slices.Equal(c.Num, []float64{0, 1.5, 0.5}) || !slices.Equal(c.Den, []float64{2, 3, 2}) {
		t.Errorf("exact contribution %+v", c)
	}
	_, c, err = bicluster.Round(m, bicluster.PartyState{}, []int{2, 0, 1}, bicluster.MeanOfMeans)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Num, []float64{0, 0.5, 0.25}) || !slices.Equal(c.Den, []float64{1, 1, 1}) {
		t.Errorf("mean-of-means contribution %+v", c)
	}
	// A single row has ρ = 1/2.
	one, _ := bicluster.NewMatrix(1, 2, []float64{4, 0})
	if _, c, _ = bicluster.Round(one, bicluster.PartyState{}, []int{0, 1}, bicluster.Exact); !slices.Equal(c.Num, []float64{2, 0}) {
		t.Errorf("one row: %+v", c)
	}
	if _, _, err := bicluster.Round(m, bicluster.PartyState{}, []int{0, 1}, bicluster.Exact); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("short column order: %v", err)
	}
	if _, _, err := bicluster.Round(m, bicluster.PartyState{}, []int{0, 1, 2}, "median"); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("bad mode: %v", err)
	}
}

// TestUpdateColumns: columns sorted by ΣNum/ΣDen, ties keep the previous
// order, weightless columns go last in the previous order.
func TestUpdateColumns(t *testing.T) {
	t.Parallel()
	sum := bicluster.Contribution{
		Num: []float64{1, 0.5, 0, 2, 0},
		Den: []float64{2, 1, 0, 4, 0}, // barycenters ½, ½, none, ½, none
	}
	next, changed, err := bicluster.UpdateColumns(sum, []int{4, 3, 2, 1, 0})
	if err != nil || !changed || !slices.Equal(next, []int{3, 1, 0, 4, 2}) {
		t.Errorf("got %v %v %v, want [3 1 0 4 2] changed", next, changed, err)
	}
	sum.Num[0] = 0.25 // column 0 now first
	next, changed, err = bicluster.UpdateColumns(sum, []int{0, 3, 1, 4, 2})
	if err != nil || changed || !slices.Equal(next, []int{0, 3, 1, 4, 2}) {
		t.Errorf("unchanged order: %v %v %v", next, changed, err)
	}
	if !bicluster.Done(false, 1, 5) || bicluster.Done(true, 4, 5) || !bicluster.Done(true, 5, 5) {
		t.Error("Done")
	}
	if _, _, err := bicluster.UpdateColumns(sum, []int{0, 1}); !errors.Is(err, bicluster.ErrColumns) {
		t.Errorf("short order: %v", err)
	}
	sum.Num[1] = math.NaN()
	if _, _, err := bicluster.UpdateColumns(sum, []int{0, 1, 2, 3, 4}); !errors.Is(err, bicluster.ErrValue) {
		t.Errorf("NaN aggregate: %v", err)
	}
	if _, err := bicluster.Aggregate(bicluster.Contribution{Num: []float64{1}, Den: []float64{1}}, sum); !errors.Is(err, bicluster.ErrColumns) {
		t.Errorf("aggregate of different widths: %v", err)
	}
	if _, err := bicluster.ContributionFromVector([]float64{1, 2, 3}, 2); !errors.Is(err, bicluster.ErrParams) {
		t.Errorf("odd vector: %v", err)
	}
}

// TestAggregateOrder: the fold gives the same sum in any order (up to
// float rounding, which the fixed-point secure aggregation removes).
func TestAggregateOrder(t *testing.T) {
	t.Parallel()
	a := bicluster.Contribution{Num: []float64{1, 2}, Den: []float64{3, 4}}
	b := bicluster.Contribution{Num: []float64{0.5, 0}, Den: []float64{1, 1}}
	c := bicluster.Contribution{Num: []float64{2, 2}, Den: []float64{0, 5}}
	ab, _ := bicluster.Aggregate(a, b)
	abc, _ := bicluster.Aggregate(ab, c)
	cb, _ := bicluster.Aggregate(c, b)
	cba, _ := bicluster.Aggregate(cb, a)
	if !reflect.DeepEqual(abc, cba) || !slices.Equal(abc.Num, []float64{3.5, 4}) || !slices.Equal(abc.Den, []float64{4, 10}) {
		t.Errorf("%+v vs %+v", abc, cba)
	}
	if a.Num[0] != 1 {
		t.Error("Aggregate changed its input")
	}
}

// TestMerge: locals of different parties with overlapping columns and
// close representatives merge transitively; others stay apart; globals
// below the minimum of rows are dropped.
func TestMerge(t *testing.T) {
	t.Parallel()
	rep := func(v ...float64) []float64 { return v }
	locals := []bicluster.Local{
		{Party: 0, Rows: []int{0, 1}, Cols: []int{0, 1}, Count: 2, Rep: rep(1, 1, 0, 0)},
		{Party: 0, Rows: []int{5, 6, 7}, Cols: []int{2, 3}, Count: 3, Rep: rep(0, 0, 5, 5)},
		{Party: 1, Rows: []int{3}, Cols: []int{0, 1, 2}, Count: 1, Rep: rep(0.9, 1, 0.8, 0)}, // like local 0
		{Party: 2, Rows: []int{4, 9}, Cols: []int{0, 1}, Count: 2, Rep: rep(1, 0.95, 0, 0)},  // like local 2
		{Party: 2, Rows: []int{1}, Cols: []int{2, 3}, Count: 1, Rep: rep(0, 0, 1, 1)},        // columns of 1, values far
		{Party: 1, Rows: []int{8}, Cols: []int{1, 2}, Count: 1, Rep: rep(0, 0, 5, 5)},        // columns overlap too little with 1
	}
	gs, err := bicluster.Merge(locals, bicluster.PlainSimilar(locals, 0.6), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []bicluster.Global{
		{Members: []int{0, 2, 3}, Cols: []int{0, 1}, Rows: []bicluster.PartyRow{{0, 0}, {0, 1}, {1, 3}, {2, 4}, {2, 9}}},
		{Members: []int{1}, Cols: []int{2, 3}, Rows: []bicluster.PartyRow{{0, 5}, {0, 6}, {0, 7}}},
	}
	if len(gs) != len(want) {
		t.Fatalf("%d globals %+v, want %d", len(gs), gs, len(want))
	}
	for i := range want {
		if !slices.Equal(gs[i].Members, want[i].Members) || !slices.Equal(gs[i].Cols, want[i].Cols) || !slices.Equal(gs[i].Rows, want[i].Rows) {
			t.Errorf("global %d: %+v, want %+v", i, gs[i], want[i])
		}
	}
	// Size-weighted representative: (2·1 + 1·0.9 + 2·1)/5 for column 0.
	if math.Abs(gs[0].Rep[0]-4.9/5) > 1e-12 {
		t.Errorf("representative %v", gs[0].Rep)
	}
	boom := errors.New("boom")
	if _, err := bicluster.Merge(locals, func(a, b int) (bool, error) { return false, boom }, 1); !errors.Is(err, boom) {
		t.Errorf("similar's error: %v", err)
	}
}

// TestFitRows: a party's rows that fit a global bicluster's model on its
// columns, by hand. μ = mean of the representative over columns 0 and 1
// = 1; row 0 (1, 1, 0) fits (divergence 0), row 1 (1, 0, 1) has mean
// divergence ½ (not below δ = 0.5), row 2 (0.9, 1.1, 5) fits
// (0.9·ln 0.9 − 0.9 + 1 and 1.1·ln 1.1 − 1.1 + 1, mean ≈ 0.005).
func TestFitRows(t *testing.T) {
	t.Parallel()
	m, err := bicluster.NewMatrix(3, 3, []float64{1, 1, 0, 1, 0, 1, 0.9, 1.1, 5})
	if err != nil {
		t.Fatal(err)
	}
	g := bicluster.Global{Cols: []int{0, 1}, Rep: []float64{1.2, 0.8, 7}}
	rows, err := bicluster.FitRows(m, g, bicluster.DefaultParams())
	if err != nil || !slices.Equal(rows, []int{0, 2}) {
		t.Errorf("rows %v, %v, want [0 2]", rows, err)
	}
	p := bicluster.DefaultParams()
	p.Delta = 0.51
	if rows, _ := bicluster.FitRows(m, g, p); !slices.Equal(rows, []int{0, 1, 2}) {
		t.Errorf("δ = 0.51: rows %v, want all", rows)
	}
	g.Cols = []int{0, 5}
	if _, err := bicluster.FitRows(m, g, p); !errors.Is(err, bicluster.ErrColumns) {
		t.Errorf("column outside: %v", err)
	}
}

// TestStateEncoding: a party's state and contribution survive the msgpack
// encoding the job's session and messages use.
func TestStateEncoding(t *testing.T) {
	t.Parallel()
	st := bicluster.PartyState{RowOrder: []int{2, 0, 1}}
	c := bicluster.Contribution{Num: []float64{0.5, -1e-300, 3}, Den: []float64{1, 0, 2.25}}
	for _, v := range []any{&st, &c} {
		b, err := wire.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := wire.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Errorf("%T: %+v after the round trip, want %+v", v, back, v)
		}
	}
}

// TestPhoenixFixedPoint: contributions rounded to the fixed point that
// secure aggregation sums (2^-16, the FracBits secureagg's tests and
// benchmarks use) give the same global biclusters as float sums on the
// paper's data, so the distributed job can reproduce the in-clear figures.
func TestPhoenixFixedPoint(t *testing.T) {
	t.Parallel()
	for n := range 4 {
		m, _, err := synth.Paper(0.1).Generate(seedN(n))
		if err != nil {
			t.Fatal(err)
		}
		a, err := phoenixInClear(m, 4, seedN(n), bicluster.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		b, err := phoenixFixed(m, 4, seedN(n), bicluster.DefaultParams(), 16)
		if err != nil {
			t.Fatal(err)
		}
		if s := score.Consensus(a, b); s != 1 {
			t.Errorf("seed %d: consensus %v between float and fixed-point sums, want 1", n, s)
		}
	}
}
