package bicluster_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// TestJobLeakage captures every message and log record of a run on
// real-valued data and checks them against the leakage profile: every
// message is a ciphertext, decryption share, public result or control;
// no party's cell value appears in any message or log record; a party's
// row ids appear only in its own messages and, in the log, only in the
// rows step's public decision (the result).
func TestJobLeakage(t *testing.T) {
	t.Parallel()
	seed := seedN(11)
	m, _, err := synth.Shifted{Rows: 80, Cols: 30, K: 3, Noise: 1, MinVal: 10, MaxVal: 50, MinSize: 8}.Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	path, names, parts := consortium(t, m, 3, seed, "")
	opts := dealt(t, names)
	rep := runJob(t, path, opts)
	_, gs := globals(t, rep.Result)
	if len(gs) == 0 {
		t.Fatal("no biclusters found: the rows step was not exercised")
	}
	if _, err := rep.CheckJointSeed(job.NewJointSeed(rep.JobID, 0, names)); err != nil {
		t.Fatal(err)
	}
	// Positive controls: the searches below find what the log does hold
	// (a result row id, a public mean as msgpack float64).
	if _, id, _ := strings.Cut(gs[0].Rows[0], ":"); len(rep.LogHolding([]byte(id))) == 0 {
		t.Fatalf("the search does not find the result's row id %s in the log", id)
	}
	var mean [8]byte
	binary.BigEndian.PutUint64(mean[:], math.Float64bits(gs[0].Means[0]))
	if len(rep.LogHolding(mean[:])) == 0 {
		t.Fatalf("the search does not find the public mean %v in the log", gs[0].Means[0])
	}
	if bad := rep.SentOutside(wire.DiscloseCiphertext, wire.DiscloseDecryptionShare,
		wire.DisclosePublicResult, wire.DiscloseControl); len(bad) > 0 {
		t.Errorf("%d messages outside the profile, first %s %s", len(bad), bad[0].Message.Type, bad[0].Disclosure)
	}
	if len(rep.Sent) == 0 {
		t.Fatal("no message captured")
	}
	values := 0
	for i, part := range parts {
		owner := names[i]
		for _, x := range part.Matrix.Data {
			if x == math.Trunc(x) {
				continue // small integers could occur in any encoding
			}
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], math.Float64bits(x))
			values++
			if s := rep.SentHolding(b[:]); len(s) > 0 {
				t.Fatalf("%s's value %v in a message from %s", owner, x, s[0].From)
			}
			if e := rep.LogHolding(b[:]); len(e) > 0 {
				t.Fatalf("%s's value %v in the log (%s)", owner, x, e[0].Op)
			}
		}
		for _, id := range part.Matrix.RowIDs {
			for _, s := range rep.SentHolding([]byte(id)) {
				if s.From != owner {
					t.Fatalf("%s's row id %s in a message from %s", owner, id, s.From)
				}
			}
			for _, e := range rep.LogHolding([]byte(id)) {
				if e.Op != "finish" && (e.Record == nil || e.Record.Step.Phase != "rows") {
					t.Fatalf("%s's row id %s in log entry %s outside the result", owner, id, e.Op)
				}
			}
		}
	}
	if values == 0 {
		t.Fatal("no real value checked")
	}
	checkMergeDisclosure(t, rep, gs)
	checkBitsMessages(t, rep)
	// Outputs are private to the coordinator, but for the ones it commits
	// as they are: the column names, the locals' descriptions, the joint
	// seed's commitments and openings, and the merge test root's bits and
	// exclusions.
	for _, o := range rep.Outputs {
		public := o.Step.Phase == "schema" || o.Step.Phase == "locals" || job.IsSeedStep(o.Step) ||
			(o.Step.Phase == "test" && o.Party == secureagg.Root(o.Step))
		if len(o.Output) > 16 && !public && len(rep.LogHolding(o.Output)) > 0 {
			t.Errorf("the log holds %s's output of %s/%d", o.Party, o.Step.Phase, o.Step.Round)
		}
	}
}

