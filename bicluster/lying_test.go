package bicluster_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// lying is a coordinator that drives the job as bicluster.Kind does but
// lies where its hooks say: args rewrites a step's args as it is started
// (nil, or a nil result: as asked), decision the decision it commits. The
// parties' sessions are the honest ones.
type lying struct {
	bicluster.Kind
	args     func(step job.Step) []byte
	decision func(step job.Step, decision []byte) []byte
	// parties, if set, rewrites the parties a step is started with (nil:
	// as asked).
	parties func(step job.Step) []string
}

func (k lying) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	return k.Kind.Coordinate(ctx, &lyingCoordinator{Coordinator: c, k: k})
}

type lyingCoordinator struct {
	job.Coordinator
	k lying
}

func (c *lyingCoordinator) Start(ctx context.Context, step job.Step) (job.Attempt, error) {
	if c.k.args != nil {
		if b := c.k.args(step); b != nil {
			step.Args = b
		}
	}
	if c.k.parties != nil {
		if ps := c.k.parties(step); ps != nil {
			step.Parties = ps
		}
	}
	a, err := c.Coordinator.Start(ctx, step)
	if err != nil || c.k.decision == nil {
		return a, err
	}
	return &lyingAttempt{Attempt: a, k: c.k}, nil
}

type lyingAttempt struct {
	job.Attempt
	k lying
}

func (a *lyingAttempt) Commit(ctx context.Context, outs *job.Outputs, decision []byte, failure string) (*job.Record, error) {
	if failure == "" {
		decision = a.k.decision(a.Step(), decision)
	}
	return a.Attempt.Commit(ctx, outs, decision, failure)
}

// testBits is the merge test's decision as the log holds it.
type testBits struct {
	Similar  []bool            `msgpack:"similar"`
	Excluded map[string]string `msgpack:"excluded"`
}

// forgeBits is a coordinator that commits, for merge test round r, the
// bits forge makes of the root's, not the root's.
func forgeBits(r int, forge func([]bool) []bool) lying {
	return lying{decision: func(step job.Step, d []byte) []byte {
		if step.Phase != "test" || step.Round != r {
			return d
		}
		var bits testBits
		if err := wire.Unmarshal(d, &bits); err != nil {
			return d
		}
		bits.Similar = forge(bits.Similar)
		b, err := wire.Marshal(&bits)
		if err != nil {
			return d
		}
		return b
	}}
}

func allBits(v bool) func([]bool) []bool {
	return func(b []bool) []bool {
		out := make([]bool, len(b))
		for i := range out {
			out[i] = v
		}
		return out
	}
}

// dropAfterFormed is a coordinator that runs iteration round 1 without
// victim, once round 0's total (over every party) was decrypted: the two
// totals' difference would be the victim's column statistics.
func dropAfterFormed(parties []string, victim string) lying {
	return lying{parties: func(step job.Step) []string {
		if step.Phase != "iterate" || step.Round != 1 {
			return nil
		}
		return slices.DeleteFunc(slices.Clone(parties), func(p string) bool { return p == victim })
	}}
}

// ref is a local bicluster in the steps' args: party index, local index.
type ref struct {
	Party int `msgpack:"party"`
	Local int `msgpack:"local"`
}

// loneGroup is a coordinator that asks the merge to aggregate lone, a
// group of one party's local bicluster, beside the groups the log gives
// (when they do not hold it already): its decrypted sums would be that
// local's representative times its count.
func loneGroup(lone ref) lying {
	return lying{args: func(step job.Step) []byte {
		if step.Phase != "merge" {
			return nil
		}
		var a struct {
			Groups [][]ref `msgpack:"groups"`
		}
		if err := wire.Unmarshal(step.Args, &a); err != nil {
			return nil
		}
		for _, g := range a.Groups {
			if slices.Contains(g, lone) {
				return nil
			}
		}
		a.Groups = append(a.Groups, []ref{lone})
		b, err := wire.Marshal(&a)
		if err != nil {
			return nil
		}
		return b
	}}
}

// runLying runs kind on spec in memory and returns the report and the
// job's error.
func runLying(t *testing.T, kind job.Kind, path string, names []string) (*jobtest.Report, error) {
	t.Helper()
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return jobtest.Run(ctx, kind, spec, dealt(t, names))
}

