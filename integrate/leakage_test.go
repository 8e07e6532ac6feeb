package integrate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/wire"
)

// The leakage profile of the package doc, checked on every message sent and
// every log entry of a run:
//   - messages disclose only psi-blinded values (the alignment), scores and
//     splits (to the coordinator), the generalised publication and public
//     results (the runtime's admission answers, control, carry no data and
//     are left out by SentOutside);
//   - no raw value of any party that the publication does not show, and no
//     id that not every party holds, appears in any message or log entry;
//   - scores reach the coordinator only: no score a party reported is in
//     the log; score messages go to the attempt's coordinator alone.
//
// It runs in both PSI protocols: auto picks ECDH for these 240 ids, so OT
// is forced once.
func TestLeakage(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"auto", "ot"} {
		t.Run(mode, func(t *testing.T) { checkLeakage(t, mode) })
	}
}

// profile is the disclosures the leakage profile allows a party's messages.
var profile = []wire.Disclosure{wire.DisclosePSIBlinded, wire.DiscloseScore, wire.DiscloseSplitSummary,
	wire.DiscloseGeneralised, wire.DisclosePublicResult}

// checkLeakage runs one random three-party job with PSI mode and checks the
// leakage profile TestLeakage states against its report.
func checkLeakage(t *testing.T, mode string) {
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 6}, {QID: []string{"nob", "sob", "web"}, K: 6}}
	j := randomJob(t, 11, 240, reqs, "  psi: "+mode+"\n")
	rep, err := j.run(t, jobtest.Options{Leader: "south"})
	if err != nil {
		t.Fatal(err)
	}
	pub := published(t, rep)
	checkNeedles(t, j, rep, pub)
	want := map[string]string{"auto": psi.TypeBlinded, "ot": psi.TypeOTBase}[mode]
	if !slices.ContainsFunc(rep.Sent, func(s jobtest.Sent) bool { return s.Message.Type == want }) {
		t.Fatalf("psi %s: no %s message was sent", mode, want)
	}
	for _, s := range rep.SentOutside(profile...) {
		t.Errorf("message %s from %s to %s discloses %q", s.Message.Type, s.From, s.To, s.Disclosure)
	}
	checkScoresOffTheLog(t, rep)
	checkLogPartition(t, j, rep, pub)
}

