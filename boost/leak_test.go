package boost_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// wireDown and wireBins mirror the job's wire forms of gradient and bin
// sums, to read the captured messages.
type wireDown struct {
	Edge   int        `msgpack:"edge"`
	Values []string   `msgpack:"values"`
	Combos [][]string `msgpack:"combos"`
	N      [][]uint64 `msgpack:"n"`
	W      int        `msgpack:"w"`
	K      int        `msgpack:"k"`
	C      []byte     `msgpack:"c"`
	First  bool       `msgpack:"first"`
	Width  int        `msgpack:"width"`
	Layout struct {
		SlotBits  int `msgpack:"slot_bits"`
		ValueBits int `msgpack:"value_bits"`
	} `msgpack:"layout"`
	Ref  [][]int `msgpack:"ref"`
	Node [][]int `msgpack:"node"`
}

type wireBins struct {
	Entries []struct {
		Table   int    `msgpack:"table"`
		Feature int    `msgpack:"feature"`
		Bin     int    `msgpack:"bin"`
		N       uint64 `msgpack:"n"`
		W       int    `msgpack:"w"`
		K       int    `msgpack:"k"`
	} `msgpack:"entries"`
	C        []byte `msgpack:"c"`
	SlotBits int    `msgpack:"slot_bits"`
}

func float64Bytes(x float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
}

// secrets of a case: every numeric value (as float64 bytes and as text),
// and each edge's join values held by one side only; the shared ones.
type secrets struct {
	floats [][]byte
	texts  [][]byte
	// floatNeedles and textNeedles find floats and texts (made at the
	// first holding, once they are complete).
	floatNeedles, textNeedles *testkit.Needles
	shared                    [][]string
	only                      [][]string
	// test: the test set's (its join values are checked on the test
	// step's sub-channels, test-psi/EDGE and test-up/EDGE).
	test *secrets
	// layout: the bins the load step commits by announcing party (nil off
	// the lattice path), which every lattice message's head names; cols:
	// by table, its numeric columns' bins, which its lattice bin sums name
	// to the class holder.
	layout map[string]int
	cols   map[string][]int
}

// on is the secrets whose join values a message on channel ch may hold.
func (s *secrets) on(ch string) *secrets {
	if s.test != nil && strings.HasPrefix(ch, "test-") {
		return s.test
	}
	return s
}

func caseSecrets(t *testing.T, c *joinCase, m *boost.Model, released bool) *secrets {
	t.Helper()
	s := &secrets{shared: make([][]string, len(c.g.Edges)), only: make([][]string, len(c.g.Edges))}
	add := func(x float64) {
		s.floats = append(s.floats, float64Bytes(x))
		for _, txt := range []string{strconv.FormatFloat(x, 'f', -1, 64), num(x)} {
			if len(txt) >= 4 { // shorter texts ("9") occur by chance in any encoding
				s.texts = append(s.texts, []byte(txt))
			}
		}
	}
	if c.test != nil {
		s.test = caseSecrets(t, c.test, m, released)
		s.floats, s.texts = append(s.floats, s.test.floats...), append(s.texts, s.test.texts...)
	}
	for _, tb := range c.data {
		for _, col := range tb.ColumnsOfKind(table.Numeric) {
			for _, x := range col.Num {
				add(x)
			}
		}
	}
	if !released {
		var walk func(n *tree.RegNode)
		walk = func(n *tree.RegNode) {
			if n.IsLeaf() {
				s.floats = append(s.floats, float64Bytes(n.Weight))
				return
			}
			add(n.Split.Num)
			walk(n.Left)
			walk(n.Right)
		}
		for _, tr := range m.Trees {
			walk(tr)
		}
	}
	pos := ""
	if p, err := boost.PositiveClass(c.data[c.g.Target()], c.g.Class); err == nil {
		pos = p
	}
	vals := func(name string, e int) []string {
		l, err := boost.NewLocal(c.g, name, c.data[name], 8, boost.LossLogistic, pos)
		if err != nil {
			t.Fatal(err)
		}
		return l.JoinValues(e)
	}
	for e, ed := range c.g.Edges {
		a, b := vals(ed.Parent, e), vals(ed.Child, e)
		for _, v := range a {
			if slices.Contains(b, v) {
				s.shared[e] = append(s.shared[e], v)
			} else {
				s.only[e] = append(s.only[e], v)
			}
		}
		for _, v := range b {
			if !slices.Contains(a, v) {
				s.only[e] = append(s.only[e], v)
			}
		}
	}
	return s
}

