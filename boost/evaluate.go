package boost

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// Scoring a test set (spec test:) without joining the test tables, as sjc
// does: each party reads its test tables, and every test row gets as its
// signature the outcomes of all its table's kept splits, in ordinal
// order (Local.SignLike: each party applies only its own predicates). A
// private set intersection per edge of the test tables and one up pass
// (combo summaries, as at a training level) give the class holder its
// test groups: each of its test rows with the combos of its test join
// rows and their counts. A group's combo walks every tree to its leaves
// (the class holder's skeletons), so the class holder scores the join
// rows (Holder.Evaluate) and reports accuracy, AUC and the number of
// rows, which are committed. The test step discloses what a training
// level's up pass does (split-summary), over the test tables, and the
// PSI's shared test join values.

// TestScore is a test set's score over its join rows: under logistic loss
// the accuracy (a row is predicted positive when its margin is above 0)
// and the AUC (ties counted half; absent when one class is), under
// squared loss the root mean squared error; absent without join rows.
type TestScore struct {
	Accuracy *float64 `msgpack:"accuracy" json:"accuracy,omitempty"`
	AUC      *float64 `msgpack:"auc" json:"auc,omitempty"`
	RMSE     *float64 `msgpack:"rmse" json:"rmse,omitempty"`
	Rows     uint64   `msgpack:"rows" json:"rows"`
}

// SignLike gives the rows of l (a test table's Local) the outcomes of
// train's splits, in ordinal order: '0' where the row's value is at most
// the split's threshold.
func (l *Local) SignLike(t *table.Table, train *Local) error {
	ps := make([]pred, len(train.made))
	for ord := range train.made {
		sp := train.Predicate(ord)
		ps[ord] = pred{Column: sp.Column, Num: sp.Num}
	}
	return l.sign(t, ps)
}

// sign appends to every row's signature the outcomes of preds, in order.
func (l *Local) sign(t *table.Table, preds []pred) error {
	for _, sp := range preds {
		c, err := t.Column(sp.Column)
		if err != nil || c.Num == nil {
			return fmt.Errorf("%w: table %q column %q: not numeric", ErrData, l.name, sp.Column)
		}
		for r := range l.sig {
			bit := byte('1')
			if c.Num[r] <= sp.Num {
				bit = '0'
			}
			l.sig[r] = append(l.sig[r], bit)
		}
	}
	return nil
}

// Margin is the margin of a join row whose tables' signatures (every
// split made) form combo.
func (h *Holder) Margin(combo string) float64 {
	sigs := sigsOf(combo)
	m := h.base
	for _, t := range h.trees {
		m += leafOf(t, sigs).weight
	}
	return m
}

// Evaluate scores the grown trees on test groups (every table's rows
// signed with all its splits) with the labels y of the class holder's
// test rows.
func (h *Holder) Evaluate(groups []Group, y []float64) TestScore {
	ms := make([]float64, len(groups))
	var out TestScore
	var correct, sq float64
	for i, gr := range groups {
		ms[i] = h.Margin(gr.Combo)
		w := float64(gr.Count)
		out.Rows += gr.Count
		if (ms[i] > 0) == (y[gr.Row] == 1) {
			correct += w
		}
		d := ms[i] - y[gr.Row]
		sq += w * d * d
	}
	if out.Rows == 0 {
		return out
	}
	if h.p.Loss == LossSquared {
		rmse := math.Sqrt(sq / float64(out.Rows))
		out.RMSE = &rmse
		return out
	}
	acc := correct / float64(out.Rows)
	out.Accuracy = &acc
	if a, ok := weightedAUC(groups, ms, y); ok {
		out.AUC = &a
	}
	return out
}

// weightedAUC is the area under the ROC curve of margins ms over groups
// weighted by their join rows, ties counted half; false when a class has
// no row.
func weightedAUC(groups []Group, ms, y []float64) (float64, bool) {
	idx := make([]int, len(groups))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case ms[a] < ms[b]:
			return -1
		case ms[a] > ms[b]:
			return 1
		}
		return 0
	})
	var area, negBelow, pos, neg float64
	for i := 0; i < len(idx); {
		var p, n float64
		j := i
		for ; j < len(idx) && ms[idx[j]] == ms[idx[i]]; j++ {
			gr := groups[idx[j]]
			if y[gr.Row] == 1 {
				p += float64(gr.Count)
			} else {
				n += float64(gr.Count)
			}
		}
		area += p*negBelow + p*n/2
		negBelow += n
		pos, neg = pos+p, neg+n
		i = j
	}
	if pos == 0 || neg == 0 {
		return 0, false
	}
	return area / (pos * neg), true
}

// evaluate scores the spec's test set (see above): the class holder's
// score, nil at the other parties.
func (s *session) evaluate(ctx context.Context, step job.Step) (*TestScore, error) {
	locals := make([]*Local, len(s.g.Tables))
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		t, err := job.OpenTestTable(ctx, s.p, name)
		if err != nil {
			return nil, err
		}
		if t.NumRows() == 0 {
			return nil, fmt.Errorf("%w: test table %q has no rows", ErrData, name)
		}
		l, err := NewLocal(s.g, name, t, s.prm.Bins, s.prm.Loss, s.pos)
		if err != nil {
			return nil, fmt.Errorf("test set: %w", err)
		}
		if err := l.SignLike(t, s.locals[i]); err != nil {
			return nil, err
		}
		locals[i] = l
	}
	shared, err := s.intersectTables(ctx, step, "test-psi", locals)
	if err != nil {
		return nil, fmt.Errorf("test set: %w", err)
	}
	kids, err := s.upPass(ctx, step, "test-up", locals, shared)
	if err != nil || !s.isHolder() {
		return nil, err
	}
	groups, _, err := locals[0].Groups(kids[0])
	if err != nil {
		return nil, err
	}
	sc := s.holder.Evaluate(groups, locals[0].Labels())
	return &sc, nil
}
