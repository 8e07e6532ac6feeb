package tree

import (
	"math/rand/v2"
	"testing"
)

// TestGrowFeatures: with Features 1 the root's attribute is drawn (a
// perfect attribute and a weaker one each win for some seed, where the
// full search always takes the perfect one); an attribute without gain
// is passed over for the next one rather than making a leaf; one seed
// grows one tree.
func TestGrowFeatures(t *testing.T) {
	d := &Data{
		Labels: []string{"no", "yes"},
		Class:  []int32{0, 0, 0, 0, 1, 1, 1, 1},
		Attrs: []*Attr{
			{Name: "flat", Values: []string{"v"}, Code: make([]int32, 8)},
			{Name: "perfect", Numeric: true, Num: []float64{1, 2, 3, 4, 5, 6, 7, 8}},
			{Name: "weak", Numeric: true, Num: []float64{1, 2, 3, 6, 4, 7, 8, 9}},
		},
	}
	p := GrowParams{MaxDepth: 10, MinSplit: 2}
	if c := Grow(d, p, "", "").Root.Split.Column; c != "perfect" {
		t.Fatalf("the full search splits the root on %s", c)
	}
	roots := map[string]int{}
	for seed := range uint64(40) {
		p.Features, p.Rand = 1, rand.New(rand.NewPCG(seed, 0))
		tr := Grow(d, p, "", "")
		if tr.Root.IsLeaf() {
			t.Fatalf("seed %d: the root is a leaf", seed)
		}
		roots[tr.Root.Split.Column]++
		p.Rand = rand.New(rand.NewPCG(seed, 0))
		if diff := Diff(tr, Grow(d, p, "", "")); diff != "" {
			t.Fatalf("seed %d grows two trees: %s", seed, diff)
		}
		if Correct(tr, d) != d.Rows() {
			t.Errorf("seed %d: an unpruned tree misclassifies its own rows", seed)
		}
	}
	if roots["flat"] != 0 || roots["perfect"] == 0 || roots["weak"] == 0 {
		t.Errorf("root attributes over 40 seeds: %v", roots)
	}
}
