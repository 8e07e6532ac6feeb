package coherence

// border is [U, L] (Xu, ch. 4, Definition 12), with its edges
// {⟨α, β⟩ | α ∈ U, β ∈ L, α ⊆ β}: it represents every itemset γ with
// α ⊆ γ ⊆ β for an edge, counted up to length items (0: no bound). Lower
// elements under no upper one represent nothing and are not kept.
type border struct {
	length int
	up     [][]int32 // U; nil once gone
	low    [][]int32 // L; nil once gone
	under  [][]int32 // per lower element, the upper elements it holds
	over   [][]int32 // per upper element, the lower elements holding it
	byItem [][]int32 // per item, the lower elements holding it
}

// newBorder builds the border of upper elements up and lower elements low
// (each an anti-chain). holders(i) must return the lower elements that hold
// up[i].
func newBorder(up, low [][]int32, length, items int, holders func(i int) []int32) *border {
	b := &border{length: length, up: up, low: low, under: make([][]int32, len(low)), over: make([][]int32, len(up)),
		byItem: make([][]int32, items)}
	for i := range up {
		b.over[i] = holders(i)
		for _, j := range b.over[i] {
			b.under[j] = append(b.under[j], int32(i))
		}
	}
	for j, l := range low {
		if len(b.under[j]) == 0 {
			b.low[j] = nil
			continue
		}
		for _, it := range l {
			b.byItem[it] = append(b.byItem[it], int32(j))
		}
	}
	return b
}

// edgeCount is the number of edges.
func (b *border) edgeCount() int {
	n := 0
	for j, l := range b.low {
		if l != nil {
			n += len(b.under[j])
		}
	}
	return n
}

// empty reports whether the border has no edge left.
func (b *border) empty() bool {
	for _, l := range b.low {
		if l != nil {
			return false
		}
	}
	return true
}

// suppress removes v from the border (§4.4.3, step 5): upper elements
// holding v go with their edges; a lower element β holding v becomes
// β − {v}, and goes when it no longer holds an upper element or lies in
// another lower element (whose edges then already hold its upper ones).
func (b *border) suppress(v int32) {
	changed := b.byItem[v]
	b.byItem[v] = nil
	for _, j := range changed {
		l := b.low[j]
		if l == nil {
			continue
		}
		kept := b.under[j][:0]
		for _, i := range b.under[j] {
			if contains(b.up[i], v) {
				b.up[i] = nil
				continue
			}
			if b.up[i] != nil {
				kept = append(kept, i)
			}
		}
		b.under[j] = kept
		b.low[j] = minus(l, []int32{v})
		if len(kept) == 0 {
			b.low[j] = nil
		}
	}
	for _, j := range changed {
		if l := b.low[j]; l != nil && b.within(int32(j), l) {
			b.low[j] = nil
		}
	}
}

// within reports whether l, lower element j, lies in another live lower
// element (of the two equal ones, the later goes).
func (b *border) within(j int32, l []int32) bool {
	if len(l) == 0 {
		return true
	}
	first := l[0]
	for _, it := range l {
		if len(b.byItem[it]) < len(b.byItem[first]) {
			first = it
		}
	}
	for _, o := range b.byItem[first] {
		if o == j || b.low[o] == nil || len(b.low[o]) < len(l) || !subset(l, b.low[o]) {
			continue
		}
		if len(b.low[o]) > len(l) || o < j {
			return true
		}
	}
	return false
}
