// Package synth generates the seeded synthetic tables of package
// transform's tests: numeric columns with many repeated values, ties and
// long single-class stretches (the monochromatic pieces the transform
// permutes), a categorical column, and a class that depends on them with
// noise, so that trees grow deep and meet equal-gain candidates.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/cohortdm/cohort/table"
)

// Table returns n rows named name, drawn from seed: integer columns
// "age" (18..90), "level" (0..9, few values), "amount" (skewed, wide),
// a real column "score", the categorical "region" and the class "label"
// (three classes).
func Table(name string, seed uint64, n int) *table.Table {
	rng := rand.New(rand.NewPCG(seed, 0x7f4a7c15))
	age := make([]float64, n)
	level := make([]float64, n)
	amount := make([]float64, n)
	score := make([]float64, n)
	region := make([]string, n)
	label := make([]string, n)
	regions := []string{"north", "south", "east", "west"}
	for i := range n {
		age[i] = float64(18 + rng.IntN(73))
		level[i] = float64(rng.IntN(10))
		amount[i] = math.Round(math.Exp(rng.NormFloat64()*1.5 + 6))
		score[i] = math.Round(rng.NormFloat64()*1000) / 100
		region[i] = regions[rng.IntN(len(regions))]
		var c int
		switch {
		case age[i] < 30:
			c = 0
		case age[i] > 70:
			c = 2
		case level[i] >= 7 || amount[i] > 2000:
			c = 1
		case score[i] > 5 && region[i] != "west":
			c = 2
		default:
			c = int(level[i]) % 3
		}
		if rng.Float64() < 0.15 {
			c = rng.IntN(3)
		}
		label[i] = fmt.Sprintf("c%d", c)
	}
	return &table.Table{Name: name, Columns: []*table.Column{
		numeric("age", age), numeric("level", level), numeric("amount", amount), numeric("score", score),
		{Name: "region", Kind: table.Categorical, Str: region},
		{Name: "label", Kind: table.Class, Str: label},
	}}
}

func numeric(name string, x []float64) *table.Column {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return &table.Column{Name: name, Kind: table.Numeric, Num: x, Str: s}
}
