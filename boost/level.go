package boost

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// One level of a tree at one party (see the package doc's "Distributed
// job"): the up pass, the class holder's gradients, the down pass, the bin
// sums and their decryption towards the class holder, its choice and the
// winners' splits. Each message goes on its own sub-channel of the step.

// levelRun is one party's state within one level step.
type levelRun struct {
	s    *session
	step job.Step
	a    levelArgs
	key  int              // the levels grown before this one
	kids [][]ComboSummary // by own table: its children's up messages
	// The class holder's groups and its children's summaries as it took them.
	groups []Group
	k      kids
	gv     []Vec
	plain  []BinSums          // by table: bin sums in the clear (the holder's own)
	sealed map[int]SealedBins // own tables' encrypted bin sums
	downs  map[int]*DownSummary
	// layout is the class holder's packing, if a down message to an own
	// table told it (compress.go).
	layout Layout
}

// plainTable reports whether table t's down summaries are in the clear:
// the target table's, and those of the class holder's tables that hang
// below it through its own tables only.
func (s *session) plainTable(t int) bool {
	for t != 0 {
		if s.g.Tables[t].Party != s.g.Tables[0].Party {
			return false
		}
		t = s.g.Index(s.g.Edges[s.g.Tables[t].Parent].Parent)
	}
	return true
}

// level runs one level step, the level after key grown levels.
func (s *session) level(ctx context.Context, step job.Step, a levelArgs, key int) (levelOutput, error) {
	if err := s.prepareLevel(ctx); err != nil {
		return levelOutput{}, err
	}
	s.rewind(key)
	r := &levelRun{s: s, step: step, a: a, key: key, plain: make([]BinSums, len(s.g.Tables)),
		sealed: map[int]SealedBins{}, downs: map[int]*DownSummary{}}
	if err := r.up(ctx); err != nil {
		return levelOutput{}, err
	}
	if s.isHolder() {
		closed, err := r.gradients(ctx)
		if err != nil || closed {
			return levelOutput{Holder: true, Closed: closed}, err
		}
	} else if a.Depth >= s.prm.MaxDepth {
		return levelOutput{}, nil // the level closes the tree: no sums flow
	}
	if err := r.sums(ctx); err != nil {
		return levelOutput{}, err
	}
	if !s.isHolder() {
		return levelOutput{}, r.applySplits(ctx)
	}
	return r.choose(ctx)
}

// up runs the level's up pass (upPass on sub-channels up/EDGE).
func (r *levelRun) up(ctx context.Context) error {
	kids, err := r.s.upPass(ctx, r.step, "up", r.s.locals, r.s.shared)
	r.kids = kids
	return err
}

// upPass runs the up pass over the party's tables (locals, by table) and
// each edge's shared values, children first: each table's summary goes to
// its parent's party on sub-channel PREFIX/EDGE. By own table, it returns
// the children's summaries.
func (s *session) upPass(ctx context.Context, step job.Step, prefix string, locals []*Local, shared [][]string) ([][]ComboSummary, error) {
	kids := make([][]ComboSummary, len(s.g.Tables))
	mine := map[int]ComboSummary{} // by edge: own tables' up messages
	for _, i := range slices.Backward(s.own) {
		for _, e := range s.g.Tables[i].Children {
			cs, ok := mine[e]
			if !s.owns(e + 1) {
				m, err := s.receive(ctx, step.Sub(fmt.Sprintf("%s/%d", prefix, e)), s.g.Tables[e+1].Party, TypeCombos)
				if err != nil {
					return nil, err
				}
				if err := wire.Unmarshal(m, &cs); err != nil || cs.Edge != e {
					return nil, fmt.Errorf("%w: the combo summary on edge %s", ErrWire, s.g.EdgeName(e))
				}
				if err := s.withinIntersection(shared[e], e, cs.Values); err != nil {
					return nil, err
				}
			} else if !ok {
				return nil, fmt.Errorf("boost: no combo summary of own table on edge %s", s.g.EdgeName(e))
			}
			kids[i] = append(kids[i], cs)
		}
		if i == 0 {
			continue
		}
		pe := s.g.Tables[i].Parent
		cs, err := locals[i].Up(kids[i], shared[pe])
		if err != nil {
			return nil, err
		}
		parent := s.g.Tables[s.g.Index(s.g.Edges[pe].Parent)].Party
		if parent == s.p.Self() {
			mine[pe] = cs
			continue
		}
		if err := s.send(ctx, step.Sub(fmt.Sprintf("%s/%d", prefix, pe)), parent, TypeCombos, &cs, wire.DiscloseSplitSummary); err != nil {
			return nil, err
		}
	}
	return kids, nil
}

