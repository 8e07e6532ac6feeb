package sjc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// offeredGains decodes every gain the parties offered in a clear-mode
// run's choose outputs.
func offeredGains(t *testing.T, rep *jobtest.Report) []float64 {
	t.Helper()
	var out []float64
	for _, o := range rep.Outputs {
		if o.Step.Phase != "choose" {
			continue
		}
		var offers struct {
			Nodes [][]struct {
				Gains []float64 `msgpack:"gains"`
			} `msgpack:"nodes"`
		}
		if err := wire.Unmarshal(o.Output, &offers); err != nil {
			t.Fatal(err)
		}
		for _, n := range offers.Nodes {
			for _, of := range n {
				for _, g := range of.Gains {
					if g > 1e-9 && !slices.Contains(out, g) { // a zero gain's bytes are too common to search for
						out = append(out, g)
					}
				}
			}
		}
	}
	return out
}

// gainForms are the byte strings a gain could travel as: its float64
// (big- and little-endian, msgpack's and a raw copy's), its shortest text
// (when 8 characters or more),
// and hide_gains' fixed point round(g·2^48) as 8 bytes either way.
func gainForms(g float64) [][]byte {
	bits := math.Float64bits(g)
	fixed := uint64(math.Round(g * (1 << 48)))
	out := [][]byte{
		binary.BigEndian.AppendUint64(nil, bits), binary.LittleEndian.AppendUint64(nil, bits),
		binary.BigEndian.AppendUint64(nil, fixed), binary.LittleEndian.AppendUint64(nil, fixed),
	}
	if text := strconv.FormatFloat(g, 'g', -1, 64); len(text) >= 8 { // a short one may be any figure's
		out = append(out, []byte(text))
	}
	return out
}

// TestJobLeakageHiddenGains checks hide_gains' leakage profile (package
// doc, "Hidden gains") on the three-party chain of TestJobLeakage: it
// first runs the job in the clear to learn every gain the parties offer
// (and to check that the search finds them there: the clear log holds the
// winners' gains), then with hide_gains: the tree is the same, no captured
// message (the coordinator's included) and no log record holds any of
// those gains in any form, no choose output carries a gain, the
// comparison messages go only between parties holding tables, and every
// message is within the profile's disclosures.
func TestJobLeakageHiddenGains(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec, _ := leakCase(t)
	clear, err := runJob(t, ctx, spec, jobtest.Options{Leader: "pb"})
	if err != nil {
		t.Fatal(err)
	}
	gains := offeredGains(t, clear.rep)
	if len(gains) < 5 {
		t.Fatalf("%d distinct gains offered: too few to say anything", len(gains))
	}
	found := 0
	for _, g := range gains {
		if len(clear.rep.LogHolding(gainForms(g)[0])) > 0 {
			found++
		}
	}
	if found == 0 {
		t.Fatal("the clear run's log holds no offered gain: the search below could not fail")
	}

	spec.Params["hide_gains"] = true
	hidden, err := runJob(t, ctx, spec, jobtest.Options{Leader: "pb"})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(clear.tree, hidden.tree); d != "" {
		t.Fatalf("hide_gains grew another tree: %s", d)
	}
	for _, g := range gains {
		for _, b := range gainForms(g) {
			if es := hidden.rep.LogHolding(b); len(es) > 0 {
				t.Errorf("the log holds gain %v (as % x)", g, b)
			}
			if ss := hidden.rep.SentHolding(b); len(ss) > 0 {
				t.Errorf("a message holds gain %v (as % x): %s from %s to %s", g, b, ss[0].Message.Type, ss[0].From, ss[0].To)
			}
		}
	}
	for _, o := range hidden.rep.Outputs {
		if o.Step.Phase != "choose" {
			continue
		}
		var out struct {
			Nodes  [][]any `msgpack:"nodes"`
			Hidden []any   `msgpack:"hidden"`
		}
		if err := wire.Unmarshal(o.Output, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Nodes) > 0 || len(out.Hidden) == 0 {
			t.Errorf("party %s's choose output: %d offers, %d hidden nodes", o.Party, len(out.Nodes), len(out.Hidden))
		}
	}
	checkCountsBlinded(t, hidden.rep)
	checkChooseRecordsNoGain(t, hidden.rep)
	seen := checkHiddenMessages(t, hidden.rep)
	t.Logf("%d offered gains searched in %d messages and %d log entries (the clear log held %d); %v", len(gains), len(hidden.rep.Sent), len(hidden.rep.Log), found, seen)
}

