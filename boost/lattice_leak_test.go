package boost_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// latticeDownMsg, latticeBinsMsg and latticeShareMsg mirror the lattice
// path's wire forms, to read the captured messages.
type latticeDownMsg struct {
	Edge   int        `msgpack:"edge"`
	Values []string   `msgpack:"values"`
	Combos [][]string `msgpack:"combos"`
	Nodes  []int      `msgpack:"nodes"`
	C      [][]byte   `msgpack:"c"`
}

type latticeBinsMsg struct {
	Edge  int      `msgpack:"edge"`
	Nodes []int    `msgpack:"nodes"`
	C     [][]byte `msgpack:"c"`
}

type latticeShareMsg struct {
	Edge int      `msgpack:"edge"`
	S    [][]byte `msgpack:"s"`
}

// decryptors are the members of the lattice decryption plan's quorums
// over c's parties, as the job derives them (the members' points follow
// their names, whatever the key).
func decryptors(t *testing.T, c *joinCase) []string {
	t.Helper()
	parties := c.spec.PartyNames()
	pk := dealtLattice(t, parties)[parties[0]].PublicKey
	var points []int
	for _, q := range parties {
		points = append(points, pk.Point(q))
	}
	slices.Sort(points)
	plan, err := lattice.PlanSingle(pk, points)
	if len(points) > pk.Quorum {
		plan, err = lattice.PlanVerified(pk, points)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range points {
		if len(plan.QuorumsOf(p)) > 0 {
			out = append(out, pk.Members[p-1])
		}
	}
	return out
}

// latticeProfile is messageProfile for the lattice path's messages: the
// class holder's encrypted down message goes to the edge's child party
// only and names only the edge's shared values and split outcomes; the
// bin sums go from their table's party to others only; decryption shares
// go to the class holder only. The ciphertexts and shares are left out
// of the bytes where text may appear.
func latticeProfile(t *testing.T, c *joinCase, s *secrets, sm sent) (wire.Disclosure, []byte) {
	t.Helper()
	m := sm.Message
	holder := c.g.Tables[0].Party
	e := channelEdge(t, c, m.Channel)
	child := c.g.Tables[c.g.Index(c.g.Edges[e].Child)].Party
	switch m.Type {
	case boost.TypeLatticeDown:
		var w latticeDownMsg
		if err := wire.Unmarshal(m.Body, &w); err != nil {
			t.Fatal(err)
		}
		if w.Edge != e || sm.From != holder || sm.To != child {
			t.Errorf("lattice gradient sums of edge %d from %s to %s", w.Edge, sm.From, sm.To)
		}
		s.on(m.Channel).subset(t, "lattice gradient sums", w.Values, e)
		for _, cs := range w.Combos {
			for _, cc := range cs {
				if strings.Trim(cc, "01|") != "" {
					t.Errorf("a combo %q carries more than split outcomes", cc)
				}
			}
		}
		w.C = nil
		texts, _ := wire.Marshal(&w)
		return wire.DiscloseCiphertext, texts
	case boost.TypeLatticeBins:
		var w latticeBinsMsg
		if err := wire.Unmarshal(m.Body, &w); err != nil {
			t.Fatal(err)
		}
		if w.Edge != e || sm.From != child || sm.To == child || (sm.To != holder && !slices.Contains(decryptors(t, c), sm.To)) {
			t.Errorf("lattice bin sums of edge %d from %s to %s", w.Edge, sm.From, sm.To)
		}
		w.C = nil
		texts, _ := wire.Marshal(&w)
		return wire.DiscloseCiphertext, texts
	default: // boost.TypeLatticeShare
		var w latticeShareMsg
		if err := wire.Unmarshal(m.Body, &w); err != nil || w.Edge != e {
			t.Errorf("a lattice decryption share of edge %d: %v", w.Edge, err)
		}
		if sm.To != holder {
			t.Errorf("a lattice decryption share from %s to %s, not the class holder", sm.From, sm.To)
		}
		return wire.DiscloseDecryptionShare, nil
	}
}
