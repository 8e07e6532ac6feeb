package coherence

// edge is ⟨α, β⟩, α ⊆ β: it covers every itemset γ with α ⊆ γ ⊆ β (Xu,
// ch. 4, §4.4.1).
type edge struct{ a, b []int32 }

// meets applies Theorem 4(2): ⟨α1,β1⟩ ∩ ⟨α2,β2⟩ ≠ ∅ iff α1∪α2 ⊆ β1∩β2,
// that is α2 ⊆ β1 and α1 ⊆ β2.
func (e edge) meets(f edge) bool { return subset(f.a, e.b) && subset(e.a, f.b) }

// meet is Theorem 4(1): the intersection covers what ⟨α1∪α2, β1∩β2⟩ covers.
func (e edge) meet(f edge) edge { return edge{union(e.a, f.a), inter(e.b, f.b)} }

// minus is Theorem 5: when e meets f, with x = α1∪α2 and y = β1∩β2, the
// itemsets covered by e and not by f are those covered by
// {⟨α1, β1−{w}⟩ | w ∈ x−α1} ∪ {⟨α1∪{w}, β1⟩ | w ∈ β1−y}. Edges with more
// than length items in α (0: no bound) cover nothing countable and are
// left out.
func (e edge) minus(f edge, length int) []edge {
	x, y := union(e.a, f.a), inter(e.b, f.b)
	var out []edge
	for _, w := range minus(x, e.a) {
		out = append(out, edge{e.a, minus(e.b, []int32{w})})
	}
	if fits(len(e.a)+1, length) {
		for _, w := range minus(e.b, y) {
			out = append(out, edge{union(e.a, []int32{w}), e.b})
		}
	}
	return out
}

// wSum is W for an edge whose α already holds X: the itemsets γ with
// α ⊆ γ ⊆ β and |γ| ≤ length, Σ_{i=0}^{m} C(|β−α|, i) with
// m = length − |α| (§4.4.2).
func (c *counter) wSum(a, b int, length int) Count {
	if length == 0 {
		return c.bin.sum(b-a, b-a)
	}
	return c.bin.sum(b-a, length-a)
}