// checkChooseRecordsNoGain checks that no choose round's committed
// decision in a hide_gains run's log carries a winner's gain. Split from
// TestJobLeakageHiddenGains to keep that one short.
func checkChooseRecordsNoGain(t *testing.T, rep *jobtest.Report) {
	t.Helper()
	for _, rec := range rep.Records() {
		if rec.Step.Phase != "choose" {
			continue
		}
		var d struct {
			Retry   bool `msgpack:"retry"`
			Winners []struct {
				Table int     `msgpack:"table"`
				Gain  float64 `msgpack:"gain"`
			} `msgpack:"winners"`
		}
		if err := wire.Unmarshal(rec.Decision, &d); err != nil {
			t.Fatal(err)
		}
		for _, w := range d.Winners {
			if w.Gain != 0 {
				t.Errorf("choose round %d commits a gain", rec.Step.Round)
			}
		}
	}
}

// checkHiddenMessages checks a hide_gains run's captured messages: all
// within the profile's disclosures, the comparison messages scores
// between two distinct parties, choose outputs only to the coordinator
// pb, and every comparison type sent at least once. It returns how many
// of each comparison type were sent.
func checkHiddenMessages(t *testing.T, rep *jobtest.Report) map[string]int {
	t.Helper()
	allowed := []wire.Disclosure{wire.DiscloseClassSummary, wire.DiscloseSplitSummary, wire.DiscloseScore,
		wire.DisclosePSIBlinded, wire.DisclosePublicResult, wire.DiscloseControl}
	if out := rep.SentOutside(allowed...); len(out) > 0 {
		t.Errorf("%d messages outside the profile, first %s (%s)", len(out), out[0].Message.Type, out[0].Disclosure)
	}
	seen := map[string]int{}
	for _, s := range rep.Sent {
		m := s.Message
		switch m.Type {
		case sjc.TypeCompareBits, sjc.TypeCompareBlinded, sjc.TypeCompareResult, sjc.TypeCompareCounts, sjc.TypeCompareCoBlinded:
			seen[m.Type]++
			if s.Disclosure != wire.DiscloseScore || s.From == s.To {
				t.Errorf("%s from %s to %s as %s", m.Type, s.From, s.To, s.Disclosure)
			}
		case jobrun.OutputType:
			if m.Phase == "choose" && s.To != "pb" {
				t.Errorf("a choose output went to %s, not the coordinator", s.To)
			}
		}
	}
	for _, typ := range []string{sjc.TypeCompareBits, sjc.TypeCompareBlinded, sjc.TypeCompareResult, sjc.TypeCompareCounts, sjc.TypeCompareCoBlinded} {
		if seen[typ] == 0 {
			t.Errorf("no %s message was sent: the test checks nothing of it", typ)
		}
	}
	return seen
}

// TestFailureTextsHiddenGains runs TestFailureTextsDiscloseNothing's
// checks (no value, gain, predicate or path in any failure text, log
// record or message) on the failures hide_gains adds: a party silent in a
// hidden choose, and a comparison message tampered with on the way.
func TestFailureTextsHiddenGains(t *testing.T) {
	t.Parallel()
	f := newTextFixture()
	hide := func(s *job.Spec, _ map[string]string) { s.Params["hide_gains"] = true }
	cases := []textCase{
		{name: "silent party", want: "silent", edit: func(s *job.Spec, tb map[string]string) {
			hide(s, tb)
			s.Params["timeout_ms"] = 500
		}, fault: func(o *jobtest.Options, _ map[string]string) {
			o.Grace = 200 * time.Millisecond
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Phase == "choose" {
					ev.Net.Drop("pc", jobtest.DropHang)
				}
				return jobtest.Fault{}
			}
		}},
		{name: "tampered comparison", want: "not a ristretto255 element", edit: hide, fault: func(o *jobtest.Options, _ map[string]string) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Phase == "choose" {
					ev.Net.Intercept("pa", func(_ string, m *wire.Message) *wire.Message {
						var cm struct {
							Share []byte `msgpack:"share,omitempty"`
							Key   []byte `msgpack:"key,omitempty"`
							Cts   []byte `msgpack:"cts,omitempty"`
							Coins []byte `msgpack:"coins,omitempty"`
							C1    []byte `msgpack:"c1,omitempty"`
						}
						if m.Type != sjc.TypeCompareBits || wire.Unmarshal(m.Body, &cm) != nil || len(cm.Cts) < 32 {
							return m
						}
						copy(cm.Cts, bytes.Repeat([]byte{0xff}, 32)) // no canonical element
						m.Body, _ = wire.Marshal(&cm)
						return m
					})
				}
				return jobtest.Fault{}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkFailureTexts(t, f, c, "", nil) })
	}
}