// gradients is the class holder's: its groups and their gradient and
// hessian sums; closed when the level closes the tree.
func (r *levelRun) gradients(ctx context.Context) (bool, error) {
	s := r.s
	var err error
	if r.groups, r.k, err = s.locals[0].Groups(r.kids[0]); err != nil {
		return false, err
	}
	if s.backend != BackendLattice {
		if err := s.holderCrypto(ctx, r.groups); err != nil {
			return false, err
		}
	}
	if r.gv, err = s.holder.Level(r.groups, s.locals[0].Labels()); err != nil {
		return false, err
	}
	if r.gv != nil && s.backend == BackendLattice {
		if err := checkLatticeRange(s.lkeys.PublicKey, r.groups, r.gv); err != nil {
			return false, err
		}
	}
	return r.gv == nil, nil
}

// sums runs the down pass and the bin sums' decryption towards the class
// holder on the job's backend.
func (r *levelRun) sums(ctx context.Context) error {
	if r.s.backend == BackendLattice {
		return r.latticeSums(ctx)
	}
	if err := r.down(ctx); err != nil {
		return err
	}
	return r.decrypt(ctx)
}

// down runs the down pass over the party's tables, parents first: the
// class holder's sums are sealed where they leave it, each table adds what
// reaches it per bin, and passes sums on to its children on sub-channel
// down/EDGE.
func (r *levelRun) down(ctx context.Context) error {
	s := r.s
	pk := &s.keys.Public().PublicKey
	for _, i := range s.own {
		var out []DownSummary
		if i == 0 {
			out, r.plain[0] = s.locals[0].RootDown(r.groups, r.k, r.gv)
		} else {
			pe := s.g.Tables[i].Parent
			in := r.downs[pe]
			if in == nil {
				from := s.g.Tables[s.g.Index(s.g.Edges[pe].Parent)].Party
				b, err := s.receive(ctx, r.step.Sub(fmt.Sprintf("down/%d", pe)), from, TypeGradients)
				if err != nil {
					return err
				}
				var w wireDown
				if err := wire.Unmarshal(b, &w); err != nil {
					return fmt.Errorf("%w: the gradient sums on edge %s: %w", ErrWire, s.g.EdgeName(pe), err)
				}
				ds, err := w.decode(pk, pe)
				if err != nil {
					return err
				}
				if err := s.withinIntersection(s.shared[pe], pe, ds.Values); err != nil {
					return err
				}
				in = &ds
			}
			if in.Layout.SlotBits != 0 {
				r.layout = in.Layout
			}
			var ring Ring = PaillierRing{PK: pk}
			if s.plainTable(i) {
				ring = PlainRing{}
			}
			var bins SealedBins
			var err error
			if out, bins, err = s.locals[i].Down(ring, *in, r.kids[i]); err != nil {
				return err
			}
			if s.plainTable(i) {
				r.plain[i], _ = Open(bins, OpenPlain)
			} else {
				r.sealed[i] = bins
			}
		}
		if err := r.route(ctx, i, out); err != nil {
			return err
		}
	}
	return nil
}

// route keeps table i's down summaries for the party's own children and
// sends the others, sealed, to their parties.
func (r *levelRun) route(ctx context.Context, i int, out []DownSummary) error {
	s := r.s
	for j, e := range s.g.Tables[i].Children {
		if s.owns(e + 1) {
			r.downs[e] = &out[j]
			continue
		}
		ds := out[j]
		if s.plainTable(i) {
			if err := s.sealer.seal(&ds, r.a.Depth); err != nil {
				return err
			}
		}
		w, err := encodeDown(&s.keys.Public().PublicKey, ds)
		if err != nil {
			return err
		}
		form := wire.DiscloseCiphertext
		if w.reuses() {
			form = wire.DiscloseSplitSummary // it names its entries' nodes
		}
		if err := s.send(ctx, r.step.Sub(fmt.Sprintf("down/%d", e)), s.g.Tables[e+1].Party, TypeGradients, w, form); err != nil {
			return err
		}
	}
	return nil
}

// splitMsg is the class holder's choice for one party's tables: the
// splits to make, in the order the class holder chose them.
type splitMsg struct {
	Splits []Decision `msgpack:"splits"`
}

