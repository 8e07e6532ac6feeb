package pgen

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/tree"
)

// TestGrowRuleByHand: eight rows (a, b, class): (x, 1, yes), (x, 2, yes),
// (x, 3, yes), (x, 8, no), (y, 1, no), (y, 2, no), (y, 7, no), (y, 9,
// no). The empty rule's information is H(3/8) = 0.954 bits; a == x
// covers 3 yes and 1 no (0.811 bits) and leaves 4 no (0), so 4/8 · 0.811 =
// 0.406, tied with a == y and below every split of b (b <= 3.5 or b >
// 3.5: 5/8 · 0.971 = 0.607; b <= 1.5: 0.939). Then among a == x's rows
// b <= 5.5 (halfway between 3 and 8) covers 3 yes and leaves 5 no: 0
// bits. Nothing is left to add.
func TestGrowRuleByHand(t *testing.T) {
	t.Parallel()
	d := &tree.Data{
		Labels: []string{"no", "yes"},
		Class:  []int32{1, 1, 1, 0, 0, 0, 0, 0},
		Attrs: []*tree.Attr{
			{Name: "a", Values: []string{"x", "y"}, Code: []int32{0, 0, 0, 0, 1, 1, 1, 1}},
			{Name: "b", Numeric: true, Num: []float64{1, 2, 3, 8, 1, 2, 7, 9}},
		},
	}
	if got := info([]uint64{1, 3}, []uint64{4, 0}); math.Abs(got-0.4056) > 1e-4 {
		t.Errorf("info of a == x: %.4f, want 0.4056", got)
	}
	want := []Antecedent{{Attr: "a", Op: tree.OpEQ, Cat: "x"}, {Attr: "b", Op: tree.OpLE, Num: 5.5}}
	if got := growRule(d, []int{0, 1, 2, 3, 4, 5, 6, 7}, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("grown %+v, want %+v", got, want)
	}
	// Grown on rows 0 to 3 alone, b <= 5.5 is the one antecedent: a == x
	// covers them all and lowers nothing.
	want = want[1:]
	if got := growRule(d, []int{0, 1, 2, 3}, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("grown on four rows %+v, want %+v", got, want)
	}
}

// TestRuleSplit: the pruning fold holds a third of each class (rounded
// down), the folds are disjoint and cover every row, and the draw
// decides which rows prune.
func TestRuleSplit(t *testing.T) {
	t.Parallel()
	class := make([]int32, 100)
	for i := range 40 {
		class[i] = 1
	}
	var first []int
	for s := range uint64(2) {
		grow, prune := ruleSplit(class, 2, rand.New(rand.NewPCG(s, 0)))
		if n := len(grow) + len(prune); n != 100 || len(slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(grow), prune...))))) != 100 {
			t.Fatalf("seed %d: folds of %d and %d rows do not partition the 100", s, len(grow), len(prune))
		}
		byClass := classCounts(class, prune, 2)
		if !slices.Equal(byClass, []uint64{20, 13}) {
			t.Errorf("seed %d: pruning fold holds %v of each class, want [20 13]", s, byClass)
		}
		if s == 0 {
			first = prune
		} else if slices.Equal(first, prune) {
			t.Error("two seeds drew the same pruning fold")
		}
	}
}

// TestRulePrunes: 300 rows whose class is x > 0.5, a fifth of them
// flipped, with two attributes of noise. Grown on its two folds the rule
// takes x <= 0.506 and then antecedents on the noise that fit the flipped
// rows (here n1 > 0.055, n2 > 0.049); reduced-error pruning on the third
// fold keeps x alone.
func TestRulePrunes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(0, 0))
	d := &tree.Data{Labels: []string{"no", "yes"}, Attrs: []*tree.Attr{
		{Name: "n1", Numeric: true}, {Name: "n2", Numeric: true}, {Name: "x", Numeric: true}}}
	for range 300 {
		x := rng.Float64()
		d.Attrs[0].Num = append(d.Attrs[0].Num, rng.Float64())
		d.Attrs[1].Num = append(d.Attrs[1].Num, rng.Float64())
		d.Attrs[2].Num = append(d.Attrs[2].Num, x)
		c := int32(0)
		if x > 0.5 {
			c = 1
		}
		if rng.IntN(5) == 0 {
			c = 1 - c
		}
		d.Class = append(d.Class, c)
	}
	grow, _ := ruleSplit(d.Class, 2, rand.New(rand.NewPCG(9, 0)))
	grown := growRule(d, grow, 2)
	r := LearnRule(d, rand.New(rand.NewPCG(9, 0)))
	t.Logf("grown %+v, pruned %+v", grown, r.Antecedents)
	if len(grown) < 2 || grown[0].Attr != "x" {
		t.Fatalf("grown %+v: want x first, then antecedents on the noise", grown)
	}
	if !reflect.DeepEqual(r.Antecedents, grown[:1]) {
		t.Errorf("pruned to %+v, want %+v", r.Antecedents, grown[:1])
	}
	if got := sum(r.Covered) + sum(r.Default); got != 300 {
		t.Errorf("covered and default count %d rows, want all 300", got)
	}
}

// TestAntecedentJSON: a numeric antecedent writes its threshold, 0 too,
// and no cat; a categorical one its value and no num; both read back.
func TestAntecedentJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a    Antecedent
		want string
	}{
		{Antecedent{Attr: "x", Op: OpGT, Num: 0}, `{"attr":"x","op":">","num":0}`},
		{Antecedent{Attr: "c", Op: tree.OpEQ, Cat: "red"}, `{"attr":"c","op":"==","cat":"red"}`},
	} {
		b, err := json.Marshal(c.a)
		var got, want map[string]any
		if err := errors.Join(err, json.Unmarshal(b, &got), json.Unmarshal([]byte(c.want), &want)); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %s (%v), want %s", c.a, b, err, c.want)
		}
		var back Antecedent
		if err := json.Unmarshal(b, &back); err != nil || back != c.a {
			t.Errorf("%s read back as %+v (%v)", b, back, err)
		}
	}
}