// checkCountsBlinded puts every choose step's outputs together as the
// coordinator does and checks what it learns: per open node, the committed
// winner's count is zero and every other table's count is an element that
// is not a small multiple of the generator (a count left unblinded would
// be one, and tell the coordinator how many comparisons the table lost).
func checkCountsBlinded(t *testing.T, rep *jobtest.Report) {
	t.Helper()
	grp := group.Ristretto255
	small := map[string]bool{}
	for m := uint64(1); m <= 16; m++ {
		b, _ := grp.NewElement().MulGen(grp.NewScalar().SetUint64(m)).MarshalBinaryCompress()
		small[string(b)] = true
	}
	type hiddenOut struct {
		Nodes  [][]any `msgpack:"nodes"`
		Hidden []struct {
			C2       [][]byte `msgpack:"c2"`
			Partials [][]byte `msgpack:"partials"`
		} `msgpack:"hidden"`
	}
	type attempt struct{ round, attempt int }
	winners := map[attempt][]int{} // the committed attempt -> winning table per open node
	for _, rec := range rep.Records() {
		if rec.Step.Phase != "choose" {
			continue
		}
		var d struct {
			Retry   bool `msgpack:"retry"`
			Winners []struct {
				Table int     `msgpack:"table"`
				Gain  float64 `msgpack:"gain"`
			} `msgpack:"winners"`
		}
		if err := wire.Unmarshal(rec.Decision, &d); err != nil {
			t.Fatal(err)
		}
		for _, w := range d.Winners {
			k := attempt{rec.Step.Round, rec.Step.Attempt}
			winners[k] = append(winners[k], w.Table)
		}
	}
	outs := map[attempt][]hiddenOut{}
	for _, o := range rep.Outputs {
		if o.Step.Phase != "choose" {
			continue
		}
		var h hiddenOut
		if err := wire.Unmarshal(o.Output, &h); err != nil {
			t.Fatal(err)
		}
		if len(h.Hidden) > 0 { // a party holding no table outputs nothing
			k := attempt{o.Step.Round, o.Step.Attempt}
			outs[k] = append(outs[k], h)
		}
	}
	checked := 0
	for k, hs := range outs {
		round := k.round
		for i, w := range winners[k] {
			for tbl := range hs[0].Hidden[i].Partials {
				var m group.Element
				for _, h := range hs {
					if c2 := h.Hidden[i].C2[tbl]; len(c2) > 0 {
						m = grp.NewElement()
						if err := m.UnmarshalBinary(c2); err != nil {
							t.Fatal(err)
						}
					}
				}
				for _, h := range hs {
					d := grp.NewElement()
					if err := d.UnmarshalBinary(h.Hidden[i].Partials[tbl]); err != nil {
						t.Fatal(err)
					}
					m = grp.NewElement().Add(m, grp.NewElement().Neg(d))
				}
				enc, _ := m.MarshalBinaryCompress()
				switch {
				case tbl == w && !m.IsIdentity():
					t.Errorf("choose round %d, node %d: the winner's count is not zero", round, i)
				case tbl != w && (m.IsIdentity() || small[string(enc)]):
					t.Errorf("choose round %d, node %d: table %d's count decrypts to a small value, not a blinded one", round, i, tbl)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Error("no count was checked")
	}
}