// checkScoresOffTheLog: some party found a nonzero score, no log entry
// holds any party's score (as msgpack encodes it), and scores, splits and
// the parts of the publication go to the coordinator (south) alone, the
// last only at the end.
func checkScoresOffTheLog(t *testing.T, rep *jobtest.Report) {
	t.Helper()
	scores := 0
	for _, o := range rep.Outputs {
		if o.Step.Phase != phaseScore {
			continue
		}
		var so scoreOutput
		if err := wire.Unmarshal(o.Output, &so); err != nil {
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
		if s.Disclosure == wire.DiscloseScore && s.To != "south" {
			t.Errorf("score of %s sent to %s, not the coordinator", s.From, s.To)
		}
		if s.Disclosure == wire.DiscloseSplitSummary && s.To != "south" {
			t.Errorf("split of %s sent to %s, not the coordinator", s.From, s.To)
		}
		if s.Disclosure == wire.DiscloseGeneralised && (s.To != "south" || s.Message.Phase != phasePublish) {
			t.Errorf("%s sent its part of the publication in %s to %s, not the coordinator at the end", s.From, s.Message.Phase, s.To)
		}
	}
}

// checkLogPartition: the committed splits, replayed from the log by this
// test's own code, end at exactly the publication's partition (the same
// multiset of attribute rows): the log links record numbers to the
// published values and to nothing finer; every earlier partition is
// coarser.
func checkLogPartition(t *testing.T, j *testJob, rep *jobtest.Report, pub anonymize.Published) {
	t.Helper()
	var attrs []Attr
	records := 0
	var gen [][]int
	for _, rec := range rep.Records() {
		switch rec.Step.Phase {
		case phaseSchema:
			d, err := schemaRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			attrs = d.Attrs
		case phaseAlign:
			d, err := alignRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			records = d.Records
			gen = make([][]int, len(attrs))
			for a := range gen {
				gen[a] = make([]int, records) // the root, node 0
			}
		case phaseSplit:
			sp, err := splitRound.Decision(rec)
			if err != nil {
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

// Regression (issue 21, finding 10): NCP reveals no party's data range. The
// job runs twice on data whose numeric column (age, held by gamma) differs
// only in its range (17 → 5 and 27 → 58, within the same taxonomy leaves,
// so the publication is the same): every party's publish output and the
// committed ncp are identical, the ncp is the one computed here from the
// publication with the taxonomies' public ranges, and no float64 of the
// data's min, max or width is in any message or log entry.
func TestNCPRevealsNoRange(t *testing.T) {
	t.Parallel()
	type run struct {
		rep        *jobtest.Report
		lo, hi     float64
		publishOut map[string][]byte
	}
	var runs []run
	for _, widen := range []bool{false, true} {
		j := seed003Job(t, seedReqs, "")
		if widen {
			for _, r := range j.parties[2].rows {
				switch r[2] {
				case "17":
					r[2] = "5"
				case "27":
					r[2] = "58"
				}
			}
			j = rewrite(t, j)
		}
		rep, err := j.run(t, jobtest.Options{Leader: "alpha"})
		if err != nil {
			t.Fatal(err)
		}
		ru := run{rep: rep, lo: math.Inf(1), hi: math.Inf(-1), publishOut: map[string][]byte{}}
		for _, r := range j.parties[2].rows {
			if strings.HasPrefix(r[0], "only-") {
				continue
			}
			var x float64
			fmt.Sscan(r[2], &x)
			ru.lo, ru.hi = min(ru.lo, x), max(ru.hi, x)
		}
		for _, o := range rep.Outputs {
			if o.Step.Phase == phasePublish {
				ru.publishOut[o.Party] = o.Output
			}
		}
		if want := publicNCP(t, published(t, rep), j.tax); math.Abs(rep.Result["ncp"].(float64)-want) > 1e-12 {
			t.Errorf("ncp %v, from the publication and the public ranges %v", rep.Result["ncp"], want)
		}
		runs = append(runs, ru)
	}
	if runs[0].lo == runs[1].lo || runs[0].hi == runs[1].hi {
		t.Fatalf("test data: ranges [%v, %v] and [%v, %v]", runs[0].lo, runs[0].hi, runs[1].lo, runs[1].hi)
	}
	if runs[0].rep.Result["ncp"] != runs[1].rep.Result["ncp"] {
		t.Errorf("ncp %v with one data range, %v with another", runs[0].rep.Result["ncp"], runs[1].rep.Result["ncp"])
	}
	for p, b := range runs[0].publishOut {
		if !bytes.Equal(b, runs[1].publishOut[p]) {
			t.Errorf("party %s's publish output depends on the data range", p)
		}
	}
	for _, ru := range runs {
		for _, x := range []float64{ru.lo, ru.hi, ru.hi - ru.lo} {
			var enc [9]byte
			enc[0] = 0xcb // msgpack float64
			binary.BigEndian.PutUint64(enc[1:], math.Float64bits(x))
			for _, s := range ru.rep.SentHolding(enc[:]) {
				t.Errorf("message %s from %s holds the data range's %v", s.Message.Type, s.From, x)
			}
			for _, e := range ru.rep.LogHolding(enc[:]) {
				t.Errorf("log entry %s holds the data range's %v", e.Op, x)
			}
		}
	}
}

// publicNCP is the NCP of a publication (the class last) computed from its
// labels: categorical nodes cost their leaves over the root's, numeric ones
// their width over the root's (a leaf interval its width, a point 0).
func publicNCP(t *testing.T, p anonymize.Published, tax map[string]*anonymize.Taxonomy) float64 {
	t.Helper()
	total, n := 0.0, 0
	for _, row := range p.Rows {
		for c, col := range p.Columns[:len(p.Columns)-1] {
			tx := tax[col]
			id, ok := tx.Find(row.Values[c])
			if !ok {
				t.Fatalf("label %q not in the taxonomy of %s", row.Values[c], col)
			}
			nd, root := tx.Nodes[id], tx.Nodes[0]
			cost := 0.0
			switch {
			case !tx.Numeric && len(nd.Children) > 0:
				cost = float64(nd.Leaves) / float64(root.Leaves)
			case tx.Numeric:
				cost = (nd.Hi - nd.Lo) / (root.Hi - root.Lo)
			}
			total += cost * float64(row.Count)
		}
		n += row.Count
	}
	return total / float64(n*(len(p.Columns)-1))
}

// checkNeedles checks that no id held by one party and no raw value the
// publication does not show is in any message or log entry, and that
// messages disclose only the profile's kinds.
func checkNeedles(t *testing.T, j *testJob, rep *jobtest.Report, pub anonymize.Published, alsoAllowed ...wire.Disclosure) {
	t.Helper()
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
	allowed := append(slices.Clone(profile), alsoAllowed...)
	for _, s := range rep.SentOutside(allowed...) {
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
}

// The profile under algorithm mondrian: the same kinds of disclosure;
// proposals (with their widths) and cuts reach the coordinator only; no
// width a party proposed is in the log; and the committed cuts, replayed by
// this test's own code, partition the records into exactly the
// publication's classes (the same sizes): nothing finer.
func TestLeakageMondrian(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 6}, {QID: []string{"nob", "sob", "web"}, K: 6}}
	j := randomJob(t, 11, 240, reqs, "  algorithm: mondrian\n")
	rep, err := j.run(t, jobtest.Options{Leader: "south"})
	if err != nil {
		t.Fatal(err)
	}
	pub := published(t, rep)
	checkNeedles(t, j, rep, pub)
	widths := 0
	for _, o := range rep.Outputs {
		if o.Step.Phase != phasePropose {
			continue
		}
		var po proposeOutput
		if err := wire.Unmarshal(o.Output, &po); err != nil {
			t.Fatal(err)
		}
		for _, pr := range po.Proposals {
			widths++
			var enc [9]byte
			enc[0] = 0xcb
			binary.BigEndian.PutUint64(enc[1:], math.Float64bits(pr.Width))
			for _, e := range rep.LogHolding(enc[:]) {
				t.Errorf("log entry %s holds party %s's width %v", e.Op, o.Party, pr.Width)
			}
		}
	}
	if widths == 0 {
		t.Fatal("no proposal captured")
	}
	for _, s := range rep.Sent {
		if (s.Disclosure == wire.DiscloseScore || s.Disclosure == wire.DiscloseSplitSummary) && s.To != "south" {
			t.Errorf("%s of %s sent to %s, not the coordinator", s.Disclosure, s.From, s.To)
		}
	}
	// replay the committed cuts
	var groups [][]int
	for _, rec := range rep.Records() {
		switch rec.Step.Phase {
		case phaseAlign:
			d, err := alignRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			all := make([]int, d.Records)
			for i := range all {
				all[i] = i
			}
			groups = [][]int{all}
		case phaseCut:
			d, err := cutRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			byGroup := map[int]wireCut{}
			for _, c := range d.Cuts {
				byGroup[c.Group] = c
			}
			var next [][]int
			for g, rows := range groups {
				c, ok := byGroup[g]
				if !ok {
					next = append(next, rows)
					continue
				}
				parts := make([][]int, c.Parts)
				for i, r := range rows {
					p := int(c.Part[i])
					if c.Width == 2 {
						p = int(c.Part[2*i])<<8 | int(c.Part[2*i+1])
					}
					parts[p] = append(parts[p], r)
				}
				next = append(next, parts...)
			}
			groups = next
		}
	}
	var fromLog, fromPub []int
	for _, g := range groups {
		fromLog = append(fromLog, len(g))
	}
	classes := map[string]int{}
	for _, row := range pub.Rows {
		classes[strings.Join(row.Values[:len(row.Values)-1], "|")] += row.Count
	}
	for _, n := range classes {
		fromPub = append(fromPub, n)
	}
	slices.Sort(fromLog)
	slices.Sort(fromPub)
	if !slices.Equal(fromLog, fromPub) {
		t.Errorf("the log's cuts give classes of %v records, the publication %v", fromLog, fromPub)
	}
}

// Every message a party sends is one of the forms Uses declares: the job
// runs to its end with every party under the default policy (which refuses
// a message whose disclosure the job was not admitted for), with TDS and
// with Mondrian checking a sensitive column one party holds.
func TestDeclaredUses(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 5}, {QID: []string{"nob", "sob"}, K: 5}}
	for _, alg := range []string{algTDS, algMondrian} {
		t.Run(alg, func(t *testing.T) {
			extra := "  algorithm: " + alg + "\n"
			if alg == algMondrian {
				extra += "  sensitive: disease\n  l: 2\n"
			}
			j := randomJob(t, 5, 260, reqs, extra)
			if alg == algMondrian {
				j = withDisease(t, j)
			}
			rep, err := j.run(t, jobtest.Options{Policy: policy.Default()})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.SentOutside(wire.DiscloseControl)) == 0 {
				t.Fatal("no message sent")
			}
		})
	}
}
