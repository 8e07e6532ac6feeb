package tree

// The multiway grower (GrowParams.Multiway) grows a tree as C4.5 does
// (Quinlan, C4.5: Programs for Machine Learning, 1993, §2.2 and §2.4; the
// same in Weka's J48, whose defaults the paper's Java experiments likely
// used): a nominal attribute splits into one branch per value present at
// the node, a numeric one at a threshold as the binary grower places it;
// among the attributes whose split is admissible (at least two branches of
// minObjs rows or more, C4.5's -m 2) the one with the largest gain ratio is
// chosen among those whose information gain is at least the average gain
// of the admissible ones (the book's guard against a low-gain test whose
// split information is tiny). A node stops as a leaf when pure, when it
// has fewer than 2·minObjs rows (or MinSplit), at MaxDepth, or when no
// split has a gain; Prune then applies C4.5's pessimistic pruning as for
// binary trees. Not done as C4.5 does: the MDL correction release 8 takes
// off a numeric threshold's gain, subtree raising, and branches for values
// absent at a node (C4.5 makes them leaves of the parent's class, which is
// what Tree.Leaf gives such a value by stopping at the node).

// minObjs is C4.5's minimum number of rows in at least two branches of a
// split (its -m option, default 2).
const minObjs = 2

// avgGainSlack is how far below the average gain a chosen split's gain
// may be (Weka's J48 compares with the average less 1e-3).
const avgGainSlack = 1e-3

func (g *grower) growMulti(rows []int32, depth int) *Node {
	counts := g.counts(rows)
	n := &Node{Counts: counts}
	nz := 0
	for _, c := range counts {
		if c > 0 {
			nz++
		}
	}
	if nz <= 1 || uint64(len(rows)) < max(g.p.MinSplit, 2*minObjs) || depth >= g.p.MaxDepth {
		return n
	}
	best := g.bestRatio(rows, counts)
	switch {
	case best.attr == nil:
		return n
	case best.attr.Numeric:
		left, right := partition(rows, best.split, best.attr)
		n.Split = best.split
		n.Left, n.Right = g.growMulti(left, depth+1), g.growMulti(right, depth+1)
		return n
	}
	a := best.attr
	byValue := make([][]int32, len(a.Values))
	for _, r := range rows {
		byValue[a.Code[r]] = append(byValue[a.Code[r]], r)
	}
	n.Split = &Split{Party: g.party, Table: g.table, Column: a.Name, Op: OpIn}
	for v, rs := range byValue {
		if len(rs) > 0 {
			n.Branches = append(n.Branches, Branch{Values: []string{a.Values[v]}, Child: g.growMulti(rs, depth+1)})
		}
	}
	return n
}

// ratioCandidate is an admissible split of one attribute: its gain and
// gain ratio.
type ratioCandidate struct {
	gain, ratio float64
	attr        *Attr
	split       *Split // numeric only
}

// bestRatio is C4.5's choice among the attributes (the largest gain ratio
// among the admissible splits whose gain is at least their average), a
// candidate without attr when none has a gain.
func (g *grower) bestRatio(rows []int32, counts []uint64) ratioCandidate {
	var cands []ratioCandidate
	sum := 0.0
	for _, a := range g.d.Attrs {
		var c ratioCandidate
		var ok bool
		if a.Numeric {
			c, ok = g.numericRatio(a, rows, counts)
		} else {
			c, ok = g.nominalRatio(a, rows, counts)
		}
		if ok {
			cands = append(cands, c)
			sum += c.gain
		}
	}
	best := ratioCandidate{}
	if len(cands) == 0 {
		return best
	}
	avg := sum / float64(len(cands))
	for _, c := range cands {
		if c.gain > eps && c.gain >= avg-avgGainSlack && c.ratio > best.ratio+eps {
			best = c
		}
	}
	return best
}

// numericRatio is the attribute's best threshold by gain (each side at
// least minObjs rows) with its gain ratio.
func (g *grower) numericRatio(a *Attr, rows []int32, counts []uint64) (ratioCandidate, bool) {
	c := g.bestNumeric(a, rows, counts, minObjs)
	if c.split == nil {
		return ratioCandidate{}, false
	}
	n := uint64(len(rows))
	si := splitInfo([]uint64{c.left, n - c.left})
	return ratioCandidate{gain: c.gain, ratio: c.gain / si, attr: a, split: c.split}, true
}

// nominalRatio scores the split of rows into one branch per value of a;
// it is admissible when at least two branches hold minObjs rows.
func (g *grower) nominalRatio(a *Attr, rows []int32, total []uint64) (ratioCandidate, bool) {
	k := len(total)
	per := make([]uint64, len(a.Values)*k)
	sizes := make([]uint64, len(a.Values))
	for _, r := range rows {
		per[int(a.Code[r])*k+int(g.d.Class[r])]++
		sizes[a.Code[r]]++
	}
	big := 0
	for _, s := range sizes {
		if s >= minObjs {
			big++
		}
	}
	if big < 2 {
		return ratioCandidate{}, false
	}
	gain := GainMultiway(total, per, k)
	return ratioCandidate{gain: gain, ratio: gain / splitInfo(sizes), attr: a}, true
}

// GainMultiway is the information gain, in bits, of splitting rows with
// class counts total into branches whose class counts are per (branch b's
// count of class c at per[b·k + c], k classes): H(total) − Σ |b|/N·H(b).
func GainMultiway(total, per []uint64, k int) float64 {
	var n float64
	for _, c := range total {
		n += float64(c)
	}
	g := nEntropy(total)
	for b := 0; b+k <= len(per); b += k {
		g -= nEntropy(per[b : b+k])
	}
	return g / n
}

// splitInfo is C4.5's split information of branch sizes, in bits:
// −Σ |b|/N·log2(|b|/N).
func splitInfo(sizes []uint64) float64 {
	return nEntropy(sizes) / float64(rows(sizes))
}

// GainRatio is C4.5's gain ratio of a split into branches of the given
// class counts (as GainMultiway): its gain over its split information, 0
// when the split information is 0 (a single branch).
func GainRatio(total, per []uint64, k int) float64 {
	sizes := make([]uint64, 0, len(per)/k)
	for b := 0; b+k <= len(per); b += k {
		sizes = append(sizes, rows(per[b:b+k]))
	}
	si := splitInfo(sizes)
	if si <= eps {
		return 0
	}
	return GainMultiway(total, per, k) / si
}
