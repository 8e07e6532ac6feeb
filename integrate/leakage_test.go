package integrate

import (
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/psi"
)

// The leakage profile of the package doc, checked on every message sent and
// every log entry of a run:
//   - messages disclose only psi-blinded values (the alignment), scores and
//     splits (to the coordinator) and public results;
//   - no raw value of any party that the publication does not show, and no
//     id that not every party holds, appears in any message or log entry;
//   - scores reach the coordinator only: no score a party reported is in
//     the log; score messages go to the attempt's coordinator alone.
//
// It runs in both PSI protocols: auto picks ECDH for these 240 ids, so OT
// is forced once.
func TestLeakage(t *testing.T) {
	for _, mode := range []string{"auto", "ot"} {
		t.Run(mode, func(t *testing.T) { checkLeakage(t, mode) })
	}
}

func checkLeakage(t *testing.T, mode string) {
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 6}, {QID: []string{"nob", "sob", "web"}, K: 6}}
	j := randomJob(t, 11, 240, reqs, "  psi: "+mode+"\n")
	rep, err := j.run(t, jobtest.Options{Leader: "south"})
	if err != nil {
		t.Fatal(err)
	}
	pub := published(t, rep)
	shown := map[string]bool{}
	for _, r := range pub.Rows {
		for _, v := range r.Values {
			shown[v] = true
		}
	}
	var needles []string
	lonely := 0
	for _, p := range j.parties {
		for _, r := range p.rows {
			if strings.HasPrefix(r[0], "lonely-") {
				needles = append(needles, r[0])
				lonely++
			}
			for _, v := range r[2:] {
				if !shown[v] && !slices.Contains(needles, v) {
					needles = append(needles, v)
				}
			}
		}
	}
	if lonely != 9 || len(needles) < 20 {
		t.Fatalf("test data: %d lonely ids, %d needles", lonely, len(needles))
	}
	if len(rep.Sent) == 0 || len(rep.Log) == 0 {
		t.Fatal("nothing captured")
	}
	want := map[string]string{"auto": psi.TypeBlinded, "ot": psi.TypeOTBase}[mode]
	if !slices.ContainsFunc(rep.Sent, func(s jobtest.Sent) bool { return s.Message.Type == want }) {
		t.Fatalf("psi %s: no %s message was sent", mode, want)
	}
	for _, s := range rep.SentOutside(protocol.DisclosePSIBlinded, protocol.DiscloseScore, protocol.DiscloseSplitSummary, protocol.DisclosePublicResult) {
		t.Errorf("message %s from %s to %s discloses %q", s.Message.Type, s.From, s.To, s.Disclosure)
	}
	for _, nd := range needles {
		for _, s := range rep.SentHolding([]byte(nd)) {
			t.Errorf("message %s from %s to %s carries %q", s.Message.Type, s.From, s.To, nd)
		}
		for _, e := range rep.LogHolding([]byte(nd)) {
			t.Errorf("log entry %s carries %q", e.Op, nd)
		}
	}
	scores := 0
	for _, o := range rep.Outputs {
		if o.Step.Phase != phaseScore {
			continue
		}
		var so scoreOutput
		if err := decode(o.Output, &so); err != nil {
			t.Fatal(err)
		}
		if !so.Found || so.Score == 0 {
			continue
		}
		scores++
		var enc [9]byte
		enc[0] = 0xcb // msgpack float64
		binary.BigEndian.PutUint64(enc[1:], math.Float64bits(so.Score))
		for _, e := range rep.LogHolding(enc[:]) {
			t.Errorf("log entry %s holds party %s's score %v", e.Op, o.Party, so.Score)
		}
	}
	if scores == 0 {
		t.Fatal("no score captured")
	}
	for _, s := range rep.Sent {
		if s.Disclosure == protocol.DiscloseScore && s.To != "south" {
			t.Errorf("score of %s sent to %s, not the coordinator", s.From, s.To)
		}
		if s.Disclosure == protocol.DiscloseSplitSummary && s.To != "south" {
			t.Errorf("split of %s sent to %s, not the coordinator", s.From, s.To)
		}
	}
	// The committed splits, replayed from the log by this test's own code,
	// end at exactly the publication's partition (the same multiset of
	// attribute rows): the log links record numbers to the published
	// values and to nothing finer; every earlier partition is coarser.
	var attrs []Attr
	records := 0
	var gen [][]int
	for _, rec := range rep.Records() {
		switch rec.Step.Phase {
		case phaseSchema:
			var d schemaDecision
			if err := decode(rec.Decision, &d); err != nil {
				t.Fatal(err)
			}
			attrs = d.Attrs
		case phaseAlign:
			var d alignDecision
			if err := decode(rec.Decision, &d); err != nil {
				t.Fatal(err)
			}
			records = d.Records
			gen = make([][]int, len(attrs))
			for a := range gen {
				gen[a] = make([]int, records) // the root, node 0
			}
		case phaseSplit:
			var sp Split
			if err := decode(rec.Decision, &sp); err != nil {
				t.Fatal(err)
			}
			kids := j.tax[attrs[sp.Attr].Name].Nodes[sp.Node].Children
			i := 0
			for r, v := range gen[sp.Attr] {
				if v == sp.Node {
					gen[sp.Attr][r] = kids[sp.Child[i]]
					i++
				}
			}
			if i != len(sp.Child) {
				t.Fatalf("split of %s: %d positions for %d records", attrs[sp.Attr].Name, len(sp.Child), i)
			}
		}
	}
	fromLog := map[string]int{}
	for r := range records {
		var vals []string
		for a, at := range attrs {
			vals = append(vals, j.tax[at.Name].Nodes[gen[a][r]].Label)
		}
		fromLog[strings.Join(vals, "|")]++
	}
	fromPub := map[string]int{}
	for _, row := range pub.Rows {
		fromPub[strings.Join(row.Values[:len(attrs)], "|")] += row.Count
	}
	if !maps.Equal(fromLog, fromPub) {
		t.Errorf("the log's splits give the partition %v, the publication %v", fromLog, fromPub)
	}
}
