package secureagg

import (
	"fmt"
	"slices"
)

// tree is the balanced k-ary overlay over one step's parties: position 0 is
// the root, the others follow in sorted order but for one party placed
// last (the step's coordinator, which so is a leaf: it relays nothing and
// sees no other party's ciphertext before it sends its own), and the node
// at position x has children k·x+1 … k·x+k. Every party derives the same
// tree from the committed step, so no message is needed to build it, and
// its depth is ⌈log_k N⌉ (a deterministic overlay in place of Phoenix's
// self-stabilising tree: Kaya, Pedersen, Savaş and Saygın, "Phoenix"
// (PinKDD 2007), section 4).
type tree struct {
	order []string       // parties by position
	pos   map[string]int // party -> position
	k     int
}

func newTree(parties []string, root, last string, k int) (*tree, error) {
	if k < 1 {
		return nil, fmt.Errorf("secureagg: fanout %d < 1", k)
	}
	if !slices.Contains(parties, root) {
		return nil, fmt.Errorf("secureagg: root %q is not a party", root)
	}
	order := slices.Clone(parties)
	slices.Sort(order)
	// Move the root to the front, keeping the others sorted.
	i := slices.Index(order, root)
	copy(order[1:i+1], order[:i])
	order[0] = root
	// Move last to the end, keeping the others in their order.
	if j := slices.Index(order, last); j > 0 {
		copy(order[j:], order[j+1:])
		order[len(order)-1] = last
	}
	pos := make(map[string]int, len(order))
	for i, p := range order {
		if p == "" {
			return nil, fmt.Errorf("secureagg: empty party name")
		}
		if _, dup := pos[p]; dup {
			return nil, fmt.Errorf("secureagg: duplicate party %q", p)
		}
		pos[p] = i
	}
	return &tree{order: order, pos: pos, k: k}, nil
}

func (t *tree) root() string { return t.order[0] }

// parent returns p's parent, or "" for the root.
func (t *tree) parent(p string) string {
	x := t.pos[p]
	if x == 0 {
		return ""
	}
	return t.order[(x-1)/t.k]
}

func (t *tree) children(p string) []string {
	x := t.pos[p]
	var out []string
	for c := t.k*x + 1; c <= t.k*x+t.k && c < len(t.order); c++ {
		out = append(out, t.order[c])
	}
	return out
}

// subtree returns p and all its descendants, sorted.
func (t *tree) subtree(p string) []string {
	out := []string{p}
	for i := 0; i < len(out); i++ {
		out = append(out, t.children(out[i])...)
	}
	slices.Sort(out)
	return out
}

// height is the number of edges on the longest path from p down to a leaf.
func (t *tree) height(p string) int {
	h := 0
	for _, c := range t.children(p) {
		h = max(h, t.height(c)+1)
	}
	return h
}

// depth is the number of edges from the root to p.
func (t *tree) depth(p string) int {
	d := 0
	for x := t.pos[p]; x > 0; x = (x - 1) / t.k {
		d++
	}
	return d
}
