package sjc

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// The party's side of growing the tree (Xu, thesis §3.3): class
// propagation at the root, then per level its offers and, once the
// winners are committed, its share of their splits.

// propagate runs the PSI of the party's edges and class propagation, and
// keeps the root's Parts.
func (s *session) propagate(ctx context.Context, step job.Step, gr *growth) (_ countsOutput, err error) {
	defer s.discardOnError(&err)
	if len(s.own) == 0 {
		return countsOutput{}, nil
	}
	if err := s.prepare(gr); err != nil {
		return countsOutput{}, err
	}
	shared, err := s.intersect(ctx, step, "psi", s.locals)
	if err != nil {
		return countsOutput{}, err
	}
	out := countsOutput{Tables: true}
	for e, v := range shared {
		if len(v) == 0 && (s.owns(s.g.Index(s.g.Edges[e].Parent)) || s.owns(e+1)) {
			out.EmptyEdges = append(out.EmptyEdges, e)
		}
	}
	parts := make([]Part, len(s.g.Tables))
	for _, i := range s.own {
		parts[i] = s.locals[i].Initial()
	}
	if err := s.classPropagate(ctx, step, "class", s.locals, shared, parts); err != nil {
		return countsOutput{}, err
	}
	c, err := s.counts(parts)
	if err != nil {
		return countsOutput{}, err
	}
	out.Counts = [][]uint64{c}
	next := &state{Key: stepKey(step), Shared: shared}
	if err := s.addNode(step, next, 0, parts, c); err != nil {
		return countsOutput{}, err
	}
	return out, s.keep(nil, next)
}

// frontiers are the party's tables' frontiers (BestSplits) at the open
// nodes of a level, computed from the state base: by node id, by graph
// index.
type frontiers struct {
	base  string
	level int
	nodes map[int32][][]Candidate
}

// choose offers the gains of the party's frontiers at the level's open
// nodes, which must be those the log determines.
func (s *session) choose(ctx context.Context, step job.Step, gr *growth, a chooseArgs) (offersOutput, error) {
	if want := gr.chooseArgs(); a.Level != want.Level || !slices.Equal(a.Open, want.Open) {
		return offersOutput{}, s.refuse(step, "asks offers at nodes %v of level %d; the log's open nodes are %v of level %d", a.Open, a.Level, want.Open, want.Level)
	}
	if s.prm.HideGains {
		return s.chooseHidden(ctx, step, gr, a)
	}
	out := offersOutput{Nodes: make([][]Offer, len(a.Open))}
	for i := range out.Nodes {
		out.Nodes[i] = make([]Offer, len(s.g.Tables))
	}
	if len(s.own) == 0 {
		return out, nil
	}
	fr, err := s.frontiers(step, gr)
	if err != nil {
		return offersOutput{}, err
	}
	for i, id := range a.Open {
		for _, t := range s.own {
			out.Nodes[i][t] = OfferOf(fr.nodes[id][t])
		}
	}
	return out, nil
}

// frontiers returns the party's frontiers at the level's open nodes: those
// its choose step computed, or (after a restart) the same again. Before
// computing them it checks the committed counts of the nodes its state
// holds against its own: a coordinator may not commit counts that keep a
// node open (or close it) against the data.
func (s *session) frontiers(step job.Step, gr *growth) (*frontiers, error) {
	if fr := s.fronts; fr != nil && fr.base == gr.base && fr.level == gr.level {
		return fr, nil
	}
	if err := s.prepare(gr); err != nil {
		return nil, err
	}
	base, err := s.base(gr)
	if err != nil {
		return nil, err
	}
	if err := s.checkCounts(step, gr, base); err != nil {
		return nil, err
	}
	fr := &frontiers{base: gr.base, level: gr.level, nodes: map[int32][][]Candidate{}}
	for _, id := range gr.open {
		parts, err := s.parts(base, id)
		if err != nil {
			return nil, err
		}
		fr.nodes[id] = make([][]Candidate, len(s.g.Tables))
		for _, t := range s.own {
			if fr.nodes[id][t], err = s.locals[t].BestSplits(parts[t]); err != nil {
				return nil, err
			}
		}
	}
	s.fronts = fr
	return fr, nil
}

// checkCounts compares the committed class counts of every node the state
// holds with the party's own.
func (s *session) checkCounts(step job.Step, gr *growth, base *state) error {
	for _, n := range base.Nodes {
		if n.ID < 0 || int(n.ID) >= len(gr.nodes) || !n.Spilled && len(n.Parts) != len(s.g.Tables) {
			return fmt.Errorf("sjc: party %s: its state names tree node %d, which the log does not have", s.p.Self(), n.ID)
		}
		c := n.Counts // a spilled node's, kept beside it
		if !n.Spilled {
			var err error
			if c, err = s.counts(n.Parts); err != nil {
				return err
			}
		}
		if !slices.Equal(c, gr.nodes[n.ID].counts) {
			return s.refuse(step, "the log's class counts of node %d are not this party's", n.ID)
		}
	}
	return nil
}

