package hamming

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/wire"
)

// The leakage profile of the package doc, checked over real nodes on
// every message each party sends, every step output, every decision and
// failure the coordinator commits, the job's record and every node's log:
//   - the parties send each other only psi-blinded ids, distance
//     ciphertexts and control (the key, the ready answer); nothing of the
//     job reaches the third member but the log;
//   - only north (the key holder) sends the key, only south the blinded
//     comparisons, n·1 of them, and north's ciphertexts n;
//   - outputs are the counts: north's matches are compared − distance,
//     south's hold only compared; the decision is exactly {compared,
//     distance};
//   - no patient id and no diagnosis of either party appears in any of it.
//
// It runs with the member east coordinating and with north coordinating.
func TestLeakage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var c nodewatch.Capture
	cl := startCluster(t, ctx, &c, nodewatch.Watch{Kind: Kind{}})
	compared, distance := plain(t, "diagnosis", 0)
	for _, leader := range []string{"east", "north"} {
		t.Run("leader="+leader, func(t *testing.T) {
			if err := cl.MakeLeader(ctx, leader); err != nil {
				t.Fatal(err)
			}
			c.Reset()
			n := cl.Node(leader)
			rec, err := n.Wait(ctx, submit(t, ctx, n, exampleSpec))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != node.StatusDone {
				t.Fatalf("job %s: %s", rec.Status, rec.Error)
			}
			check(t, &c, leader, compared, distance, rec)
		})
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.LogBytes == 0 {
		t.Error("no node log captured: the log checks were empty")
	}
}

func check(t *testing.T, c *nodewatch.Capture, leader string, compared, distance int, rec *node.JobRecord) {
	t.Helper()
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if len(c.Decisions) != 1 {
		t.Fatalf("%d decisions, want 1", len(c.Decisions))
	}
	attempt := c.Committed[0]
	counts := map[string]int{}
	for _, s := range c.Sent {
		peer := map[string]string{"north": "south", "south": "north"}[s.From]
		switch s.D {
		case wire.DisclosePSIBlinded, wire.DiscloseDistance:
			if s.To != peer {
				t.Errorf("%s sent %s (%s) to %s", s.From, s.M.Type, s.D, s.To)
			}
		case wire.DiscloseControl:
		default:
			t.Errorf("%s sent %s to %s disclosing %q", s.From, s.M.Type, s.To, s.D)
		}
		if s.M.Attempt == attempt {
			counts[s.From+" "+s.M.Type]++
		}
	}
	chunks := (compared + hamdist.ChunkSize - 1) / hamdist.ChunkSize
	for k, want := range map[string]int{"north " + hamdist.TypeKey: 1, "north " + hamdist.TypeCts: chunks, "south " + hamdist.TypeBlinded: chunks,
		"south " + hamdist.TypeKey: 0, "north " + hamdist.TypeBlinded: 0, "south " + hamdist.TypeReady: 1, "north " + hamdist.TypeDone: 1} {
		if counts[k] != want {
			t.Errorf("%s: %d messages, want %d", k, counts[k], want)
		}
	}
	outputs := 0
	for _, out := range c.Outputs {
		if out.Attempt != attempt {
			continue
		}
		outputs++
		var o distanceOutput
		if err := wire.Unmarshal(out.Body, &o); err != nil {
			t.Fatal(err)
		}
		want := distanceOutput{Compared: compared}
		if o.Holder {
			want = distanceOutput{Holder: true, Compared: compared, Matches: compared - distance}
		}
		if o != want {
			t.Errorf("output %+v, want %+v", o, want)
		}
	}
	if outputs != 2 {
		t.Errorf("%d outputs of the committed attempt, want 2", outputs)
	}
	var d distanceDecision
	if err := wire.Unmarshal(c.Decisions[0], &d); err != nil || d != (distanceDecision{compared, distance}) {
		t.Errorf("decision %+v (%v), want {%d %d}", d, err, compared, distance)
	}
	if len(c.Failures) != 0 {
		t.Logf("failures of earlier attempts (a leader change under load): %q", c.Failures)
	}
	noNeedles(t, c, append([][]byte{rec.Result, []byte(rec.Error)}, c.Decisions...))
	t.Logf("leader %s: %d messages, distance %d of %d", leader, len(c.Sent), distance, compared)
}

