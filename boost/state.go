package boost

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// state is a party's training state at the start of a level: after Key
// levels were grown (levels the coordinator retried do not count), or
// after the private set intersection (Key 0). A party keeps it in its
// data dir after every psi and level step, so that a session opened after
// its node restarted goes on from it: the combo summaries, the down
// messages and the split choices it received are not in the log, and
// re-deriving them would need every other party, so the state is kept
// rather than rebuilt (as sjc keeps its own, sjc/state.go).
type state struct {
	Key    int        `msgpack:"key"`
	Shared [][]string `msgpack:"shared"` // by edge; nil for edges of other parties
	Made   []int      `msgpack:"made"`   // the class holder's: splits per table so far
	// Splits are the own tables' splits so far (feature and bin, by
	// ordinal), by table: the signatures are replayed from them.
	Splits [][][2]int `msgpack:"splits"`
	// First is, by own table, the tree's first-level down message it was
	// sent (wireDown, encoded), which the tree's deeper levels re-use
	// (reuse.go); nil where the table holds none.
	First  [][]byte     `msgpack:"first"`
	Holder *holderState `msgpack:"holder"`
}

// holderState is the class holder's booster: the base score, the
// finished trees, the tree being grown and its open nodes (indices into
// Cur). Each tree is its nodes in pre-order, children by index.
type holderState struct {
	Base  float64     `msgpack:"base"`
	Trees [][]nodeRec `msgpack:"trees"`
	Cur   []nodeRec   `msgpack:"cur"`
	Open  []int       `msgpack:"open"`
}

// nodeRec is one node of a kept tree; Left and Right are -1 at a leaf or
// an open node.
type nodeRec struct {
	Depth  int       `msgpack:"depth"`
	Split  *splitRef `msgpack:"split"`
	Left   int       `msgpack:"left"`
	Right  int       `msgpack:"right"`
	Weight float64   `msgpack:"weight"`
	G      int64     `msgpack:"g"`
	H      int64     `msgpack:"h"`
}

// flatten lists the nodes of the tree at n in pre-order, with each
// node's index.
func flatten(n *node) ([]nodeRec, map[*node]int) {
	var out []nodeRec
	at := map[*node]int{}
	var walk func(n *node) int
	walk = func(n *node) int {
		if n == nil {
			return -1
		}
		i := len(out)
		at[n] = i
		out = append(out, nodeRec{Depth: n.depth, Split: n.split, Weight: n.weight, G: n.g, H: n.h})
		l := walk(n.left)
		r := walk(n.right)
		out[i].Left, out[i].Right = l, r
		return i
	}
	walk(n)
	return out, at
}

// unflatten rebuilds a tree from its pre-order nodes: its nodes by index
// (the root first), or an error for children that do not come after
// their parent.
func unflatten(recs []nodeRec) ([]*node, error) {
	nodes := make([]*node, len(recs))
	for i := range recs {
		nodes[i] = &node{depth: recs[i].Depth, split: recs[i].Split, weight: recs[i].Weight, g: recs[i].G, h: recs[i].H}
	}
	for i := len(recs) - 1; i >= 0; i-- {
		for _, c := range []int{recs[i].Left, recs[i].Right} {
			if c != -1 && (c <= i || c >= len(recs)) {
				return nil, fmt.Errorf("boost: a kept tree's node %d has no child %d", i, c)
			}
		}
		if recs[i].Left >= 0 {
			nodes[i].left = nodes[recs[i].Left]
		}
		if recs[i].Right >= 0 {
			nodes[i].right = nodes[recs[i].Right]
		}
	}
	return nodes, nil
}

// keep returns the booster's state.
func (h *Holder) keep() *holderState {
	hs := &holderState{Base: h.base}
	for _, t := range h.trees {
		recs, _ := flatten(t)
		hs.Trees = append(hs.Trees, recs)
	}
	if h.cur != nil {
		recs, at := flatten(h.cur)
		hs.Cur = recs
		for _, n := range h.open {
			hs.Open = append(hs.Open, at[n])
		}
	}
	return hs
}

// restoreHolder is the booster of a kept state.
func restoreHolder(p Params, hs *holderState) (*Holder, error) {
	h := &Holder{p: p, base: hs.Base}
	for _, recs := range hs.Trees {
		nodes, err := unflatten(recs)
		if err != nil || len(nodes) == 0 {
			return nil, fmt.Errorf("boost: a kept tree is malformed")
		}
		h.trees = append(h.trees, nodes[0])
	}
	if len(hs.Cur) == 0 {
		return h, nil
	}
	nodes, err := unflatten(hs.Cur)
	if err != nil {
		return nil, err
	}
	h.cur = nodes[0]
	for _, i := range hs.Open {
		if i < 0 || i >= len(nodes) {
			return nil, fmt.Errorf("boost: a kept open node is not in its tree")
		}
		h.open = append(h.open, nodes[i])
	}
	return h, nil
}