// split makes the level's committed splits: the winners' parties split
// their rows, every party applies the split summaries it receives, and
// each reports the children's counts. First every party checks the
// winners against its own offers (winningSplits) and all confirm to each
// other, so that nothing is split unless the log names the true winners.
func (s *session) split(ctx context.Context, step job.Step, gr *growth, a splitArgs) (_ countsOutput, err error) {
	defer s.discardOnError(&err)
	if want := gr.splitArgs(); a != want {
		return countsOutput{}, s.refuse(step, "asks the splits of level %d from node %d; the log determines level %d from node %d", a.Level, a.NextID, want.Level, want.NextID)
	}
	if len(s.own) == 0 {
		return countsOutput{}, nil
	}
	fr, err := s.frontiers(step, gr)
	if err != nil {
		return countsOutput{}, err
	}
	preds, refusal := s.winningSplits(step, gr, fr)
	if err := s.confirm(ctx, step, refusal == nil); refusal != nil {
		return countsOutput{}, refusal
	} else if err != nil {
		return countsOutput{}, err
	}
	base, err := s.base(gr)
	if err != nil {
		return countsOutput{}, err
	}
	next := &state{Key: stepKey(step), Shared: base.Shared, Won: slices.Clone(base.Won)}
	out := countsOutput{Tables: true}
	id := a.NextID
	for i, node := range gr.open {
		w := gr.winners[i]
		if w.Table < 0 {
			continue
		}
		parts, err := s.parts(base, node)
		if err != nil {
			return countsOutput{}, err
		}
		left, right, err := s.splitNode(ctx, step, fmt.Sprintf("split/%d", node), s.locals, base.Shared, parts, w.Table, preds[i])
		if err != nil {
			return countsOutput{}, err
		}
		if preds[i] != nil {
			next.Won = append(next.Won, wonSplit{Node: node, Split: *preds[i]})
		}
		for _, ch := range [][]Part{left, right} {
			c, err := s.counts(ch)
			if err != nil {
				return countsOutput{}, err
			}
			out.Counts = append(out.Counts, c)
			if err := s.addNode(step, next, id, ch, c); err != nil {
				return countsOutput{}, err
			}
			id++
		}
		s.release(base, node)
	}
	s.fronts = nil
	return out, s.keep(base, next)
}

// winningSplits checks the committed winners against the party's own
// frontiers and returns its predicates of the nodes its tables won (by
// open position). At a node won by one of its tables, the winning
// candidate is the one of exactly the committed gain (a frontier's gains
// strictly increase); at every node, none of its own candidates may beat
// the winner under the tie rule (Choose): a gain above the winner's by
// more than Eps, or one at least the winner's from a smaller (party,
// table). Within Eps of each other, only the coordinator, which saw every
// gain, can tell which of two tables comes first: that choice among
// equally good splits is not checked. A node the log makes a leaf must
// have no candidate of gain above 2·Eps.
func (s *session) winningSplits(step job.Step, gr *growth, fr *frontiers) ([]*tree.Split, error) {
	if s.prm.HideGains {
		return s.hiddenWinningSplits(step, gr, fr)
	}
	preds := make([]*tree.Split, len(gr.open))
	for i, id := range gr.open {
		w := gr.winners[i]
		for _, t := range s.own {
			f := fr.nodes[id][t]
			if t == w.Table {
				k := slices.IndexFunc(f, func(c Candidate) bool { return c.Gain == w.Gain })
				if k < 0 {
					return nil, s.refuse(step, "names table %q the winner of node %d at a gain it did not offer", s.g.Tables[t].Name, id)
				}
				preds[i] = &f[k].Split
				continue
			}
			if s.beats(t, f, w) {
				return nil, s.refuse(step, "names a winner of node %d that a candidate of table %q beats", id, s.g.Tables[t].Name)
			}
		}
	}
	return preds, nil
}

// beats reports whether one of table t's frontier f should have won over
// w under the tie rule.
func (s *session) beats(t int, f []Candidate, w winner) bool {
	for _, c := range f {
		switch {
		case w.Table < 0 && c.Gain > 2*Eps:
			// A leaf: Choose's pick had a gain <= Eps, and it is within Eps
			// of the best, so no candidate may exceed 2·Eps.
			return true
		case w.Table >= 0 && (c.Gain > w.Gain+Eps || c.Gain >= w.Gain && s.g.TableBefore(t, w.Table)):
			return true
		}
	}
	return false
}

// hiddenWinningSplits is winningSplits with hidden gains: at a node won
// by one of its tables the party splits with that table's pick
// (hiddenPick), and refuses a winner with no useful split; it refuses a
// leaf where one of its tables has a useful split. Which of the useful
// tables wins rests on the jointly decrypted counts, which only the
// coordinator sees: not checked.
func (s *session) hiddenWinningSplits(step job.Step, gr *growth, fr *frontiers) ([]*tree.Split, error) {
	preds := make([]*tree.Split, len(gr.open))
	for i, id := range gr.open {
		w := gr.winners[i]
		for _, t := range s.own {
			f := fr.nodes[id][t]
			switch {
			case t == w.Table:
				c := hiddenPick(f)
				if c == nil {
					return nil, s.refuse(step, "names table %q the winner of node %d, which has no split of positive gain", s.g.Tables[t].Name, id)
				}
				preds[i] = &c.Split
			case w.Table < 0 && useful(f):
				return nil, s.refuse(step, "makes node %d a leaf, which table %q has a split of positive gain for", id, s.g.Tables[t].Name)
			}
		}
	}
	return preds, nil
}
