package anonymize

import (
	"fmt"
	"math"
	"strings"
)

// ErrDegree marks a degree of anonymisation that no generalisation
// reaches (an attribute that weighs in the degree cannot be generalised).
var ErrDegree = fmt.Errorf("%w: degree of anonymisation out of reach", ErrRequirement)

// degreeTol absorbs rounding in sums of weights: a degree within it of the
// target reaches it.
const degreeTol = 1e-9

// TrustDegree is our projection from a requester's trust t ∈ [0, 1] to
// the degree of anonymisation: (1 − t)². Sun's §4.5 adopts "the quadratic
// projection from trust to degree of anonymisation" without writing it
// down; this one is 1 at no trust, 0 at full trust and falls fastest where
// trust is low.
func TrustDegree(t float64) float64 { return (1 - t) * (1 - t) }

// Reach is the decomposition made to reach the degree asked for. Eq. 4.11
// shares the target in proportion to the weights, but Def. 4.5 weighs each
// attribute's degree by its weight again, so before rounding the table
// gets only target·Σw²/(Σw)², and Step 2's rounding moves it either way.
// Reach keeps Eq. 4.11's direction and raises the decomposed target s from 0:
// at s attribute i takes the most steps whose Def. 4.4 degree is at most
// w_i/Σw · s, and the least s whose levels reach target wins. Every
// attribute's level grows with s, so the result grows with target (more
// trust, never more generalisation) and is the least generalisation in the
// priorities' proportions. It returns the levels and s, or ErrDegree with
// the largest degree reachable when an attribute that weighs cannot be
// generalised (h_i < 2).
func Reach(target float64, w []float64, h []int, beta float64) ([]int, float64, error) {
	if target < 0 || target > 1 || math.IsNaN(target) {
		return nil, 0, fmt.Errorf("%w: degree %v is not in [0, 1]", ErrRequirement, target)
	}
	sum := 0.0
	for _, x := range w {
		if x < 0 {
			return nil, 0, fmt.Errorf("%w: negative weight %v", ErrRequirement, x)
		}
		sum += x
	}
	if sum <= 0 {
		return nil, 0, fmt.Errorf("%w: the weights sum to 0 (use DegreeWeights)", ErrRequirement)
	}
	levels := make([]int, len(w))
	deg := make([]float64, len(w))
	// next is the decomposed target at which attribute i takes its next step
	next := func(i int) float64 {
		if w[i] <= 0 || levels[i] >= h[i]-1 {
			return math.Inf(1)
		}
		return AttributeDegree(h[i], levels[i]+1, beta) * sum / w[i]
	}
	s := 0.0
	for {
		d := TupleDegree(deg, w)
		if d >= target-degreeTol {
			return levels, s, nil
		}
		s = math.Inf(1)
		for i := range w {
			s = min(s, next(i))
		}
		if math.IsInf(s, 1) {
			return nil, 0, fmt.Errorf("%w: degree %.4f asked, at most %.4f reachable", ErrDegree, target, d)
		}
		for i := range w { // ties step together: the levels are a function of s
			if next(i) <= s*(1+1e-12) {
				levels[i]++
				deg[i] = AttributeDegree(h[i], levels[i], beta)
			}
		}
	}
}

// PurposeResult is a purpose- and trust-aware publication: the
// decomposition reaching the degree, then the least-NCP full-domain
// generalisation at or above it that satisfies the requirements.
type PurposeResult struct {
	*FullDomainResult
	Decomposed []int   // Reach's levels
	Target     float64 // the decomposed target s that reached the degree
	Degree     float64 // Def. 4.6 of the publication, ≥ the degree asked
}

// PurposeAnonymise publishes ds for a degree of anonymisation under
// weights w (DegreeWeights) and Def. 4.4's beta (0: uniform weights).
// The thesis never enforces k; here the least-NCP generalisation
// above Reach's levels that satisfies reqs is published. That cone shrinks
// as the degree asked grows, so the NCP never falls as it rises, and at
// degree 0 (full trust) the table is OptimalFullDomain's. An unreachable
// degree is an ErrDegree naming the attributes that weigh but cannot be
// generalised.
func PurposeAnonymise(ds *Dataset, reqs []Requirement, w []float64, target, beta float64) (*PurposeResult, error) {
	if len(w) != len(ds.Attrs) {
		return nil, fmt.Errorf("%w: %d weights for %d attributes", ErrRequirement, len(w), len(ds.Attrs))
	}
	h := make([]int, len(ds.Attrs))
	var flat []string
	for a, at := range ds.Attrs {
		h[a] = at.Tax.MaxLevel() + 1
		if h[a] < 2 && w[a] > 0 {
			flat = append(flat, fmt.Sprintf("%q", at.Name))
		}
	}
	levels, s, err := Reach(target, w, h, beta)
	if err != nil {
		if len(flat) > 0 {
			return nil, fmt.Errorf("%w (%s: one level, never generalised)", err, strings.Join(flat, ", "))
		}
		return nil, err
	}
	res, err := OptimalFullDomainAbove(ds, reqs, nil, levels)
	if err != nil {
		return nil, err
	}
	deg := make([]float64, len(h))
	for a := range h {
		deg[a] = AttributeDegree(h[a], res.Levels[a], beta)
	}
	return &PurposeResult{FullDomainResult: res, Decomposed: levels, Target: s, Degree: TupleDegree(deg, w)}, nil
}