// checkRefused: the job failed at step phase/round, where every party
// refused naming the coordinator and, when named, the step it replayed;
// the refused step sent nothing but the parties' reports, and no merge
// sums were decrypted.
func checkRefused(t *testing.T, rep *jobtest.Report, err error, phase string, round int, names []string, replayed string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the job succeeded: %v", rep.Result["biclusters"])
	}
	recs := rep.Records()
	last := recs[len(recs)-1]
	if last.Step.Phase != phase || last.Step.Round != round || last.Error == "" {
		t.Fatalf("the job failed at %s/%d (%q), want a refusal of %s round %d: %v", last.Step.Phase, last.Step.Round, last.Error, phase, round, err)
	}
	coordinator := rep.Leaders[len(rep.Leaders)-1]
	for _, p := range names {
		why := last.Failed[p]
		if !strings.Contains(why, fmt.Sprintf("refuses %s round %d", phase, round)) || !strings.Contains(why, "coordinator "+coordinator) ||
			!strings.Contains(why, replayed) {
			t.Errorf("%s: %q, want a refusal naming the coordinator and %q", p, why, replayed)
		}
		if strings.Contains(why, "true") || strings.Contains(why, "false") {
			t.Errorf("%s's refusal %q names a value", p, why)
		}
	}
	for _, s := range rep.Sent {
		if s.Message.Phase == phase && s.Message.Round == round && s.Message.Type != "job/output" && s.Message.Type != jobrun.FailedType {
			t.Errorf("%s sent %s in the refused step", s.From, s.Message.Type)
		}
		if s.Message.Phase == "merge" && s.Message.Type == secureagg.TypeShare {
			t.Errorf("%s sent a decryption share of the merge", s.From)
		}
	}
	for _, rec := range recs {
		if rec.Step.Phase == "merge" && rec.Error == "" {
			t.Errorf("merge sums were decrypted and committed")
		}
	}
}

// checkProfile: every message is within the leakage profile's forms, and
// no party's cell value is in any message or log record.
func checkProfile(t *testing.T, rep *jobtest.Report, values [][]float64) {
	t.Helper()
	if bad := rep.SentOutside(wire.DiscloseCiphertext, wire.DiscloseDecryptionShare,
		wire.DisclosePublicResult, wire.DiscloseControl); len(bad) > 0 {
		t.Errorf("%d messages outside the profile, first %s %s", len(bad), bad[0].Message.Type, bad[0].Disclosure)
	}
	for p, vs := range values {
		for _, x := range vs {
			if x == math.Trunc(x) {
				continue
			}
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], math.Float64bits(x))
			if s := rep.SentHolding(b[:]); len(s) > 0 {
				t.Fatalf("party %d's value %v in a message from %s", p, x, s[0].From)
			}
			if e := rep.LogHolding(b[:]); len(e) > 0 {
				t.Fatalf("party %d's value %v in the log (%s)", p, x, e[0].Op)
			}
		}
	}
}

// TestCoordinatorCannotDecryptLoneLocal: a coordinator that asks the merge
// to aggregate a group of org03's lone local is refused by every party,
// which names it and the merge; nothing is decrypted.
func TestCoordinatorCannotDecryptLoneLocal(t *testing.T) {
	t.Parallel()
	path, names, values := levelConsortium(t, []float64{10, 10, 100}, []int{6, 6, 6})
	rep, err := runLying(t, loneGroup(ref{Party: 2}), path, names)
	checkRefused(t, rep, err, "merge", 0, names, loneRefusal)
	checkProfile(t, rep, values)
}

// TestCoordinatorCannotForgeBits: a coordinator that commits merge test
// bits other than those the root decrypted is refused by every party at
// the next step that replays them, naming it and the forged round. In
// round 0, all three locals similar, it commits "dissimilar" for both of
// the centre's pairs, so that org01's local would be left alone and its
// sums decrypted; in the last round it joins org03's dissimilar local
// into the group of the others.
func TestCoordinatorCannotForgeBits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		levels         []float64
		kind           lying
		phase          string
		round          int
		forged, rounds int
	}{
		{"round 0, caught at round 1", []float64{10, 10, 10}, forgeBits(0, allBits(false)), "test", 1, 0, 1},
		{"last round, caught at the merge", []float64{10, 10, 100}, forgeBits(1, allBits(true)), "merge", 0, 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, names, values := levelConsortium(t, c.levels, []int{6, 6, 6})
			rep, err := runLying(t, c.kind, path, names)
			checkRefused(t, rep, err, c.phase, c.round, names, fmt.Sprintf("test round %d", c.forged))
			checkProfile(t, rep, values)
			tests := 0
			for _, rec := range rep.Records() {
				if rec.Step.Phase == "test" && rec.Error == "" {
					tests++
				}
			}
			if tests != c.rounds {
				t.Errorf("%d merge test rounds committed, want %d", tests, c.rounds)
			}
		})
	}
}

// loneRefusal is what a party's refusal of a group with one contributor
// says: of the 3 its slots need by default (params.min_group_parties).
const loneRefusal = "contributions from 1 of the 3 parties"