// holding names a secret in b: float64 bytes anywhere; texts only where
// text can appear (texts false).
func (s *secrets) holding(b []byte, texts bool) string {
	if s.floatNeedles == nil {
		s.floatNeedles, s.textNeedles = testkit.NewNeedles(s.floats), testkit.NewNeedles(s.texts)
	}
	if f := s.floatNeedles.Find(b); f != nil {
		return fmt.Sprintf("float64 %x", f)
	}
	if !texts {
		return ""
	}
	if x := s.textNeedles.Find(b); x != nil {
		return fmt.Sprintf("value %q", x)
	}
	return ""
}

// checkLeakage checks every captured message, log record and audit ledger
// entry of a run against the package doc's leakage profile.
func checkLeakage(t *testing.T, c *joinCase, m *boost.Model, res map[string]any, out string, capt *capture, released bool) {
	t.Helper()
	checkLeakageOf(t, c, m, out, capt, released, nil, []string{boost.TypeCombos, boost.TypeGradients, boost.TypeBins, boost.TypeDigest, boost.TypeSplit,
		"secureagg/share-request", "secureagg/share", "re-used gradient ciphertexts", "compressed bin sums"})
}

// checkLatticeLeakage is checkLeakage for a run on the lattice path
// (model kept, not released, params.bins bins): its messages instead of
// Paillier's, and the bins its load step commits.
func checkLatticeLeakage(t *testing.T, c *joinCase, m *boost.Model, res map[string]any, out string, capt *capture, bins int, also ...string) {
	t.Helper()
	checkLeakageOf(t, c, m, out, capt, false, layoutBins(t, c, bins), append([]string{boost.TypeCombos, boost.TypeLatticeDown, boost.TypeLatticeBins,
		boost.TypeLatticeShare, boost.TypeSplit}, also...))
}

// What checkLeakageOf counts of the lattice path's re-use (lattice_reuse.go):
// down messages that re-use kept chunks, and those that also encrypt
// entries afresh beside them (the many-to-many entries).
const (
	seenLatticeReused = "re-used lattice gradient sums"
	seenLatticeMixed  = "lattice gradient sums fresh beside re-used"
)

// checkLeakageOf checks every captured message, log record and audit
// ledger entry against the profile (layout: the bins the load step must
// commit, and each table's columns' bins, on the lattice path), and that a
// message of each of types was sent.
func checkLeakageOf(t *testing.T, c *joinCase, m *boost.Model, out string, capt *capture, released bool, layout *layoutWant, types []string) {
	t.Helper()
	s := caseSecrets(t, c, m, released)
	if layout != nil {
		s.layout, s.cols = layout.parties, layout.cols
	}
	seen := map[string]int{}
	slotBits := map[int]bool{}
	capt.mu.Lock()
	defer capt.mu.Unlock()
	for _, sm := range capt.sent {
		m, d := sm.Message, sm.Disclosure
		seen[m.Type]++
		want, texts := messageProfile(t, c, s, sm)
		if m.Type == boost.TypeGradients && want == wire.DiscloseSplitSummary {
			seen["re-used gradient ciphertexts"]++
		}
		if m.Type == boost.TypeLatticeDown && want == wire.DiscloseSplitSummary {
			seen[seenLatticeReused]++
			var w latticeMsg
			if wire.Unmarshal(m.Body, &w) == nil && slices.Contains(w.At, -1) {
				seen[seenLatticeMixed]++
			}
		}
		// Bin sums are compressed only with the slot width of a down
		// message sent before them: the class holder's own packing.
		var down wireDown
		if m.Type == boost.TypeGradients && wire.Unmarshal(m.Body, &down) == nil && down.Layout.SlotBits != 0 {
			slotBits[down.Layout.SlotBits] = true
		}
		var bins wireBins
		if m.Type == boost.TypeBins && wire.Unmarshal(m.Body, &bins) == nil && bins.SlotBits != 0 {
			seen["compressed bin sums"]++
			if !slotBits[bins.SlotBits] {
				t.Errorf("bin sums from %s compressed with a %d-bit slot no down message named", sm.From, bins.SlotBits)
			}
		}
		if d != want {
			t.Errorf("%s from %s to %s sent as %s, want %s", m.Type, sm.From, sm.To, d, want)
		}
		if what := s.holding(m.Body, false); what != "" {
			t.Errorf("%s from %s to %s holds %s", m.Type, sm.From, sm.To, what)
		}
		if what := s.holding(texts, true); what != "" {
			t.Errorf("%s from %s to %s holds %s", m.Type, sm.From, sm.To, what)
		}
		sx := s.on(m.Channel)
		for e, vals := range sx.only {
			for _, v := range vals {
				if texts != nil && bytes.Contains(texts, []byte(v)) && !containsShared(texts, v, sx.shared[e]) {
					t.Errorf("%s from %s to %s holds join value %q held by one side of edge %d", m.Type, sm.From, sm.To, v, e)
				}
			}
		}
	}
	for _, typ := range types {
		if seen[typ] == 0 {
			t.Errorf("no %s message was sent: the test checks nothing of it", typ)
		}
	}
	checkRecords(t, s, capt.records)
	checkLoadRecord(t, s, capt.records)
	checkLedgers(t, c, out)
	t.Logf("%d messages checked (%v), %d log records", len(capt.sent), seen, len(capt.records))
}