// stateSecret is where a session keeps its state: two slots, written in
// turn, so that a step's write leaves the state at its start in the other
// slot (a level the coordinator retries goes back to it).
func stateSecret(id string, slot int) string { return fmt.Sprintf("jobs/%s/boost-state-%d", id, slot) }

// keepState writes the party's state as the start of the level after key
// grown levels, into the slot that does not hold the one before.
func (s *session) keepState(key int) error {
	st := &state{Key: key, Shared: s.shared, Made: s.made, Splits: make([][][2]int, len(s.g.Tables)), First: make([][]byte, len(s.g.Tables))}
	for _, i := range s.own {
		l := s.locals[i]
		st.Splits[i] = l.made
		if l.first != nil && s.keys != nil {
			w, err := encodeDown(&s.keys.Public().PublicKey, *l.first)
			if err != nil {
				return err
			}
			if st.First[i], err = wire.Marshal(w); err != nil {
				return fmt.Errorf("boost: encode the kept state: %w", err)
			}
		}
	}
	if s.holder != nil {
		st.Holder = s.holder.keep()
	}
	b, err := wire.Marshal(st)
	if err != nil {
		return fmt.Errorf("boost: encode the kept state: %w", err)
	}
	slot := 0
	if s.slots[0] == key-1 {
		slot = 1
	}
	if err := s.p.Secrets().WriteSecret(stateSecret(s.p.JobID(), slot), b); err != nil {
		return fmt.Errorf("party %s: keep the boost training state: %w", s.p.Self(), err)
	}
	s.slots[slot] = key
	return nil
}

// readState reads the kept state of key from either slot; nil when
// neither holds it.
func (s *session) readState(key int) (*state, error) {
	var found *state
	for slot := range s.slots {
		s.slots[slot] = -1
		b, err := s.p.Secrets().ReadSecret(stateSecret(s.p.JobID(), slot))
		if err != nil || len(b) == 0 {
			continue
		}
		var st state
		if err := wire.Unmarshal(b, &st); err != nil {
			// The state holds the party's splits: no decoder's quote of
			// it may leave.
			return nil, &reworded{msg: fmt.Sprintf("its kept boost state for job %s is unreadable", s.p.JobID()), cause: err}
		}
		s.slots[slot] = st.Key
		if st.Key == key {
			found = &st
		}
	}
	return found, nil
}

// resume restores, in a session opened after the party's node restarted,
// the state at the start of the level after key grown levels (ErrResume
// when the party did not keep it).
func (s *session) resume(ctx context.Context, key int) error {
	st, err := s.readState(key)
	if err != nil {
		return err
	}
	if st == nil || len(st.Shared) != len(s.g.Edges) || len(st.Splits) != len(s.g.Tables) || len(st.First) != len(s.g.Tables) ||
		len(st.Made) != len(s.g.Tables) || (!s.isHolder() && st.Holder != nil) {
		return fmt.Errorf("%w: party %s has no kept state for level %d", ErrResume, s.p.Self(), key)
	}
	if err := s.prepareLevel(ctx); err != nil {
		return err
	}
	for _, i := range s.own {
		if err := s.restoreTable(i, st.Splits[i], st.First[i]); err != nil {
			return err
		}
	}
	if st.Holder != nil {
		if s.holder, err = restoreHolder(s.prm, st.Holder); err != nil {
			return fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
	}
	s.shared, s.made, s.stale = st.Shared, st.Made, false
	return nil
}

// restoreTable replays own table i's kept splits and decodes the tree's
// first-level down message it kept.
func (s *session) restoreTable(i int, splits [][2]int, first []byte) error {
	l := s.locals[i]
	l.truncate(0)
	for _, m := range splits {
		if m[0] < 0 || m[0] >= len(l.feats) || m[1] < 0 || m[1] >= len(l.feats[m[0]].Cuts) {
			return fmt.Errorf("%w: party %s: a kept split names no cut of table %q", ErrResume, s.p.Self(), l.name)
		}
		l.Split(m[0], m[1])
	}
	l.first = nil
	if first == nil {
		return nil
	}
	var w wireDown
	if err := wire.Unmarshal(first, &w); err != nil {
		return &reworded{msg: fmt.Sprintf("its kept boost state for job %s is unreadable", s.p.JobID()), cause: err}
	}
	ds, err := w.decode(&s.keys.Public().PublicKey, s.g.Tables[i].Parent)
	if err != nil {
		return fmt.Errorf("party %s: the kept first-level sums of table %q: %w", s.p.Self(), l.name, err)
	}
	l.first = &ds
	return nil
}

// grown is the number of levels a history grew (retried ones excluded).
func grown(h []*job.Record) (int, error) {
	lp, err := planOf(h)
	return lp.Grown, err
}
