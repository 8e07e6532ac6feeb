package coherence

import (
	"context"
	"slices"
	"time"
)

// BorderResult is what Border-Cohesion decided, with its counts.
type BorderResult struct {
	Result
	// NuggetsBefore and NuggetsAfter count the nuggets of the database and
	// of the publication, over the nugget borders.
	NuggetsBefore, NuggetsAfter Count
	// MoleEdges is the mole border's edges when the greedy loop starts;
	// NuggetLower the number of maximal nuggets.
	MoleEdges, NuggetLower int
}

// BorderCohesion publishes db (h,k,p)-coherent with itemset utility, the
// loss of suppressing v being IL(v) = |N(v)|, the nuggets holding v (Xu,
// ch. 4, §4.4): it suppresses the size-1 moles and then, while a mole is
// left, the public item with the most moles per nugget lost, |M(v)|/|N(v)|
// (∞ when |N(v)| = 0; ties to more moles, then the smaller item). Moles
// and nuggets are never enumerated: both are kept as borders, edges
// ⟨α, β⟩ standing for every itemset between α and β, and the counts are
// updated after each suppression by Computeδ (Figure 18) over the edges
// holding the suppressed item, which then leaves both borders (step 5).
func BorderCohesion(ctx context.Context, db *Labelled, prm Params, nug Nuggets) (*BorderResult, error) {
	begin := time.Now()
	if err := nug.check(); err != nil {
		return nil, err
	}
	pr, base, moles, err := start(ctx, db, prm)
	if err != nil {
		return nil, err
	}
	res := &BorderResult{Result: *base}
	cnt := newCounter(ctx, len(db.Items))
	mb := moleBorder(pr, res.Suppressed, moles)
	nf, err := newNuggetFamily(ctx, pr, nil, nug)
	if err != nil {
		return nil, err
	}
	if res.NuggetsBefore, _, err = nf.counts(len(db.Items)); err != nil {
		return nil, err
	}
	for _, v := range res.Suppressed {
		mb.suppress(v)
		if err := nf.suppress(v); err != nil {
			return nil, err
		}
	}
	res.MoleEdges, res.NuggetLower = mb.edgeCount(), nf.Lower
	if err := cnt.count(mb, -1, prm.P); err != nil {
		return nil, err
	}
	mm := slices.Clone(cnt.delta)
	_, nn, err := nf.counts(len(db.Items))
	if err != nil {
		return nil, err
	}
	res.MineTime = time.Since(begin)
	for !mb.empty() {
		v := bestRatio(db.Roles, mm, nn)
		if v < 0 {
			break // unreachable: a mole holds a public item with |M(v)| > 0
		}
		res.Suppressed = append(res.Suppressed, v)
		// |M(v')| loses the moles holding v and v' (steps 2-4), then v
		// leaves the mole border (step 5).
		if err := cnt.count(mb, v, prm.P); err != nil {
			return nil, err
		}
		for _, w := range cnt.touched {
			mm[w] = mm[w].sub(cnt.delta[w])
		}
		mm[v] = Count{}
		mb.suppress(v)
		// The same for the nuggets (step 6), recounted over the diagram.
		if err := nf.suppress(v); err != nil {
			return nil, err
		}
		if _, nn, err = nf.counts(len(db.Items)); err != nil {
			return nil, err
		}
	}
	if res.NuggetsAfter, _, err = nf.counts(len(db.Items)); err != nil {
		return nil, err
	}
	res.Time = time.Since(begin)
	return res, nil
}

// moleBorder builds the mole border of the database as it is, its upper
// bound the size-1 moles and the minimal moles, its lower bound the
// maximal transactions over the public items (Xu, ch. 4, §4.4.1).
func moleBorder(pr *problem, size1 []int32, moles *Itemsets) *border {
	keep := make([]bool, len(pr.db.Items))
	for v, r := range pr.db.Roles {
		keep[v] = r == Public
	}
	low, of := maximalProjections(pr, keep)
	up := make([][]int32, 0, len(size1)+moles.Len())
	for _, v := range size1 {
		up = append(up, []int32{v})
	}
	up = append(up, moles.All()...)
	holders := func(i int) []int32 {
		var out []int32
		for _, t := range tidsOf(pr, up[i]) {
			if j := of[t]; j >= 0 {
				out = append(out, j)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return newBorder(up, low, pr.prm.P, len(pr.db.Items), holders)
}

// bestRatio returns the public item with |M(v)| > 0 and the largest
// |M(v)|/|N(v)|, or -1.
func bestRatio(roles []Role, mm, nn []Count) int32 {
	best := int32(-1)
	for v, m := range mm {
		if m.IsZero() || roles[v] != Public {
			continue
		}
		if best < 0 {
			best = int32(v)
			continue
		}
		c := cmpCountRatio(m, nn[v], mm[best], nn[best])
		if c > 0 || c == 0 && m.Cmp(mm[best]) > 0 {
			best = int32(v)
		}
	}
	return best
}
