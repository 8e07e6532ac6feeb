package boost

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// latticeMsg is every message of the lattice path (TypeLatticeDown,
// TypeLatticeBins, TypeLatticeShare): a list of ciphertexts or decryption
// shares, one encoding each, split over Parts messages (part k on
// sub-channel BASE/k) so that none passes wire.MaxMessageSize: a lattice
// ciphertext is 393 KB, and a level's down message to a table of
// default_credit's size about 188 of them per open node of a layout. Part
// 0 also carries what the list is of: the down message's join values and
// combos (entry order) and the layouts' node counts; the bin sums' node
// counts; both, the bins their layouts have (the log's for the table's
// party, which the receiver checks). With params.reuse a down message's
// part 0 also says whether the table keeps its chunks (First: the tree's
// first level) or which of its entries re-use the kept ones (Kept, At,
// Refs: lattice_reuse.go). The bin sums' part 0 says how many groups of
// columns each layout's sums are (Groups), and to the class holder alone
// every numeric column's number of bins, from which it finds where each
// column's sums lie (Cols: lattice_pack.go).
type latticeMsg struct {
	Edge   int             `msgpack:"edge"`
	Part   int             `msgpack:"part"`
	Parts  int             `msgpack:"parts"`
	Values wireStrings     `msgpack:"values"` // read into one buffer (combo_wire.go)
	Combos wireStringLists `msgpack:"combos"`
	Nodes  []int           `msgpack:"nodes"`
	Bins   int             `msgpack:"bins"`
	First  bool            `msgpack:"first,omitempty"`
	Kept   int             `msgpack:"kept,omitempty"`
	At     []int           `msgpack:"at,omitempty"`
	Refs   []int           `msgpack:"refs,omitempty"`
	Groups int             `msgpack:"groups,omitempty"`
	Cols   []int           `msgpack:"cols,omitempty"`
	C      wire.Blobs      `msgpack:"c"` // decoded as sub-slices of the message (receiveLattice)
}

// withHead is m with head's part-0 fields.
func (m latticeMsg) withHead(head *latticeMsg) latticeMsg {
	m.Values, m.Combos, m.Nodes, m.Bins = head.Values, head.Combos, head.Nodes, head.Bins
	m.First, m.Kept, m.At, m.Refs = head.First, head.Kept, head.At, head.Refs
	m.Groups, m.Cols = head.Groups, head.Cols
	return m
}

// encodedSize is about the msgpack length of m (each string, byte slice
// and list with a header of at most 5 bytes, each int at most 9), so that
// a part of tens of megabytes is encoded into a buffer made once
// (wire.MarshalSized) rather than one that doubles on the way.
func (m *latticeMsg) encodedSize() int {
	n := 90 + 9*(len(m.Nodes)+len(m.At)+len(m.Refs)+len(m.Cols))
	for _, v := range m.Values {
		n += 5 + len(v)
	}
	for _, cs := range m.Combos {
		n += 5
		for _, c := range cs {
			n += 5 + len(c)
		}
	}
	for _, b := range m.C {
		n += 5 + len(b)
	}
	return n
}

// partBytes bounds the encodings in one part: half of wire.MaxMessageSize,
// leaving room for part 0's join values and combos.
const partBytes = wire.MaxMessageSize / 2

// headForm is the form of a part 0 that carries m's head, whose parts
// are otherwise d: one that names its re-used entries' nodes is
// split-summary; one that names the columns' bins is score (what the
// class holder scores the columns' splits by, declared to it alone).
func (m *latticeMsg) headForm(d wire.Disclosure) wire.Disclosure {
	switch {
	case m.At != nil:
		return wire.DiscloseSplitSummary
	case m.Cols != nil:
		return wire.DiscloseScore
	}
	return d
}

// part is part k of parts of a message with head, and its form (d for
// every part; headForm's for part 0, which carries head's other fields).
func (head *latticeMsg) part(k, parts int, d wire.Disclosure) (latticeMsg, wire.Disclosure) {
	m := latticeMsg{Edge: head.Edge, Part: k, Parts: parts}
	if k == 0 {
		m = m.withHead(head)
		d = m.headForm(d)
	}
	return m, d
}

// sendLattice sends head's list c to party to in parts on sub-channels
// BASE/k of step, head's other fields in part 0 (recorded as headForm).
func (s *session) sendLattice(ctx context.Context, step job.Step, base, to, typ string, head latticeMsg, c [][]byte, d wire.Disclosure) error {
	runs := splitRuns(c, partBytes)
	for k, run := range runs {
		m, dk := head.part(k, len(runs), d)
		m.C = run
		if err := s.sendSized(ctx, step.Sub(fmt.Sprintf("%s/%d", base, k)), to, typ, &m, m.encodedSize(), dk); err != nil {
			return err
		}
	}
	return nil
}

// splitRuns splits c into runs of encodings of at most limit bytes in
// all (an encoding longer than limit alone in its run), in order; no
// encodings make one empty run.
func splitRuns(c [][]byte, limit int) [][][]byte {
	var runs [][][]byte
	size := limit
	for _, b := range c {
		if size+len(b) > limit || len(runs) == 0 {
			runs, size = append(runs, nil), 0
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], b)
		size += len(b)
	}
	if len(runs) == 0 {
		runs = [][][]byte{nil}
	}
	return runs
}

// receiveLattice receives what sendLattice sent on edge e: part 0, whose
// head tells want, the number of encodings the list must have, then the
// other parts; the list has exactly want encodings in at most want parts.
// With take, each part's encodings go to take as they arrive instead of
// into the result's C, so that the list is never held whole.
func (s *session) receiveLattice(ctx context.Context, step job.Step, base, from, typ string, e int, want func(*latticeMsg) (int, error),
	take func([][]byte) error) (*latticeMsg, error) {
	bad := fmt.Errorf("%w: a lattice message from %s on edge %s", ErrWire, from, s.g.EdgeName(e))
	var head latticeMsg
	got := 0 // the encodings received
	for k := 0; k == 0 || k < head.Parts; k++ {
		b, err := s.receive(ctx, step.Sub(fmt.Sprintf("%s/%d", base, k)), from, typ)
		if err != nil {
			return nil, err
		}
		var m latticeMsg // its encodings are sub-slices of b, which nothing changes
		if err := wire.UnmarshalOwned(b, &m); err != nil || m.Edge != e || m.Part != k || (k > 0 && m.Parts != head.Parts) {
			return nil, bad
		}
		if k == 0 {
			c := m.C
			head, m.C = m, nil
			n, err := want(&head)
			if err != nil {
				return nil, err
			}
			if head.Parts < 1 || head.Parts > max(n, 1) || len(c) > n {
				return nil, bad
			}
			head.Part, head.C = n, nil // the count the list must reach
			m.C = c
		}
		if got += len(m.C); got > head.Part {
			return nil, bad
		}
		if take == nil {
			head.C = append(head.C, m.C...)
		} else if err := take(m.C); err != nil {
			return nil, err
		}
	}
	if got != head.Part {
		return nil, bad
	}
	return &head, nil
}
