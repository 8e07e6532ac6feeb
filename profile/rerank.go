package profile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Ranked is one result after re-ranking: the engine's rank, UPScore,
// UPRank and PPRank.
type Ranked struct {
	Result
	Score  float64 `json:"up_score"`
	UPRank int     `json:"up_rank"`
	PPRank float64 `json:"pp_rank"`
}

// Rerank is the search wrapper's step (Xu, thesis, chapter 5, §5.2.3): it
// scores each result by UPScore = Σ w_t·tf(t), ranks the results by
// descending UPScore (UPRank, ties by the engine's rank) and returns them
// by ascending PPRank = α·UPRank + (1−α)·rank (ties by the engine's rank).
// It sees only the exposed list, never the profile.
func Rerank(terms []Weighted, results []Result, alpha float64) ([]Ranked, error) {
	if !(alpha >= 0 && alpha <= 1) {
		return nil, fmt.Errorf("%w: alpha must be in [0, 1]", ErrParams)
	}
	// w_t of each term; a merged label's weight counts for each part.
	w := map[string]float64{}
	for _, t := range terms {
		if math.IsNaN(t.Weight) || math.IsInf(t.Weight, 0) {
			return nil, fmt.Errorf("%w: the weight of an exposed term is not finite", ErrParams)
		}
		for part := range strings.SplitSeq(t.Term, "/") {
			w[part] += t.Weight
		}
	}
	out := make([]Ranked, len(results))
	for i, r := range results {
		out[i].Result = r
		for _, t := range r.Terms {
			out[i].Score += w[t]
		}
	}
	slices.SortStableFunc(out, func(a, b Ranked) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Rank, b.Rank)
	})
	for i := range out {
		out[i].UPRank = i + 1
		out[i].PPRank = alpha*float64(out[i].UPRank) + (1-alpha)*float64(out[i].Rank)
	}
	slices.SortStableFunc(out, func(a, b Ranked) int {
		if c := cmp.Compare(a.PPRank, b.PPRank); c != 0 {
			return c
		}
		return cmp.Compare(a.Rank, b.Rank)
	})
	return out, nil
}
