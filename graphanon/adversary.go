package graphanon

import (
	"context"
	"fmt"
	"math"
)

// Model is the adversary's noisy-or model (§6.1): the leak λ₀, the chance
// of a sensitive edge from causes not observed, and a noise λₜ per
// observed type, the chance one observation of the type causes one.
type Model struct {
	Leak   float64
	Lambda map[string]float64
}

// Check refuses parameters outside [0, 1) and an observed type of the
// release with no noise; errors name the parameter, never a type.
func (m Model) Check(types []string) error {
	if !(m.Leak >= 0 && m.Leak < 1) {
		return fmt.Errorf("graphanon: the leak must lie in [0, 1)")
	}
	for _, l := range m.Lambda {
		if !(l >= 0 && l < 1) {
			return fmt.Errorf("graphanon: every noise must lie in [0, 1)")
		}
	}
	for _, t := range types {
		if _, ok := m.Lambda[t]; !ok {
			return fmt.Errorf("graphanon: an observed edge type has no noise in the model")
		}
	}
	return nil
}

// NoisyOr is P(eˢ = 1 | o₁ … oₙ) = 1 − ∏ₗ₌₀ⁿ (1 − λₗ) for certain
// observations with noises lambdas.
func NoisyOr(leak float64, lambdas ...float64) float64 {
	stay := 1 - leak
	for _, l := range lambdas {
		stay *= 1 - l
	}
	return 1 - stay
}

// NoisyOrUncertain is the noisy-or over uncertain observations (§6.1),
// Σ_o P(eˢ = 1 | o) ∏ₖ P(oₖ), for independent observations oₗ of noise
// lambdas[l] that exist with probability probs[l]: summed over o it is
// 1 − (1 − λ₀) ∏ₗ (1 − P(oₗ)·λₗ).
func NoisyOrUncertain(leak float64, lambdas, probs []float64) float64 {
	stay := 1 - leak
	for l := range lambdas {
		stay *= 1 - probs[l]*lambdas[l]
	}
	return 1 - stay
}

// Adversary predicts sensitive edges from a release alone. Its nodes are
// the release's nodes in order, or for the clustered strategies the
// classes' members laid end to end (Anonymised.Place maps the graph's
// nodes to them).
type Adversary struct {
	n       int
	leak    float64
	classOf []int            // clustered: node → class
	classes [][]float64      // clustered: class × class → ∏ (1 − P(o)·λ)
	pairs   map[pair]float64 // node strategies: pair → ∏ (1 − λ)
}

// NewAdversary reads the release with model m.
func NewAdversary(rel *Release, m Model) (*Adversary, error) {
	types := map[string]bool{}
	for _, e := range rel.Edges {
		types[e.Type] = true
	}
	var list []string
	for t := range types {
		list = append(list, t)
	}
	if err := m.Check(list); err != nil {
		return nil, err
	}
	a := &Adversary{leak: m.Leak}
	if rel.Strategy.Clustered() {
		return a, a.readClusters(rel, m)
	}
	a.n = len(rel.Nodes)
	index := make(map[string]int, a.n)
	for i, v := range rel.Nodes {
		index[v.ID] = i
	}
	a.pairs = map[pair]float64{}
	for _, e := range rel.Edges {
		x, okA := index[e.A]
		y, okB := index[e.B]
		if !okA || !okB || x == y {
			return nil, fmt.Errorf("graphanon: a released edge joins no two released nodes")
		}
		p := pairOf(x, y)
		if _, ok := a.pairs[p]; !ok {
			a.pairs[p] = 1
		}
		a.pairs[p] *= math.Pow(1-m.Lambda[e.Type], float64(e.Count))
	}
	return a, nil
}

// readClusters estimates each observation's probability between two
// classes (§7). Cluster: the type's edges between them over the node
// pairs between them (§7.2's examples: 30 of 100 is 0.3), spread over the
// type's most edges per pair as that many observations. Constrained: the
// classes' most edges per pair, each observation with the type's edges
// over all node pairs (the uniform estimate of §7.2) spread over them.
func (a *Adversary) readClusters(rel *Release, m Model) error {
	index := map[string]int{}
	for c, cl := range rel.Classes {
		index[cl.ID] = c
		for range cl.Size {
			a.classOf = append(a.classOf, c)
		}
	}
	a.n = len(a.classOf)
	cons := map[string]Constraint{}
	for _, c := range rel.Constraints {
		cons[c.Type] = c
	}
	all := float64(a.n) * float64(a.n-1) / 2
	a.classes = make([][]float64, len(rel.Classes))
	for c := range a.classes {
		a.classes[c] = make([]float64, len(rel.Classes))
		for d := range a.classes[c] {
			a.classes[c][d] = 1
		}
	}
	for _, e := range rel.Edges {
		x, okA := index[e.A]
		y, okB := index[e.B]
		con, okC := cons[e.Type]
		if !okA || !okB || !okC || con.MaxPerPair < 1 || e.Count < 1 {
			return fmt.Errorf("graphanon: a released edge joins no two released classes, or its type has no constraint")
		}
		var obs, prob float64
		if rel.Strategy == Cluster {
			obs = float64(con.MaxPerPair)
			prob = float64(e.Count) / classPairs(rel.Classes[x].Size, rel.Classes[y].Size, x == y) / obs
		} else {
			obs = float64(e.Count)
			prob = float64(con.Edges) / all / obs
		}
		f := math.Pow(1-math.Min(1, prob)*m.Lambda[e.Type], obs)
		a.classes[x][y] *= f
		if x != y {
			a.classes[y][x] *= f
		}
	}
	return nil
}

// classPairs is the number of node pairs between two classes of sizes a
// and b (within one class when same).
func classPairs(a, b int, same bool) float64 {
	if same {
		return float64(a) * float64(a-1) / 2
	}
	return float64(a) * float64(b)
}

// Nodes is the number of nodes the adversary predicts over.
func (a *Adversary) Nodes() int { return a.n }

// Prob is the adversary's P(eˢᵤᵥ = 1) for released nodes u ≠ v.
func (a *Adversary) Prob(u, v int) float64 {
	stay := 1 - a.leak
	if a.classes != nil {
		stay *= a.classes[a.classOf[u]][a.classOf[v]]
	} else if f, ok := a.pairs[pairOf(u, v)]; ok {
		stay *= f
	}
	return 1 - stay
}

// Predicted counts, per threshold ρ, the node pairs the adversary
// predicts above ρ on the release alone: what anyone holding it can count.
func Predicted(ctx context.Context, rel *Release, m Model, rhos []float64) ([]int, error) {
	a, err := NewAdversary(rel, m)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(rhos))
	for u := range a.n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for v := u + 1; v < a.n; v++ {
			p := a.Prob(u, v)
			for i, r := range rhos {
				if p > r {
					out[i]++
				}
			}
		}
	}
	return out, nil
}
