package profile

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Hand-computed from §5.2.3 (Xu, thesis, chapter 5) with Example 19's list
// at minDetail 0.3.
func TestRerank(t *testing.T) {
	wr, ws, wp := math.Log10(10.0/5), math.Log10(10.0/3.5), math.Log10(10.0/3)
	terms := []Weighted{{"research", wr}, {"sports", ws}, {"personalized/search", wp}}
	results := []Result{
		{1, []string{"sports", "news", "sports"}},         // 2·w(sports)
		{2, []string{"personalized", "search", "engine"}}, // tf(personalized/search) = 2
		{3, []string{"weather"}},                          // 0
		{4, []string{"research", "search"}},               // w(research) + w(personalized/search)
	}
	score := []float64{2 * ws, 2 * wp, 0, wr + wp} // 0.912, 1.046, 0, 0.824
	upRank := []int{2, 1, 4, 3}
	for _, tc := range []struct {
		alpha float64
		order []int // engine ranks by ascending PPRank
	}{
		// PPRank: 0.6·2+0.4·1 = 1.6, 0.6+0.8 = 1.4, 2.4+1.2 = 3.6, 1.8+1.6 = 3.4.
		{0.6, []int{2, 1, 4, 3}},
		{0, []int{1, 2, 3, 4}},
		{1, []int{2, 1, 4, 3}},
		// PPRank 1.5, 1.5, 3.5, 3.5: ties go to the engine's order.
		{0.5, []int{1, 2, 3, 4}},
	} {
		out, err := Rerank(terms, results, tc.alpha)
		if err != nil {
			t.Fatal(err)
		}
		var order []int
		for _, r := range out {
			order = append(order, r.Rank)
			i := r.Rank - 1
			if math.Abs(r.Score-score[i]) > 1e-12 || r.UPRank != upRank[i] {
				t.Errorf("α %v, result %d: UPScore %v UPRank %d, want %v %d", tc.alpha, r.Rank, r.Score, r.UPRank, score[i], upRank[i])
			}
			if want := tc.alpha*float64(upRank[i]) + (1-tc.alpha)*float64(r.Rank); math.Abs(r.PPRank-want) > 1e-12 {
				t.Errorf("α %v, result %d: PPRank %v, want %v", tc.alpha, r.Rank, r.PPRank, want)
			}
		}
		if !equalInts(order, tc.order) {
			t.Errorf("α %v: order %v, want %v", tc.alpha, order, tc.order)
		}
	}
}

// Equal UPScores rank by the engine's rank, so UPRank is a permutation.
func TestRerankTies(t *testing.T) {
	out, err := Rerank([]Weighted{{"a", 1}}, []Result{{7, nil}, {3, []string{"b"}}, {5, []string{"a"}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range out {
		got = append(got, r.Rank, r.UPRank)
	}
	if !equalInts(got, []int{5, 1, 3, 2, 7, 3}) {
		t.Errorf("(rank, UPRank) pairs %v", got)
	}
}

func TestRerankRejects(t *testing.T) {
	for _, a := range []float64{-0.5, 2, math.NaN()} {
		if _, err := Rerank(nil, []Result{{1, nil}}, a); !errors.Is(err, ErrParams) || !strings.Contains(err.Error(), "alpha") {
			t.Errorf("alpha %v: %v", a, err)
		}
	}
	if _, err := Rerank([]Weighted{{"a", math.Inf(1)}}, []Result{{1, nil}}, 0.5); !errors.Is(err, ErrParams) {
		t.Errorf("infinite weight: %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