// messageProfile checks one captured message's type, sender, receiver
// and join values against the profile, and returns the ledger form it
// must have and the bytes of it where text can appear (nil: none).
func messageProfile(t *testing.T, c *joinCase, s *secrets, sm sent) (wire.Disclosure, []byte) {
	t.Helper()
	m := sm.Message
	holder := c.g.Tables[0].Party
	texts := m.Body
	want := wire.Disclosure("")
	switch m.Type {
	case boost.TypeCombos:
		want = comboProfile(t, c, s, sm)
	case boost.TypeGradients:
		want, texts = gradientProfile(t, c, s, sm)
	case boost.TypeBins:
		want = wire.DiscloseCiphertext
		var w wireBins
		if err := wire.Unmarshal(m.Body, &w); err != nil {
			t.Fatal(err)
		}
		if sm.To != holder {
			t.Errorf("bin sums from %s went to %s, not the class holder", sm.From, sm.To)
		}

		w.C = nil
		texts, _ = wire.Marshal(&w)
	case boost.TypeDigest:
		want = wire.DiscloseControl
		if sm.To == holder || len(m.Body) > 64 {
			t.Errorf("a digest of %d bytes from %s to %s", len(m.Body), sm.From, sm.To)
		}
	case boost.TypeSplit:
		want = wire.DiscloseScore
		if sm.From != holder {
			t.Errorf("a split choice from %s, not the class holder", sm.From)
		}
	case boost.TypeLatticeDown, boost.TypeLatticeBins, boost.TypeLatticeShare:
		want, texts = latticeProfile(t, c, s, sm)
	case "secureagg/share-request":
		want, texts = wire.DiscloseCiphertext, nil
		if len(m.Body) < 16 { // a release: the class holder needs no share
			want = wire.DiscloseControl
		}
		if sm.From != holder {
			t.Errorf("a share request from %s, not the class holder", sm.From)
		}
	case "secureagg/share":
		want, texts = wire.DiscloseDecryptionShare, nil
		if sm.To != holder {
			t.Errorf("a decryption share from %s to %s, not the class holder", sm.From, sm.To)
		}
	case psi.TypeSize, psi.TypeBlinded, psi.TypeDouble, psi.TypeFilter, psi.TypeOTBase, psi.TypeOTChoice, psi.TypeOTKeys, psi.TypeOTMatrix, psi.TypeOTValues,
		psi.TypeVoleBase, psi.TypeVoleChoice, psi.TypeVoleKeys, psi.TypeVoleMatrix, psi.TypeVoleTrees, psi.TypeVoleOKVS, psi.TypeVoleValues,
		psi.TypeUpOffer, psi.TypeUpFetch, psi.TypeUpFilter, psi.TypeUpQuery, psi.TypeUpEval, psi.TypeUpMatch:
		want, texts = wire.DisclosePSIBlinded, nil
		psiProfile(t, c, sm)
	default:
		t.Errorf("message %s from %s to %s is not in the profile", m.Type, sm.From, sm.To)
	}
	return want, texts
}