// checkMergeDisclosure: the merge reveals only what the result publishes,
// and only sums of groups with locals of at least two parties.
// The pair test's decision holds one bit per candidate pair and no
// number; the merge decrypts one sum per published (bicluster, column),
// each exactly the published mean times the group's public row count. The
// member-against-group merge this replaced fails it: it decrypted every
// round's group sums (so a misfit's representative by subtraction, and
// the sums of groups of one party's locals) on every column of the union.
func checkMergeDisclosure(t *testing.T, rep *jobtest.Report, gs []bicluster.GlobalResult) {
	t.Helper()
	type ref struct {
		Party int `msgpack:"party"`
		Local int `msgpack:"local"`
	}
	var counts [][]int
	var tests, merges int
	for _, rec := range rep.Records() {
		switch rec.Step.Phase {
		case "locals":
			var d struct {
				Locals [][]struct {
					Cols  []int `msgpack:"cols"`
					Count int   `msgpack:"count"`
				} `msgpack:"locals"`
			}
			if err := wire.Unmarshal(rec.Decision, &d); err != nil {
				t.Fatal(err)
			}
			for _, ls := range d.Locals {
				var c []int
				for _, l := range ls {
					c = append(c, l.Count)
				}
				counts = append(counts, c)
			}
		case "test":
			tests++
			var d struct {
				Similar  []bool            `msgpack:"similar"`
				Excluded map[string]string `msgpack:"excluded"`
			}
			if err := wire.Unmarshal(rec.Decision, &d); err != nil {
				t.Fatalf("the pair test's decision holds more than bits: %v", err)
			}
			var a struct {
				Pairs []struct {
					A    ref   `msgpack:"a"`
					B    ref   `msgpack:"b"`
					Cols []int `msgpack:"cols"`
				} `msgpack:"pairs"`
			}
			if err := wire.Unmarshal(rec.Step.Args, &a); err != nil {
				t.Fatal(err)
			}
			if len(a.Pairs) == 0 || len(d.Similar) != len(a.Pairs) {
				t.Fatalf("%d bits for %d pairs", len(d.Similar), len(a.Pairs))
			}
		case "merge":
			merges++
			var d struct {
				Sums     []float64         `msgpack:"sums"`
				Excluded map[string]string `msgpack:"excluded"`
			}
			if err := wire.Unmarshal(rec.Decision, &d); err != nil {
				t.Fatalf("the merge decision holds more than sums: %v", err)
			}
			var a struct {
				Groups [][]ref `msgpack:"groups"`
			}
			if err := wire.Unmarshal(rec.Step.Args, &a); err != nil {
				t.Fatal(err)
			}
			if len(a.Groups) != len(gs) {
				t.Fatalf("%d groups aggregated, %d published", len(a.Groups), len(gs))
			}
			for _, g := range a.Groups {
				parties := map[int]bool{} // counted only
				for _, r := range g {
					parties[r.Party] = true
				}
				if len(parties) < 2 {
					t.Fatalf("group %v aggregated with contributions from %d party", g, len(parties))
				}
			}
			off := 0
			for k, g := range a.Groups {
				n := 0
				for _, r := range g {
					n += counts[r.Party][r.Local]
				}
				for i, mean := range gs[k].Means {
					if off+i >= len(d.Sums) || d.Sums[off+i]/float64(n) != mean {
						t.Fatalf("decrypted sum %d is not bicluster %d's published mean %v × %d rows", off+i, k, mean, n)
					}
				}
				off += len(gs[k].Means)
			}
			if off != len(d.Sums) {
				t.Fatalf("%d sums decrypted, %d means published", len(d.Sums), off)
			}
		}
	}
	if tests < 1 || tests > 2 || merges != 1 {
		t.Fatalf("%d pair test rounds and %d merges committed, want one or two and one", tests, merges)
	}
}

// checkBitsMessages: in every merge test round, the root alone sends the
// bits, once to every other party, and its message holds exactly the
// committed bits (public) and nothing else.
func checkBitsMessages(t *testing.T, rep *jobtest.Report) {
	t.Helper()
	rounds := 0
	for _, rec := range rep.Records() {
		if rec.Step.Phase != "test" || rec.Error != "" {
			continue
		}
		rounds++
		var d struct {
			Similar  []bool            `msgpack:"similar"`
			Excluded map[string]string `msgpack:"excluded"`
		}
		if err := wire.Unmarshal(rec.Decision, &d); err != nil {
			t.Fatal(err)
		}
		want, err := wire.Marshal(struct {
			Similar []bool `msgpack:"similar"`
			Failed  bool   `msgpack:"failed"`
		}{Similar: d.Similar})
		if err != nil {
			t.Fatal(err)
		}
		root := secureagg.Root(rec.Step)
		to := map[string]int{}
		for _, s := range rep.Sent {
			m := s.Message
			if m.Type != bicluster.TypeBits || m.Phase != "test" || m.Round != rec.Step.Round || m.Attempt != rec.Step.Attempt {
				continue
			}
			if s.From != root || s.Disclosure != wire.DisclosePublicResult || !bytes.Equal(m.Body, want) {
				t.Fatalf("test round %d: %s sent bits (%s) that are not the root's committed bits", rec.Step.Round, s.From, s.Disclosure)
			}
			to[s.To]++
		}
		for _, p := range rec.Step.Parties {
			if n := to[p]; (p == root && n != 0) || (p != root && n != 1) {
				t.Fatalf("test round %d: %s got the bits %d times", rec.Step.Round, p, n)
			}
		}
	}
	if rounds == 0 {
		t.Fatal("no merge test round committed: no bits checked")
	}
}
