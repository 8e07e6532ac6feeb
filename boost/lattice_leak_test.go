package boost_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// latticeMsg mirrors the lattice path's wire form, to read the captured
// messages.
type latticeMsg struct {
	Edge   int        `msgpack:"edge"`
	Part   int        `msgpack:"part"`
	Parts  int        `msgpack:"parts"`
	Values []string   `msgpack:"values"`
	Combos [][]string `msgpack:"combos"`
	Nodes  []int      `msgpack:"nodes"`
	C      [][]byte   `msgpack:"c"`
}

// latticeEdge is the edge of a lattice message's channel (ldown/EDGE/PART
// and the like, after any prefix).
func latticeEdge(t *testing.T, c *joinCase, ch string) int {
	t.Helper()
	parts := strings.Split(ch, "/")
	if len(parts) < 3 {
		t.Fatalf("lattice message on channel %q", ch)
	}
	return channelEdge(t, c, strings.Join(parts[:len(parts)-1], "/"))
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
	e := latticeEdge(t, c, m.Channel)
	child := c.g.Tables[c.g.Index(c.g.Edges[e].Child)].Party
	var w latticeMsg
	if err := wire.Unmarshal(m.Body, &w); err != nil || w.Edge != e || w.Part < 0 || w.Part >= w.Parts {
		t.Fatalf("a %s message of edge %d: part %d of %d: %v", m.Type, w.Edge, w.Part, w.Parts, err)
	}
	if w.Part > 0 && (w.Values != nil || w.Combos != nil || w.Nodes != nil) {
		t.Errorf("part %d of a %s message carries part 0's head", w.Part, m.Type)
	}
	switch m.Type {
	case boost.TypeLatticeDown:
		if sm.From != holder || sm.To != child {
			t.Errorf("lattice gradient sums of edge %d from %s to %s", e, sm.From, sm.To)
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
		if sm.From != child || sm.To == child || (sm.To != holder && !slices.Contains(decryptors(t, c), sm.To)) || w.Values != nil || w.Combos != nil {
			t.Errorf("lattice bin sums of edge %d from %s to %s", e, sm.From, sm.To)
		}
		w.C = nil
		texts, _ := wire.Marshal(&w)
		return wire.DiscloseCiphertext, texts
	default: // boost.TypeLatticeShare
		if sm.To != holder || !slices.Contains(decryptors(t, c), sm.From) || w.Values != nil || w.Combos != nil || w.Nodes != nil {
			t.Errorf("a lattice decryption share from %s to %s, not from a decryptor to the class holder", sm.From, sm.To)
		}
		return wire.DiscloseDecryptionShare, nil
	}
}