// tableParty is the party that holds table name of c's join graph.
func tableParty(c *joinCase, name string) string { return c.g.Tables[c.g.Index(name)].Party }

// comboProfile is messageProfile for a combo summary (split-summary): it
// goes up its edge from the child's party to the parent's, names only
// join values of the edge's intersection, and its combos carry nothing
// but split outcomes. Split from messageProfile to keep that one short.
func comboProfile(t *testing.T, c *joinCase, s *secrets, sm sent) wire.Disclosure {
	t.Helper()
	m := sm.Message
	var cs boost.ComboSummary
	if err := wire.Unmarshal(m.Body, &cs); err != nil {
		t.Fatal(err)
	}
	e := channelEdge(t, c, m.Channel)
	if cs.Edge != e || sm.From != tableParty(c, c.g.Edges[e].Child) || sm.To != tableParty(c, c.g.Edges[e].Parent) {
		t.Errorf("combo summary of edge %d from %s to %s", cs.Edge, sm.From, sm.To)
	}
	s.on(m.Channel).subset(t, "a combo summary", cs.Values, e)
	for _, es := range cs.Entries {
		for _, cc := range es {
			if strings.Trim(cc.Combo, "01|") != "" {
				t.Errorf("a combo %q carries more than split outcomes", cc.Combo)
			}
		}
	}
	return wire.DiscloseSplitSummary
}

// gradientProfile is messageProfile for encrypted gradient sums: they go
// down their edge from the parent's party to the child's and name only
// join values of the edge's intersection. It returns the ledger form
// (ciphertext, or split-summary if any entry re-uses the first level's
// ciphertexts) and the message without its ciphertexts, where text can
// appear.
func gradientProfile(t *testing.T, c *joinCase, s *secrets, sm sent) (wire.Disclosure, []byte) {
	t.Helper()
	m := sm.Message
	want := wire.DiscloseCiphertext
	var w wireDown
	if err := wire.Unmarshal(m.Body, &w); err != nil {
		t.Fatal(err)
	}
	e := channelEdge(t, c, m.Channel)
	if w.Edge != e || sm.From != tableParty(c, c.g.Edges[e].Parent) || sm.To != tableParty(c, c.g.Edges[e].Child) {
		t.Errorf("gradient sums of edge %d from %s to %s", w.Edge, sm.From, sm.To)
	}
	s.on(m.Channel).subset(t, "gradient sums", w.Values, e)
	// A down message that re-uses the tree's first-level ciphertexts
	// names its entries' open nodes (reuse.go): split-summary.
	for i, rs := range w.Ref {
		for j, r := range rs {
			if r >= 0 {
				want = wire.DiscloseSplitSummary
				if w.First || w.N[i][j] != 1 || w.Node[i][j] < -1 || 2*w.Node[i][j] >= w.Width {
					t.Errorf("a re-used entry of edge %d: first %v, %d summands, node %d of %d slots", e, w.First, w.N[i][j], w.Node[i][j], w.Width)
				}
			}
		}
	}
	w.C = nil
	texts, _ := wire.Marshal(&w)
	return want, texts
}

// psiProfile checks that a PSI message is on an edge's psi (or test-psi)
// channel and goes between that edge's two parties.
func psiProfile(t *testing.T, c *joinCase, sm sent) {
	t.Helper()
	m := sm.Message
	parts := strings.Split(m.Channel, "/")
	if len(parts) < 2 || (parts[0] != "psi" && parts[0] != "test-psi") {
		t.Fatalf("PSI message on channel %q", m.Channel)
	}
	e := channelEdge(t, c, parts[0]+"/"+parts[1])
	if ps := []string{tableParty(c, c.g.Edges[e].Parent), tableParty(c, c.g.Edges[e].Child)}; !slices.Contains(ps, sm.From) || !slices.Contains(ps, sm.To) {
		t.Errorf("PSI of edge %d between %s and %s", e, sm.From, sm.To)
	}
}

// channelEdge is the edge a sub-channel ends with (up/EDGE, down/EDGE).
func channelEdge(t *testing.T, c *joinCase, ch string) int {
	t.Helper()
	i := strings.LastIndex(ch, "/")
	e, err := strconv.Atoi(ch[i+1:])
	if err != nil || e < 0 || e >= len(c.g.Edges) {
		t.Fatalf("channel %q names no edge", ch)
	}
	return e
}

