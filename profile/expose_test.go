package profile

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// Hand-computed from the thesis's definitions on Example 19's profile
// (Xu, thesis, chapter 5, §5.2.2 and §5.2.3), logs base 10.
func TestExposeExample19(t *testing.T) {
	root := example19(t)
	// H(U) over the leaves personalized/search 0.3, AI 0.2, soccer 0.2,
	// sports' others 0.15, sex 0.15 (Figure 34): 0.684 in the thesis.
	hU := -(0.3*math.Log10(0.3) + 2*0.2*math.Log10(0.2) + 2*0.15*math.Log10(0.15))
	for _, tc := range []struct {
		minDetail float64
		terms     []string // exposed, pre-order
		leaves    []float64
		hExp      float64
	}{
		{0, []string{"research", "personalized/search", "AI", "sports", "soccer", "sex"},
			[]float64{0.3, 0.2, 0.2, 0.15, 0.15}, hU},
		// sex hidden: its 0.15 becomes the root's others, so the leaves'
		// distribution, and the entropy, are unchanged.
		{0.2, []string{"research", "personalized/search", "AI", "sports", "soccer"},
			[]float64{0.3, 0.2, 0.2, 0.15, 0.15}, hU},
		// Figure 35: personalized/search 0.3, research's others 0.2,
		// sports 0.35, the root's others 0.15; the thesis's 0.580.
		{0.3, []string{"research", "personalized/search", "sports"},
			[]float64{0.3, 0.2, 0.35, 0.15},
			-(0.3*math.Log10(0.3) + 0.2*math.Log10(0.2) + 0.35*math.Log10(0.35) + 0.15*math.Log10(0.15))},
		// research alone, half of |D|, beside the root's others.
		{0.4, []string{"research"}, []float64{0.5, 0.5}, math.Log10(2)},
		// Nothing reaches 0.6: the root is U[exp]'s one leaf.
		{0.6, nil, []float64{1}, 0},
	} {
		e, err := Expose(root, tc.minDetail)
		if err != nil {
			t.Fatal(err)
		}
		var terms []string
		for _, w := range e.Terms {
			terms = append(terms, w.Term)
		}
		if strings.Join(terms, " ") != strings.Join(tc.terms, " ") {
			t.Errorf("minDetail %v: terms %v, want %v", tc.minDetail, terms, tc.terms)
		}
		var ps []float64
		for _, l := range e.Leaves {
			ps = append(ps, l.P)
		}
		if !near(ps, tc.leaves) {
			t.Errorf("minDetail %v: leaves %v, want %v", tc.minDetail, ps, tc.leaves)
		}
		if !near([]float64{e.H, e.HExp, e.ExpRatio}, []float64{hU, tc.hExp, tc.hExp / hU}) {
			t.Errorf("minDetail %v: H %v, H(U[exp]) %v, expRatio %v; want %v, %v, %v",
				tc.minDetail, e.H, e.HExp, e.ExpRatio, hU, tc.hExp, tc.hExp/hU)
		}
	}
}

// The thesis's printed figures at minDetail 0.3: H(U) = 0.684,
// H(U[exp]) = 0.580 and the list ⟨research, 0.301⟩, ⟨sports, 0.456⟩,
// ⟨personalized/search, 0.523⟩. Its expRatio = 69% is an erratum:
// 0.580/0.684 is 84.8%.
func TestExposeThesisFigures(t *testing.T) {
	e, err := Expose(example19(t), 0.3)
	if err != nil {
		t.Fatal(err)
	}
	round := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	if round(e.H) != 0.684 || round(e.HExp) != 0.580 || round(e.ExpRatio) != 0.848 {
		t.Errorf("H %v, H(U[exp]) %v, expRatio %v", e.H, e.HExp, e.ExpRatio)
	}
	want := map[string]float64{"research": 0.301, "sports": 0.456, "personalized/search": 0.523}
	for _, w := range e.Terms {
		if round(w.Weight) != want[w.Term] {
			t.Errorf("w(%s) = %v, want %v", w.Term, w.Weight, want[w.Term])
		}
	}
}

// The leakage profile: nothing Expose returns names a hidden interest, and
// the list sent holds exposed labels and weights only.
func TestExposeHidesLabels(t *testing.T) {
	e, err := Expose(example19(t), 0.3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, hidden := range []string{"AI", "soccer", "sex"} {
		if strings.Contains(string(b), `"`+hidden+`"`) {
			t.Errorf("the exposure names hidden %q: %s", hidden, b)
		}
	}
	sent, err := json.Marshal(e.Terms)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"term":"research","weight":`; !strings.HasPrefix(string(sent), want) {
		t.Errorf("sent list %s", sent)
	}
}

// expRatio never grows with minDetail: each U[exp] coarsens the last.
func TestExpRatioMonotone(t *testing.T) {
	p := DefaultGen()
	p.Docs = 500
	docs, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	root, err := Build(docs, Params{MinSup: 5, Delta: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	last := math.Inf(1)
	for i := 0; i <= 100; i++ {
		e, err := Expose(root, float64(i)/100)
		if err != nil {
			t.Fatal(err)
		}
		if e.ExpRatio > last+1e-12 || e.ExpRatio < 0 || e.ExpRatio > 1+1e-12 {
			t.Fatalf("minDetail %v: expRatio %v after %v", float64(i)/100, e.ExpRatio, last)
		}
		last = e.ExpRatio
	}
	if last != 0 {
		t.Errorf("expRatio at minDetail 1 = %v, want 0", last)
	}
}

func TestExposeRejects(t *testing.T) {
	root := example19(t)
	for _, x := range []float64{-0.1, 1.1, math.NaN()} {
		if _, err := Expose(root, x); !errors.Is(err, ErrParams) || !strings.Contains(err.Error(), "min-detail") {
			t.Errorf("Expose(%v) = %v", x, err)
		}
	}
	if _, err := Expose(&Node{}, 0); !errors.Is(err, ErrProfile) {
		t.Errorf("Expose of an empty root = %v", err)
	}
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}