// noNeedles checks every captured byte string (and extra) for a value of
// either party's table.
func noNeedles(t *testing.T, c *nodewatch.Capture, extra [][]byte) {
	t.Helper()
	hay := append([][]byte{c.Logs.Bytes()}, extra...)
	for _, o := range c.Outputs {
		hay = append(hay, o.Body)
	}
	for _, s := range c.Sent {
		hay = append(hay, s.M.Body)
	}
	for _, f := range c.Failures {
		hay = append(hay, []byte(f))
	}
	for _, nd := range needles(t) {
		for _, h := range hay {
			if bytes.Contains(h, nd) {
				t.Errorf("a message, output, record or log line holds the value %q", nd)
				break
			}
		}
	}
}

// A hostile coordinator that, the distance committed, asks for the step
// again as round 1 is refused by both parties before either reads a row:
// no ciphertext or blinded id leaves after the first round, and the
// failure names the rule, not a value.
func TestHostileCoordinator(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var c nodewatch.Capture
	again := func(ctx context.Context, co job.Coordinator) (job.Result, error) {
		res, err := Kind{}.Coordinate(ctx, co)
		if err != nil {
			return nil, err
		}
		call := job.Call[distanceArgs]{Round: 1, Parties: co.Spec().PartyNames()}
		if _, err := distanceRound.Run(ctx, co, call, func(o *job.Outcome[distanceOutput]) (distanceDecision, error) {
			return distanceDecision{}, o.Err()
		}); err == nil {
			return nil, errors.New("a second distance round ran")
		}
		return res, nil
	}
	cl := startCluster(t, ctx, &c, nodewatch.Watch{Kind: Kind{}, Lead: again})
	if err := cl.MakeLeader(ctx, "east"); err != nil {
		t.Fatal(err)
	}
	n := cl.Node("east")
	rec, err := n.Wait(ctx, submit(t, ctx, n, exampleSpec))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, s := range c.Sent {
		if s.M.Round == 1 && s.D != wire.DiscloseControl {
			t.Errorf("%s sent %s in the second round", s.From, s.M.Type)
		}
	}
	refused := 0
	for _, f := range c.Failures {
		if strings.Contains(f, "hamming has one step, distance round 0") {
			refused++
		}
	}
	if refused < 2 {
		t.Errorf("failures %q: want both parties' refusals", c.Failures)
	}
	noNeedles(t, &c, nil)
}

// A hostile member that truncates its blinded comparisons fails the job:
// the key holder names the bad message, nothing panics, no distance is
// committed, and no error text holds a value.
func TestHostileMember(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var c nodewatch.Capture
	cut := func(m *wire.Message) *wire.Message {
		if m.Type != hamdist.TypeBlinded {
			return m
		}
		cp := *m
		cp.Body = cp.Body[:len(cp.Body)-1]
		return &cp
	}
	cl := startCluster(t, ctx, &c, nodewatch.Watch{Kind: Kind{}, Corrupter: "south", Corrupt: cut})
	if err := cl.MakeLeader(ctx, "east"); err != nil {
		t.Fatal(err)
	}
	n := cl.Node("east")
	rec, err := n.Wait(ctx, submit(t, ctx, n, exampleSpec))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status == node.StatusDone || !strings.Contains(rec.Error, "bad message from peer") {
		t.Fatalf("job %s: %q, want a failure naming the bad message", rec.Status, rec.Error)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, d := range c.Decisions {
		if d != nil {
			t.Errorf("a decision was committed: %x", d)
		}
	}
	noNeedles(t, &c, [][]byte{[]byte(rec.Error)})
}
