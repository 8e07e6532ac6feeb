package tree

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// weather is Quinlan's 14 rows of weather, every attribute nominal
// ("Induction of Decision Trees", Machine Learning 1, 1986, Table 1; Weka's
// weather.nominal; play is the class).
func weather() *Data {
	rows := [][5]string{
		{"sunny", "hot", "high", "false", "no"},
		{"sunny", "hot", "high", "true", "no"},
		{"overcast", "hot", "high", "false", "yes"},
		{"rainy", "mild", "high", "false", "yes"},
		{"rainy", "cool", "normal", "false", "yes"},
		{"rainy", "cool", "normal", "true", "no"},
		{"overcast", "cool", "normal", "true", "yes"},
		{"sunny", "mild", "high", "false", "no"},
		{"sunny", "cool", "normal", "false", "yes"},
		{"rainy", "mild", "normal", "false", "yes"},
		{"sunny", "mild", "normal", "true", "yes"},
		{"overcast", "mild", "high", "true", "yes"},
		{"overcast", "hot", "normal", "false", "yes"},
		{"rainy", "mild", "high", "true", "no"},
	}
	return nominalData([]string{"outlook", "temperature", "humidity", "windy"}, rows)
}

// nominalData is a table of nominal attributes, each row its attributes'
// values and then its class.
func nominalData[R ~[5]string | ~[3]string](names []string, rows []R) *Data {
	d := &Data{}
	col := func(j int) []string {
		var c []string
		for _, r := range rows {
			c = append(c, r[j])
		}
		return c
	}
	for j, name := range names {
		a := &Attr{Name: name}
		a.Values, a.Code = Encode(col(j))
		d.Attrs = append(d.Attrs, a)
	}
	d.Labels, d.Class = Encode(col(len(names)))
	return d
}

// TestGainRatioByHand: the weather data's gains and gain ratios at the
// root, worked by hand (labels no, yes; 5 and 9 rows; H = 0.9403):
// outlook's branches sunny ⟨3,2⟩, overcast ⟨0,4⟩, rainy ⟨2,3⟩ give gain
// 0.9403 − (5·0.9710 + 0 + 5·0.9710)/14 = 0.2467 and split information
// H(5/14, 4/14, 5/14) = 1.5774, a ratio of 0.1564; humidity (⟨4,3⟩,
// ⟨1,6⟩) 0.1518 and 1, ratio 0.1518; windy (⟨2,6⟩, ⟨3,3⟩) 0.0481 over
// 0.9852, 0.0488; temperature (⟨2,2⟩, ⟨2,4⟩, ⟨1,3⟩) 0.0292 over 1.5567,
// 0.0188. Quinlan (1986) gives the gains as 0.246, 0.151, 0.048 and 0.029
// and outlook's gain ratio as 0.156.
func TestGainRatioByHand(t *testing.T) {
	total := []uint64{5, 9}
	cases := []struct {
		name        string
		per         []uint64
		gain, ratio float64
	}{
		{"outlook", []uint64{3, 2, 0, 4, 2, 3}, 0.2467, 0.1564},
		{"humidity", []uint64{4, 3, 1, 6}, 0.1518, 0.1518},
		{"windy", []uint64{2, 6, 3, 3}, 0.0481, 0.0488},
		{"temperature", []uint64{2, 2, 2, 4, 1, 3}, 0.0292, 0.0188},
	}
	for _, c := range cases {
		if g := GainMultiway(total, c.per, 2); math.Abs(g-c.gain) > 1e-4 {
			t.Errorf("%s: gain %.5f, want %.4f", c.name, g, c.gain)
		}
		if r := GainRatio(total, c.per, 2); math.Abs(r-c.ratio) > 1e-4 {
			t.Errorf("%s: gain ratio %.5f, want %.4f", c.name, r, c.ratio)
		}
	}
	if r := GainRatio(total, []uint64{5, 9}, 2); r != 0 {
		t.Errorf("one branch: gain ratio %v", r)
	}
}

