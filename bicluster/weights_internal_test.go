package bicluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// TestLayerWeightsAreRounds: the column weights the layer sums where the
// table lives (a CSV streamed, SQLite's query) pass the check against the
// loaded matrix on values no float sum adds exactly; in Exact mode every
// iteration's Num then stays within the bound numBits draws from them (a
// party's Num_j ≤ its Den_j), and MeanOfMeans flags the columns Round
// flags. A table changed between the reads (another row count, a column's
// sum moved) is refused, naming the column.
func TestLayerWeightsAreRounds(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 35))
	const rows, cols = 300, 6
	id := &table.Column{Name: "id", Kind: table.ID}
	tb := &table.Table{Name: "m", Columns: []*table.Column{id}}
	for j := range cols {
		tb.Columns = append(tb.Columns, &table.Column{Name: fmt.Sprintf("c%d", j), Kind: table.Numeric})
	}
	for r := range rows {
		id.Str = append(id.Str, fmt.Sprint(r))
		for j := range cols {
			x := float64(rng.IntN(2000)-700) / 10 // 0.1 is not a double
			if j == cols-1 {
				x = -x * x // no weight at all
			}
			c := tb.Columns[j+1]
			c.Num, c.Str = append(c.Num, x), append(c.Str, fmt.Sprint(x))
		}
	}
	m, err := FromTable(tb)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, src := range []table.Source{{Path: filepath.Join(dir, "m.csv")}, {SQLite: filepath.Join(dir, "m.db"), Table: "m"}} {
		if err := table.Write(ctx, src, tb); err != nil {
			t.Fatal(err)
		}
		agg, err := table.NewAggregator(src, nil, table.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer agg.Close()
		den, n, err := agg.ColumnSums(ctx, m.ColNames, &positive)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkWeights(m, den, n); err != nil {
			t.Fatalf("%v: %v", src, err)
		}
		if den[cols-1] != 0 || den[0] <= 0 {
			t.Fatalf("%v: weights %v", src, den)
		}
		bits := numBits(den, 16, 62)
		var st PartyState
		for it := range 5 {
			order := rng.Perm(cols)
			next, c, err := Round(m, st, order, Exact)
			if err != nil {
				t.Fatal(err)
			}
			st = next
			for j, num := range c.Num {
				if num > den[j]*(1+0x1p-40) || math.Abs(math.Round(math.Ldexp(num, 16))) >= math.Ldexp(1, bits) {
					t.Fatalf("%v iteration %d column %d: Num %v beyond Den %v or 2^%d", src, it, j, num, den[j], bits)
				}
			}
			_, mm, err := Round(m, st, order, MeanOfMeans)
			if err != nil {
				t.Fatal(err)
			}
			if got := withWeights(mm, den, MeanOfMeans); fmt.Sprint(got.Den) != fmt.Sprint(mm.Den) {
				t.Fatalf("%v: MeanOfMeans Den %v from the layer, %v from Round", src, got.Den, mm.Den)
			}
		}
		moved := append([]float64(nil), den...)
		moved[2] += 0.5
		if err := checkWeights(m, moved, n); !errors.Is(err, ErrValue) || err.Error() != "bicluster: bad value: column c2: its sum of weights differs from the loaded table's (changed between the two reads?)" {
			t.Fatalf("a moved column: %v", err)
		}
		if err := checkWeights(m, den, n+1); !errors.Is(err, ErrValue) {
			t.Fatalf("another row count: %v", err)
		}
	}
}
