package profile

import (
	"fmt"
	"math"
)

// Weighted is one exposed interest and its weight w_t = log10(|D|/Sup(t)):
// one entry of the list that leaves the client.
type Weighted struct {
	Term   string  `json:"term"`
	Weight float64 `json:"weight"`
}

// Leaf is one leaf of U[exp] with its probability; Others marks the mass
// hidden under Parent (empty for the root).
type Leaf struct {
	Label  string  `json:"label,omitempty"`
	Others bool    `json:"others,omitempty"`
	Parent string  `json:"parent,omitempty"`
	P      float64 `json:"p"`
}

// Exposure is what a minDetail exposes: the list sent to the search
// wrapper, the leaves of U[exp], and the entropies behind expRatio.
type Exposure struct {
	MinDetail float64    `json:"min_detail"`
	Terms     []Weighted `json:"terms"`
	Leaves    []Leaf     `json:"leaves"`
	H         float64    `json:"h"`
	HExp      float64    `json:"h_exp"`
	ExpRatio  float64    `json:"exp_ratio"`
}

// Expose hides every node with P(t) = Sup(t)/|D| < minDetail, with its
// subtree (Xu, thesis, chapter 5, §5.2.2), and returns the exposed terms in
// pre-order with their weights (§5.2.3) and expRatio = H(U[exp])/H(U).
func Expose(root *Node, minDetail float64) (Exposure, error) {
	if !(minDetail >= 0 && minDetail <= 1) {
		return Exposure{}, fmt.Errorf("%w: min-detail must be in [0, 1]", ErrParams)
	}
	if root == nil || !(root.Sup > 0) || math.IsInf(root.Sup, 0) {
		return Exposure{}, fmt.Errorf("%w: the root's sup must be positive and finite", ErrProfile)
	}
	e := Exposure{MinDetail: minDetail, Terms: []Weighted{}}
	x := exposer{total: root.Sup, tol: tolerance(root.Sup)}
	x.walk(root, minDetail, &e.Terms, &e.Leaves)
	e.HExp = entropy(e.Leaves)
	var full []Leaf
	x.walk(root, 0, nil, &full)
	e.H = entropy(full)
	// A profile with no interest has nothing to expose.
	if e.H > 0 {
		e.ExpRatio = e.HExp / e.H
	}
	return e, nil
}

type exposer struct {
	total float64 // |D|
	tol   float64
}

// walk adds n's exposed children to terms (when non-nil) and U[exp]'s
// leaves under n to leaves; n itself is exposed.
func (x exposer) walk(n *Node, minDetail float64, terms *[]Weighted, leaves *[]Leaf) {
	shown, exposed := 0.0, false
	for _, c := range n.Children {
		// P(c) ≥ minDetail, within the rounding of the supports.
		if c.Sup/x.total < minDetail-1e-9 {
			continue
		}
		exposed = true
		shown += c.Sup
		if terms != nil {
			*terms = append(*terms, Weighted{Term: c.Label, Weight: math.Log10(x.total / c.Sup)})
		}
		x.walk(c, minDetail, terms, leaves)
	}
	if !exposed {
		*leaves = append(*leaves, Leaf{Label: n.Label, P: n.Sup / x.total})
		return
	}
	// The hidden children and the profile's own "others" become one leaf.
	if rest := n.Sup - shown; rest > x.tol {
		*leaves = append(*leaves, Leaf{Others: true, Parent: n.Label, P: rest / x.total})
	}
}

// entropy is −Σ P·log10 P over the leaves.
func entropy(leaves []Leaf) float64 {
	h := 0.0
	for _, l := range leaves {
		if l.P > 0 {
			h -= l.P * math.Log10(l.P)
		}
	}
	return h
}
