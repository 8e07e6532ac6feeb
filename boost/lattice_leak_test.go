package boost_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/table"
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
	Bins   int        `msgpack:"bins"`
	First  bool       `msgpack:"first"`
	Kept   int        `msgpack:"kept"`
	At     []int      `msgpack:"at"`
	Refs   []int      `msgpack:"refs"`
	Groups int        `msgpack:"groups"`
	Cols   []int      `msgpack:"cols"`
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
	if w.Part > 0 && (w.Values != nil || w.Combos != nil || w.Nodes != nil || w.Bins != 0 || w.First || w.Kept != 0 || w.At != nil || w.Refs != nil ||
		w.Groups != 0 || w.Cols != nil) {
		t.Errorf("part %d of a %s message carries part 0's head", w.Part, m.Type)
	}
	if w.Part == 0 && m.Type != boost.TypeLatticeShare && w.Bins != s.layout[child] {
		t.Errorf("a %s message of edge %d laid out for %d bins, the log commits %d for %s", m.Type, e, w.Bins, s.layout[child], child)
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
		return latticeDownForm(t, c, &w), texts
	case boost.TypeLatticeBins:
		if sm.From != child || sm.To == child || (sm.To != holder && !slices.Contains(decryptors(t, c), sm.To)) || w.Values != nil || w.Combos != nil ||
			w.First || w.Kept != 0 || w.At != nil || w.Refs != nil {
			t.Errorf("lattice bin sums of edge %d from %s to %s", e, sm.From, sm.To)
		}
		w.C = nil
		texts, _ := wire.Marshal(&w)
		return latticeBinsForm(t, c, s, &w, e, sm.To == holder), texts
	default: // boost.TypeLatticeShare
		if sm.To != holder || !slices.Contains(decryptors(t, c), sm.From) || w.Values != nil || w.Combos != nil || w.Nodes != nil || w.Bins != 0 ||
			w.First || w.Kept != 0 || w.At != nil || w.Refs != nil {
			t.Errorf("a lattice decryption share from %s to %s, not from a decryptor to the class holder", sm.From, sm.To)
		}
		return wire.DiscloseDecryptionShare, nil
	}
}

// latticeBinsForm is the form of a lattice bin sums' part: part 0 names
// its groups of columns, and to the class holder alone every numeric
// column's number of bins, exactly the table's (score: how many split
// candidates each column has, declared to the class holder); to a
// decryptor, and every later part, ciphertext.
func latticeBinsForm(t *testing.T, c *joinCase, s *secrets, w *latticeMsg, e int, toHolder bool) wire.Disclosure {
	t.Helper()
	if w.Part > 0 {
		return wire.DiscloseCiphertext
	}
	if w.Groups < 1 {
		t.Errorf("lattice bin sums of edge %d name %d groups of columns", e, w.Groups)
	}
	if !toHolder {
		if w.Cols != nil {
			t.Errorf("lattice bin sums of edge %d name their columns' bins to a decryptor", e)
		}
		return wire.DiscloseCiphertext
	}
	name := c.g.Edges[e].Child
	if !slices.Equal(w.Cols, s.cols[name]) {
		t.Errorf("lattice bin sums of edge %d name columns' bins %v to the class holder, table %s has %v", e, w.Cols, name, s.cols[name])
	}
	return wire.DiscloseScore
}

// latticeDownForm is the form of a lattice down message's part: a part 0
// that marks re-used entries (params.reuse past a tree's first level)
// names their open nodes (split-summary, which params.reuse declares);
// marks only with params.reuse, one place per entry, each fresh (-1),
// in no summed node (-2) or in a kept node with a first-level entry.
func latticeDownForm(t *testing.T, c *joinCase, w *latticeMsg) wire.Disclosure {
	t.Helper()
	if w.At == nil {
		if w.Kept != 0 || w.Refs != nil {
			t.Errorf("a lattice down message with re-use counts but no marks")
		}
		return wire.DiscloseCiphertext
	}
	p, err := boost.ParseParams(c.spec)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cs := range w.Combos {
		n += len(cs)
	}
	if !p.Reuse || w.First || len(w.At) != n || len(w.Refs) != n || w.Kept < 1 {
		t.Errorf("lattice re-use marks (reuse %v, first %v, %d places, %d refs for %d entries, %d kept)", p.Reuse, w.First, len(w.At), len(w.Refs), n, w.Kept)
	}
	for e, y := range w.At {
		if y < -2 || y >= w.Kept || (y >= 0) != (w.Refs[e] >= 0) {
			t.Errorf("lattice re-use mark %d (first-level entry %d) of %d kept nodes", y, w.Refs[e], w.Kept)
		}
	}
	return wire.DiscloseSplitSummary
}

// layoutWant is what a lattice run must show of its layouts: the bins its
// load step commits by announcing party (each party but the class
// holder's that owns a table with a numeric column, with the most bins of
// any such column of its tables) and, by table, its numeric columns' bins.
type layoutWant struct {
	parties map[string]int
	cols    map[string][]int
}

// layoutBins is layoutWant at params.bins bins.
func layoutBins(t *testing.T, c *joinCase, bins int) *layoutWant {
	t.Helper()
	pos, err := boost.PositiveClass(c.data[c.g.Target()], c.g.Class)
	if err != nil {
		t.Fatal(err)
	}
	out := &layoutWant{parties: map[string]int{}, cols: map[string][]int{}}
	for _, tb := range c.g.Tables[1:] {
		if tb.Party == c.g.Tables[0].Party || len(c.data[tb.Name].ColumnsOfKind(table.Numeric)) == 0 {
			continue
		}
		l, err := boost.NewLocal(c.g, tb.Name, c.data[tb.Name], bins, boost.LossLogistic, pos)
		if err != nil {
			t.Fatal(err)
		}
		out.parties[tb.Party] = max(out.parties[tb.Party], l.MaxBins())
		out.cols[tb.Name] = l.ColBins()
	}
	return out
}

// checkLoadRecord: the load step's record commits, on the lattice path,
// exactly the bins each announcing party's widest column has (s.layout),
// and off it none.
func checkLoadRecord(t *testing.T, s *secrets, recs map[string]*job.Record) {
	t.Helper()
	n := 0
	for _, r := range recs {
		if r.Step.Phase != "load" {
			continue
		}
		n++
		var d struct {
			Positive string         `msgpack:"positive"`
			Backend  string         `msgpack:"backend"`
			Bins     map[string]int `msgpack:"bins"`
		}
		if err := wire.Unmarshal(r.Decision, &d); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(d.Bins, s.layout) {
			t.Errorf("the load step committed bins %v, want %v", d.Bins, s.layout)
		}
	}
	if n == 0 {
		t.Error("no load record was captured")
	}
}