// choose is the class holder's: each open node's split from every table's
// bin sums, sent to the winners' parties (every party holding a table
// gets one message, empty when none of its tables won).
func (r *levelRun) choose(ctx context.Context) (levelOutput, error) {
	s := r.s
	open := s.holder.Open()
	decisions := s.holder.Choose(r.plain)
	out := levelOutput{Holder: true, Winners: make([]int, open), Closed: len(decisions) == 0}
	for i := range out.Winners {
		out.Winners[i] = -1
	}
	ords := make([]int, len(decisions))
	per := map[string]*splitMsg{}
	for _, q := range s.g.PartiesBut(s.p.Self()) {
		per[q] = &splitMsg{}
	}
	for j, d := range decisions {
		out.Winners[d.Node] = d.Table
		ords[j] = s.made[d.Table]
		s.made[d.Table]++
		if s.owns(d.Table) {
			s.locals[d.Table].Split(d.Feature, d.Bin)
			continue
		}
		m := per[s.g.Tables[d.Table].Party]
		m.Splits = append(m.Splits, Decision{Table: d.Table, Feature: d.Feature, Bin: d.Bin})
	}
	for _, q := range s.g.PartiesBut(s.p.Self()) {
		if err := s.send(ctx, r.step.Sub("split"), q, TypeSplit, per[q], wire.DiscloseScore); err != nil {
			return levelOutput{}, err
		}
	}
	if len(decisions) > 0 {
		s.holder.Apply(decisions, ords)
	} else {
		out.Winners = nil
	}
	s.keepSiblings(r.key, decisions, r.plain)
	return out, nil
}

// applySplits makes the splits the class holder chose on the party's
// tables.
func (r *levelRun) applySplits(ctx context.Context) error {
	s := r.s
	if len(s.own) == 0 {
		return nil
	}
	b, err := s.receive(ctx, r.step.Sub("split"), s.g.Tables[0].Party, TypeSplit)
	if err != nil {
		return err
	}
	var m splitMsg
	if err := wire.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%w: the split choice: %w", ErrWire, err)
	}
	for _, d := range m.Splits {
		if d.Table < 0 || d.Table >= len(s.g.Tables) || !s.owns(d.Table) {
			return fmt.Errorf("%w: the split choice names a table party %s does not hold", ErrWire, s.p.Self())
		}
		l := s.locals[d.Table]
		if d.Feature < 0 || d.Feature >= len(l.feats) || d.Bin < 0 || d.Bin >= len(l.feats[d.Feature].Cuts) {
			return fmt.Errorf("%w: the split choice names no cut of table %q", ErrWire, l.name)
		}
		l.Split(d.Feature, d.Bin)
	}
	return nil
}

// errNoMessage and errNotDelivered mark a message a party waited for in
// vain or could not deliver (a peer silent, restarted, or superseded): a
// level that failed only so runs again (curable).
var (
	errNoMessage    = errors.New("boost: no message")
	errNotDelivered = errors.New("boost: message not delivered")
)

// send sends v, encoded, to party to.
func (s *session) send(ctx context.Context, step job.Step, to, typ string, v any, d wire.Disclosure) error {
	return s.sendSized(ctx, step, to, typ, v, 0, d)
}

// sendSized is send with the body's encoding started in a buffer of size
// bytes (wire.MarshalSized): the lattice path's parts.
func (s *session) sendSized(ctx context.Context, step job.Step, to, typ string, v any, size int, d wire.Disclosure) error {
	b, err := wire.MarshalSized(v, size)
	if err != nil {
		return err
	}
	return s.sendBody(ctx, step, to, typ, b, d)
}

// sendBody sends an encoded body b of type typ to party to.
func (s *session) sendBody(ctx context.Context, step job.Step, to, typ string, b []byte, d wire.Disclosure) error {
	if err := s.p.Send(ctx, to, step.Message(s.p.Self(), typ, b), d); err != nil {
		return fmt.Errorf("%w: %s to %s: %w", errNotDelivered, typ, to, err)
	}
	return nil
}

// receive receives the body of a message of type typ from party from.
func (s *session) receive(ctx context.Context, step job.Step, from, typ string) ([]byte, error) {
	m, err := s.p.Receive(ctx, from, step.Key(typ))
	if err != nil {
		return nil, fmt.Errorf("%w: %s from %s: %w", errNoMessage, typ, from, err)
	}
	return m.Body, nil
}