// subset checks that a message names only join values of edge e's
// intersection.
func (s *secrets) subset(t *testing.T, what string, vals []string, e int) {
	t.Helper()
	for _, v := range vals {
		if !slices.Contains(s.shared[e], v) {
			t.Errorf("%s on edge %d names join value %q, not in the edge's intersection", what, e, v)
		}
	}
}

// containsShared: v occurs in b only inside longer shared values (a1 in a12).
func containsShared(b []byte, v string, shared []string) bool {
	n := bytes.Count(b, []byte(v))
	for _, w := range shared {
		if w != v && strings.Contains(w, v) {
			n -= bytes.Count(b, []byte(w)) * strings.Count(w, v)
		}
	}
	return n <= 0
}

// checkRecords: the log holds no private value and no join value at all.
func checkRecords(t *testing.T, s *secrets, recs map[string]*job.Record) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no log record was captured")
	}
	for _, r := range recs {
		b := slices.Concat(r.Step.Args, r.Decision, []byte(r.Error))
		for p, why := range r.Failed {
			b = append(append(b, p...), why...)
		}
		if what := s.holding(b, true); what != "" {
			t.Errorf("the log's record of %s/%d holds %s", r.Step.Phase, r.Step.Round, what)
		}
		all := append(slices.Clone(s.shared), s.only...)
		if s.test != nil {
			all = append(append(all, s.test.shared...), s.test.only...)
		}
		for _, vals := range all {
			for _, v := range vals {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("the log's record of %s/%d holds join value %q", r.Step.Phase, r.Step.Round, v)
				}
			}
		}
	}
}

// checkLedgers: every party's audit ledger shows only the profile's forms.
func checkLedgers(t *testing.T, c *joinCase, out string) {
	t.Helper()
	allowed := map[wire.Disclosure]bool{wire.DisclosePSIBlinded: true, wire.DiscloseSplitSummary: true, wire.DiscloseCiphertext: true,
		wire.DiscloseDecryptionShare: true, wire.DiscloseScore: true, wire.DisclosePublicResult: true, wire.DiscloseControl: true}
	n := 0
	for _, p := range c.spec.PartyNames() {
		entries, err := audit.ReadFile(filepath.Join(out, "audit", p+".jsonl"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range entries {
			n++
			d := wire.Disclosure(e.Disclosure)
			if !allowed[d] || (d == wire.DisclosePublicResult && e.Type != "job/output") {
				t.Errorf("%s's ledger: %s to %s as %s", p, e.Type, e.Peer, e.Disclosure)
			}
		}
	}
	if n == 0 {
		t.Error("no audit ledger entry")
	}
}

// TestJobErrorTexts: a job that fails on a party's data names the table,
// column or field, over real nodes, and its error text holds none of the
// party's values (labels, numbers, join values).
func TestJobErrorTexts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, loss string
		edit       func(c *joinCase)
		want       string
	}{
		{"three labels", boost.LossLogistic, func(c *joinCase) {
			c.csv["T"] = strings.Replace(c.csv["T"], ",no\n", ",maybe\n", 1)
		}, `column "y"`},
		{"squared loss on labels", boost.LossSquared, func(*joinCase) {}, `column "y"`},
		{"an edge without shared values", boost.LossLogistic, func(c *joinCase) {
			c.csv["B"] = strings.ReplaceAll(c.csv["B"], "\nb", "\nz")
		}, "shares no join value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := starCase(t, 1, 60)
			tc.edit(c)
			p := testParams()
			p.Trees, p.Loss = 1, tc.loss
			err := simRunErr(t, c, p)
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %s", err, tc.want)
			}
			s := caseSecrets(t, c, &boost.Model{}, true)
			if what := s.holding([]byte(err.Error()), true); what != "" {
				t.Errorf("the error text holds %s: %v", what, err)
			}
			for _, v := range []string{"yes", "maybe", `"no"`} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the error text holds the label %s: %v", v, err)
				}
			}
			for e := range s.shared {
				for _, v := range append(slices.Clone(s.shared[e]), s.only[e]...) {
					if strings.Contains(err.Error(), v+" ") || strings.Contains(err.Error(), `"`+v+`"`) {
						t.Errorf("the error text holds join value %q: %v", v, err)
					}
				}
			}
		})
	}
}
