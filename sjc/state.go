package sjc

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// state is a party's training state after a committed step (Key names it,
// "phase/round"): the shared join values of its edges (from PSI), its
// tables' Parts at every node of the last level made, and the predicates
// it won. A party keeps it in its data dir after every step that changes
// it: the summaries it received are not in the log, and rebuilding them
// would need every neighbour, so the state is kept rather than derived.
type state struct {
	Key    string      `msgpack:"key"`
	Shared [][]string  `msgpack:"shared"` // by edge; nil for edges of other parties
	Nodes  []nodeState `msgpack:"nodes"`
	Won    []wonSplit  `msgpack:"won"`
	// Spill names the file (in the job's spill dir) holding the Parts of
	// the nodes that did not fit the memory budget (budget.go).
	Spill string `msgpack:"spill,omitempty"`
	// partial: the session released some of the Parts it held (budget.go);
	// the kept copy is whole.
	partial bool
}

// nodeState is the party's tables' Parts at one node: held (Parts), or,
// when Spilled, the record at Off of Len bytes in the state's spill file,
// with the node's class counts beside it so that checking them against
// the log reads nothing back.
type nodeState struct {
	ID      int32    `msgpack:"id"`
	Parts   []Part   `msgpack:"parts"` // by graph index; empty for other parties' tables
	Spilled bool     `msgpack:"spilled,omitempty"`
	Off     int64    `msgpack:"off,omitempty"`
	Len     int64    `msgpack:"len,omitempty"`
	Counts  []uint64 `msgpack:"counts,omitempty"`
}

// wonSplit is one predicate the party won.
type wonSplit struct {
	Node  int32      `msgpack:"node"`
	Split tree.Split `msgpack:"split"`
}

// stateSecret is where a session keeps its training state between steps:
// two slots, 0 and 1, written in turn, so that each step writes only its
// own state and the one before it stays in the other slot.
func stateSecret(id string, slot int) string { return fmt.Sprintf("jobs/%s/sjc-state-%d", id, slot) }

// readStates reads the states the party kept for this job. Under a
// memory budget it only notes what the slots hold: base reads a state
// back when a step needs it.
func (s *session) readStates() error {
	for slot := range s.slots {
		st, err := s.readSlot(slot)
		if err != nil {
			return err
		}
		if st == nil {
			continue
		}
		s.slots[slot], s.spills[slot] = st.Key, st.Spill
		if s.budget == 0 {
			s.states = append(s.states, st)
		}
	}
	return nil
}

// readSlot reads the state kept in a slot; nil when there is none.
func (s *session) readSlot(slot int) (*state, error) {
	b, err := s.p.Secrets().ReadSecret(stateSecret(s.p.JobID(), slot))
	if err != nil || len(b) == 0 {
		return nil, nil
	}
	var st state
	if err := wire.Unmarshal(b, &st); err != nil {
		// The state holds the party's predicates: no decoder's quote
		// of it may leave.
		return nil, &reworded{msg: fmt.Sprintf("its kept sjc state for job %s is unreadable", s.p.JobID()), cause: err}
	}
	return &st, nil
}

// reload reads the state of key back from its slot: one the session
// does not hold (under a memory budget) or released part of.
func (s *session) reload(key string) (*state, error) {
	for slot, k := range s.slots {
		if k != key {
			continue
		}
		st, err := s.readSlot(slot)
		if err != nil || st == nil || st.Key != key {
			return nil, err
		}
		s.states = slices.DeleteFunc(s.states, func(o *state) bool { return o.Key == key })
		s.states = append(s.states, st)
		s.held = 0
		for _, o := range s.states {
			s.held += heldBytes(o)
		}
		return st, nil
	}
	return nil, nil
}

// base returns the state after the last committed step that changed it.
func (s *session) base(gr *growth) (*state, error) {
	for _, st := range s.states {
		if st.Key == gr.base && !st.partial {
			return st, nil
		}
	}
	if st, err := s.reload(gr.base); st != nil || err != nil {
		return st, err
	}
	return nil, fmt.Errorf("sjc: party %s has no training state for step %s (its kept state is lost)", s.p.Self(), gr.base)
}

// parts returns the Parts the state holds at node id, checked against the
// party's tables.
func (s *session) parts(st *state, id int32) ([]Part, error) {
	k := slices.IndexFunc(st.Nodes, func(n nodeState) bool { return n.ID == id })
	if k < 0 {
		return nil, fmt.Errorf("sjc: party %s has no state for tree node %d", s.p.Self(), id)
	}
	parts, err := s.heldOrSpilled(st, st.Nodes[k])
	if err != nil {
		return nil, err
	}
	if len(parts) != len(s.g.Tables) {
		return nil, fmt.Errorf("sjc: party %s: state of tree node %d is malformed", s.p.Self(), id)
	}
	for _, t := range s.own {
		if err := s.locals[t].checkPart(parts[t]); err != nil {
			return nil, fmt.Errorf("party %s: state of tree node %d: %w", s.p.Self(), id, err)
		}
	}
	return parts, nil
}

// keep records next as the state after its step, beside base, in memory
// and in the party's data dir: in the state slot base is not in.
func (s *session) keep(base, next *state) error {
	if err := s.closeSpill(); err != nil {
		return err
	}
	s.states = []*state{next}
	if base != nil && base.Key != next.Key && s.budget == 0 {
		s.states = append(s.states, base)
	}
	s.held = heldBytes(next)
	slot := 0
	if base != nil && s.slots[0] == base.Key {
		slot = 1
	}
	b, err := wire.Marshal(next)
	if err != nil {
		return fmt.Errorf("sjc: encode the training state: %w", err)
	}
	if err := s.p.Secrets().WriteSecret(stateSecret(s.p.JobID(), slot), b); err != nil {
		return fmt.Errorf("party %s: keep the sjc training state: %w", s.p.Self(), err)
	}
	old := s.spills[slot]
	s.slots[slot], s.spills[slot] = next.Key, next.Spill
	if old != next.Spill && (base == nil || old != base.Spill) {
		s.removeSpill(old)
	}
	return nil
}

// dropStates empties the kept states once the model is kept.
func (s *session) dropStates() error {
	for slot := range s.slots {
		if err := s.p.Secrets().WriteSecret(stateSecret(s.p.JobID(), slot), nil); err != nil {
			return err
		}
		s.slots[slot] = ""
		s.removeSpill(s.spills[slot])
		s.spills[slot] = ""
	}
	s.states, s.held = nil, 0
	s.removeSpillDir()
	return nil
}
