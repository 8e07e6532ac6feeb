package sjc

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// The network side of the rounds at one party: the PSI of each edge, and
// the class and split summaries it sends to and receives from its
// neighbours (Xu, thesis §3.3.1 and §3.3.2), each on its own sub-channel
// of the step. The rounds themselves are the Local methods.

// intersect runs the private set intersection of every edge between one
// of the party's tables and another party's, concurrently, on sub-channels
// of step named prefix/EDGE; edges inside the party intersect locally
// (joinprop.IntersectEdges).
func (s *session) intersect(ctx context.Context, step job.Step, prefix string, locals []*Local) ([][]string, error) {
	return joinprop.IntersectEdges(ctx, s.p, s.g, step, prefix, s.psiMode, func(t, e int) []string { return locals[t].JoinValues(e) })
}

// classPropagate runs the party's share of ClassSchedule over parts,
// sending and receiving class summaries on sub-channels prefix/TRANSFER.
func (s *session) classPropagate(ctx context.Context, step job.Step, prefix string, locals []*Local, shared [][]string, parts []Part) error {
	self := s.p.Self()
	for i, tr := range ClassSchedule(s.g) {
		from, to := s.g.Tables[tr.From].Party, s.g.Tables[tr.To].Party
		sub := step.Sub(fmt.Sprintf("%s/%d", prefix, i))
		var err error
		switch {
		case from == self && to == self: // an edge between two of the party's tables
			var cs ClassSummary
			if cs, err = locals[tr.From].Summary(parts[tr.From], tr.Edge, shared[tr.Edge]); err == nil {
				parts[tr.To], err = locals[tr.To].propagate(parts[tr.To], cs, tr.Forward)
			}
		case from == self:
			var al *edgeAlign
			var es EdgeSummary
			if al, err = s.aligns.of(locals[tr.From], tr.Edge, shared[tr.Edge]); err == nil {
				if es, err = locals[tr.From].wireClass(parts[tr.From], al); err == nil {
					err = s.send(ctx, sub, to, TypeClassSummary, &es, wire.DiscloseClassSummary)
				}
			}
		case to == self:
			var es *EdgeSummary
			var al *edgeAlign
			if es, err = s.receive(ctx, sub, from, TypeClassSummary, tr.Edge); err == nil {
				if al, err = s.aligns.of(locals[tr.To], tr.Edge, shared[tr.Edge]); err == nil {
					parts[tr.To], err = locals[tr.To].applyWireClass(parts[tr.To], es, al, tr.Forward)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("class summary of party %s on edge %s: %w", from, s.g.EdgeName(tr.Edge), err)
		}
	}
	return nil
}

// splitNode splits the party's Parts at a node won by table w (split is
// the predicate when w is the party's), exchanging split summaries on
// sub-channels prefix/EDGE.
func (s *session) splitNode(ctx context.Context, step job.Step, prefix string, locals []*Local, shared [][]string, parts []Part, w int, split *tree.Split) (left, right []Part, err error) {
	self := s.p.Self()
	left, right = make([]Part, len(parts)), make([]Part, len(parts))
	if s.owns(w) {
		if split == nil {
			return nil, nil, fmt.Errorf("sjc: party %s has no predicate for its table %q's split", self, s.g.Tables[w].Name)
		}
		if left[w], right[w], err = locals[w].SplitOwn(parts[w], *split); err != nil {
			return nil, nil, err
		}
	}
	for _, tr := range SplitSchedule(s.g, w) {
		from, to := s.g.Tables[tr.From].Party, s.g.Tables[tr.To].Party
		sub := step.Sub(fmt.Sprintf("%s/%d", prefix, tr.Edge))
		switch {
		case from == self && to == self: // an edge between two of the party's tables
			var ss SplitSummary
			if ss, err = locals[tr.From].SplitSummary(left[tr.From], right[tr.From], tr.Edge); err == nil {
				left[tr.To], right[tr.To], err = locals[tr.To].ApplySplit(parts[tr.To], ss)
			}
		case from == self:
			var al *edgeAlign
			var es EdgeSummary
			if al, err = s.aligns.of(locals[tr.From], tr.Edge, shared[tr.Edge]); err == nil {
				if es, err = locals[tr.From].wireSplit(left[tr.From], right[tr.From], al); err == nil {
					err = s.send(ctx, sub, to, TypeSplitSummary, &es, wire.DiscloseSplitSummary)
				}
			}
		case to == self:
			var es *EdgeSummary
			var al *edgeAlign
			if es, err = s.receive(ctx, sub, from, TypeSplitSummary, tr.Edge); err == nil {
				if al, err = s.aligns.of(locals[tr.To], tr.Edge, shared[tr.Edge]); err == nil {
					left[tr.To], right[tr.To], err = locals[tr.To].applyWireSplit(parts[tr.To], es, al)
				}
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("split summary of party %s on edge %s: %w", from, s.g.EdgeName(tr.Edge), err)
		}
	}
	return left, right, nil
}

// send sends a summary to party to.
func (s *session) send(ctx context.Context, step job.Step, to, typ string, es *EdgeSummary, d wire.Disclosure) error {
	b, err := wire.Marshal(es)
	if err != nil {
		return err
	}
	if err := s.p.Send(ctx, to, step.Message(s.p.Self(), typ, b), d); err != nil {
		return fmt.Errorf("%w: to %s: %w", errNotDelivered, to, err)
	}
	return nil
}

// receive receives the summary of edge e from party from.
func (s *session) receive(ctx context.Context, step job.Step, from, typ string, e int) (*EdgeSummary, error) {
	m, err := s.p.Receive(ctx, from, step.Key(typ))
	if err != nil {
		return nil, fmt.Errorf("%w: from %s: %w", errNoMessage, from, err)
	}
	var es EdgeSummary
	if err := wire.Unmarshal(m.Body, &es); err != nil {
		return nil, fmt.Errorf("from %s: %w", from, err)
	}
	if es.Edge != e {
		return nil, fmt.Errorf("%w: from %s: names edge %d", ErrSummary, from, es.Edge)
	}
	return &es, nil
}

// confirmation is a party's answer to the committed winners of a level.
type confirmation struct {
	OK bool `msgpack:"ok"`
}

// confirm tells every other party holding a table whether this party's
// own offers agree with the committed winners (ok), and waits for theirs.
// No party splits, and so no split summary leaves, unless every party
// agrees: a coordinator that names a loser the winner is refused by the
// party whose candidate should have won, before the loser's predicate is
// used.
func (s *session) confirm(ctx context.Context, step job.Step, ok bool) error {
	sub := step.Sub("confirm")
	body, err := wire.Marshal(&confirmation{OK: ok})
	if err != nil {
		return err
	}
	peers := s.g.PartiesBut(s.p.Self())
	for _, p := range peers {
		if err := s.p.Send(ctx, p, sub.Message(s.p.Self(), TypeConfirm, body), wire.DiscloseControl); err != nil {
			return fmt.Errorf("%w: confirmation to %s: %w", errNotDelivered, p, err)
		}
	}
	if !ok {
		return nil
	}
	for _, p := range peers {
		m, err := s.p.Receive(ctx, p, sub.Key(TypeConfirm))
		if err != nil {
			return fmt.Errorf("%w: confirmation from %s: %w", errNoMessage, p, err)
		}
		var c confirmation
		if err := wire.Unmarshal(m.Body, &c); err != nil {
			return fmt.Errorf("confirmation from %s: %w", p, err)
		}
		if !c.OK {
			return fmt.Errorf("party %s refuses coordinator %s's winners: no split is made", p, step.Coordinator)
		}
	}
	return nil
}
