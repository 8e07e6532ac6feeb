package anonymize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// Lodha and Thomas's examples: (Gender, DoB, ZIP) over the U.S. (Example
// 3, ≈ 0.93), (Nationality, DoB, Occupation) over the world (Example 4,
// ≈ 0.025), and the curve's value 1/e at D = n.
func TestMaxUniqueFractionLodhaThomas(t *testing.T) {
	for _, c := range []struct{ D, n, want, tol float64 }{
		{4e9, 3e8, 0.93, 0.005}, {4e8, 6e9, 0.025, 0.001}, {1e6, 1e6, 1 / math.E, 1e-12},
	} {
		if got := MaxUniqueFraction(c.D, c.n); math.Abs(got-c.want) > c.tol {
			t.Errorf("D=%g n=%g: %v, want %v", c.D, c.n, got, c.want)
		}
	}
}

// Their Example 9: S = {1, 12, 4, 7, 3} is made 2-anonymous as {1, 3, 4}
// → 3 and {7, 12} → 7 (cost 3 + 5).
func TestOneDimKLodhaThomas(t *testing.T) {
	vals := []float64{1, 12, 4, 7, 3}
	cl, cost, err := OneDimK(vals, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cost != 8 || len(cl) != 2 || !slices.Equal(cl[0], []int{0, 4, 2}) || !slices.Equal(cl[1], []int{3, 1}) {
		t.Fatalf("clusters %v cost %v", cl, cost)
	}
}

// QITest on a small table: a column with a value per row re-identifies
// every row; a constant column none.
func TestQITest(t *testing.T) {
	tab := mkTable([]string{"id", "sex", "zip"}, "a,M,1", "b,M,1", "c,F,2", "d,F,2", "e,F,3")
	r, err := QITest(tab, []string{"id"}, 5, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Singletons != 5 || r.F1 != 1 || !r.QI {
		t.Errorf("id: %+v", r)
	}
	r, _ = QITest(tab, []string{"sex", "zip"}, 5, 0.5)
	if r.Singletons != 1 || r.D != 6 || r.QI {
		t.Errorf("sex, zip: %+v", r)
	}
	if _, err := QITest(tab, []string{"age"}, 5, 0.2); err == nil {
		t.Error("unknown column tested")
	}
}

// QITests, from counts computed where the table lives (a streamed CSV and
// Parquet file, a grouping SQLite query), reports what QITest reports over
// the loaded table, for every column, pair and all of them.
func TestQITestsWhereTheTableLives(t *testing.T) {
	ctx := context.Background()
	tab := mkTable([]string{"id", "sex", "zip"}, "a,M,1", "b,M,1", "c,F,2", "d,F,2", "e,F,3", "f,M,2")
	dir := t.TempDir()
	sets := [][]string{{"id"}, {"sex"}, {"zip"}, {"sex", "zip"}, {"id", "zip"}, {"id", "sex", "zip"}}
	for _, src := range []table.Source{{Path: filepath.Join(dir, "q.csv")}, {Path: filepath.Join(dir, "q.parquet")}, {SQLite: filepath.Join(dir, "q.db"), Table: "q"}} {
		if err := table.Write(ctx, src, tab); err != nil {
			t.Fatal(err)
		}
		agg, err := table.NewAggregator(src, nil, table.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer agg.Close()
		for _, universe := range []float64{0, 1000} {
			rows, n, got, err := QITests(ctx, agg, sets, universe, 0.3)
			if err != nil {
				t.Fatal(err)
			}
			if want := max(universe, 6); rows != 6 || n != want {
				t.Fatalf("%s: %d rows, universe %v; want 6, %v", src, rows, n, want)
			}
			for i, set := range sets {
				want, err := QITest(tab, set, n, 0.3)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprintf("%+v", got[i]) != fmt.Sprintf("%+v", want) {
					t.Fatalf("%s %v: %+v, want %+v", src, set, got[i], want)
				}
			}
		}
		if _, _, _, err := QITests(ctx, agg, [][]string{{"age"}}, 0, 0.2); !errors.Is(err, ErrRequirement) || !errors.Is(err, table.ErrNoColumn) {
			t.Fatalf("%s: an unknown column: %v", src, err)
		}
	}
}
