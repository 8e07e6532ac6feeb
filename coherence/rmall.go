package coherence

import (
	"context"
	"time"
)

// RmAll is the thesis's baseline (Xu, ch. 4, §4.5.1): it suppresses every
// public item that occurs in a mole. Like the greedy algorithms it first
// suppresses the size-1 moles (Observation 2), then every public item of
// a mole of what is left: an item of a minimal mole, or one that occurs
// with a minimal mole α in a transaction when |α| < p (α plus that item is
// a mole). Suppressed lists the items in item order after the size-1 moles.
func RmAll(ctx context.Context, db *Labelled, prm Params) (*Result, error) {
	begin := time.Now()
	pr, res, moles, err := start(ctx, db, prm)
	if err != nil {
		return nil, err
	}
	gone := make([]bool, len(db.Items))
	for _, v := range res.Suppressed {
		gone[v] = true
	}
	in := make([]bool, len(db.Items))
	for i := range moles.Len() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a := moles.At(i)
		for _, v := range a {
			in[v] = true
		}
		if !fits(len(a)+1, prm.P) {
			continue
		}
		for _, t := range tidsOf(pr, a) {
			for _, v := range pr.trans[t] {
				if db.Roles[v] == Public && !gone[v] {
					in[v] = true
				}
			}
		}
	}
	for v, ok := range in {
		if ok {
			res.Suppressed = append(res.Suppressed, int32(v))
		}
	}
	res.Time = time.Since(begin)
	return res, nil
}