// TestGrowMultiwayWeather: the tree Quinlan (1986) derives from the
// weather data, which Weka's J48 grows on weather.nominal: outlook at the
// root with
// three branches; under sunny humidity (high ⟨3,0⟩, normal ⟨0,2⟩: gain
// 0.971, ratio 1, against temperature's 0.571 and 0.375 and windy's 0.020);
// overcast a leaf ⟨0,4⟩; under rainy windy (false ⟨0,3⟩, true ⟨2,0⟩).
// C4.5's pessimistic pruning keeps all of it; the binary grower's tree
// differs (its root is outlook == overcast).
func TestGrowMultiwayWeather(t *testing.T) {
	d := weather()
	tr := Grow(d, GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true, Multiway: true}, "p", "w")
	want := `{"split":{"party":"p","table":"w","column":"outlook","op":"in"},"counts":{"no":5,"yes":9},"branches":[` +
		`{"values":["overcast"],"node":{"leaf":"yes","counts":{"no":0,"yes":4}}},` +
		`{"values":["rainy"],"node":{"split":{"party":"p","table":"w","column":"windy","op":"in"},"counts":{"no":2,"yes":3},"branches":[` +
		`{"values":["false"],"node":{"leaf":"yes","counts":{"no":0,"yes":3}}},{"values":["true"],"node":{"leaf":"no","counts":{"no":2,"yes":0}}}]}},` +
		`{"values":["sunny"],"node":{"split":{"party":"p","table":"w","column":"humidity","op":"in"},"counts":{"no":3,"yes":2},"branches":[` +
		`{"values":["high"],"node":{"leaf":"no","counts":{"no":3,"yes":0}}},{"values":["normal"],"node":{"leaf":"yes","counts":{"no":0,"yes":2}}}]}}]}`
	got, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("tree\n%s\nwant\n%s", got, want)
	}
	if n, l := tr.Size(); n != 8 || l != 5 {
		t.Errorf("size %d nodes, %d leaves", n, l)
	}
	if c := Correct(tr, d); c != 14 {
		t.Errorf("classifies %d of its 14 rows", c)
	}
	bin := Grow(d, GrowParams{MaxDepth: 10, MinSplit: 2}, "p", "w")
	if bin.Multiway() || bin.Root.Split.Column != "outlook" || bin.Root.Split.Op != OpEQ || bin.Root.Split.Cat != "overcast" {
		t.Errorf("the binary grower's root: %s", bin.Root.Split)
	}
}

// TestGrowAverageGain: C4.5 takes the best gain ratio among the splits
// whose gain is at least the average. On 16 rows (8 a, 8 b), "ids" has 8
// pure branches of 2 rows (gain 1, split information 3, ratio 0.333) and
// "skew" two branches, p ⟨8,4⟩ and q ⟨0,4⟩ (gain 1 − 0.75·0.9183 =
// 0.3113, split information H(0.75) = 0.8113, ratio 0.3837): skew's ratio
// is larger but its gain is below the average 0.6556, so the root splits
// on ids into 8 branches. "rare" has one value of 15 rows and one of 1,
// fewer than two branches of 2 rows, and is never taken.
func TestGrowAverageGain(t *testing.T) {
	var recs [][3]string
	for i := range 16 {
		class, skew := "a", "p"
		if i >= 8 {
			class = "b"
		}
		if i >= 12 {
			skew = "q"
		}
		recs = append(recs, [3]string{fmt.Sprint("id", i/2), skew, class})
	}
	d := nominalData([]string{"ids", "skew"}, recs)
	gp := GrowParams{MaxDepth: 10, MinSplit: 2, Multiway: true}
	tr := Grow(d, gp, "", "")
	if tr.Root.IsLeaf() || tr.Root.Split.Column != "ids" || len(tr.Root.Branches) != 8 {
		t.Fatalf("root %+v", tr.Root.Split)
	}
	for _, b := range tr.Root.Branches {
		if !b.Child.IsLeaf() || rows(b.Child.Counts) != 2 || len(b.Values) != 1 {
			t.Errorf("branch %v: %v", b.Values, b.Child.Counts)
		}
	}
	// Without ids, skew is the only admissible split.
	d.Attrs = d.Attrs[1:]
	if tr := Grow(d, gp, "", ""); tr.Root.IsLeaf() || tr.Root.Split.Column != "skew" || len(tr.Root.Branches) != 2 {
		t.Fatalf("without ids the root is %+v", tr.Root.Split)
	}
	// One value of 15 rows and one of 1: not admissible, a leaf.
	codes := make([]int32, 16)
	codes[15] = 1
	d.Attrs = []*Attr{{Name: "rare", Values: []string{"r", "s"}, Code: codes}}
	if tr := Grow(d, gp, "", ""); !tr.Root.IsLeaf() {
		t.Fatalf("a split of 15 and 1 rows was taken")
	}
}

// TestGrowMultiwayNumeric: a numeric attribute still splits at a
// threshold, and each side keeps at least two rows: on x = 1..6 with
// classes a b b b b b the threshold is 2.5 (1.5, a pure split, would leave
// one row; the binary grower takes it).
func TestGrowMultiwayNumeric(t *testing.T) {
	d := &Data{
		Labels: []string{"a", "b"},
		Class:  []int32{0, 1, 1, 1, 1, 1},
		Attrs:  []*Attr{{Name: "x", Numeric: true, Num: []float64{1, 2, 3, 4, 5, 6}}},
	}
	if bin := Grow(d, GrowParams{MaxDepth: 10, MinSplit: 2}, "", ""); bin.Root.Split.Num != 1.5 {
		t.Fatalf("binary root %v", bin.Root.Split)
	}
	tr := Grow(d, GrowParams{MaxDepth: 10, MinSplit: 2, Multiway: true}, "", "")
	if tr.Root.IsLeaf() || tr.Root.Split.Op != OpLE || tr.Root.Split.Num != 2.5 {
		t.Fatalf("root %v", tr.Root.Split)
	}
	if !slices.Equal(tr.Root.Left.Counts, []uint64{1, 1}) || !tr.Root.Right.IsLeaf() {
		t.Errorf("children %v %v", tr.Root.Left.Counts, tr.Root.Right.Counts)
	}
}
