package node_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// relay is a three-round test job in which, in round 1, org2 sends org3 a
// note that org3 waits for. org2's send of attempt 1 is told on sent.
type relay struct {
	sent chan error
}

const (
	relayNote = "relay/note"
	// relayStepMS is the step timeout: long enough that a test waiting
	// for it fails by its own context first.
	relayStepMS = 10 * 60 * 1000
)

func (relay) Validate(*job.Spec) error { return nil }

func (relay) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	for r := range 3 {
		a, err := c.Start(ctx, job.Step{Phase: "relay", Round: r, TimeoutMS: relayStepMS})
		if err != nil {
			return nil, err
		}
		if a.Record() != nil {
			continue
		}
		outs, err := a.Wait(ctx)
		if err != nil {
			return nil, err
		}
		if len(outs.Failed) > 0 {
			return nil, fmt.Errorf("round %d: %v", r, outs.Failed)
		}
		if _, err := a.Commit(ctx, outs, nil, ""); err != nil {
			return nil, err
		}
	}
	return job.Result{"rounds": 3}, nil
}

func (k relay) Open(_ context.Context, p job.Participant) (job.Session, error) {
	return relaySession{k: k, p: p}, nil
}

func (relay) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseControl }

type relaySession struct {
	k relay
	p job.Participant
}

func (relaySession) Close() {}

func (s relaySession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if step.Round != 1 {
		return []byte{}, nil
	}
	const from, to = "org2", "org3"
	switch s.p.Self() {
	case from:
		err := s.p.Send(ctx, to, step.Message(from, relayNote, []byte("note")), wire.DiscloseControl)
		if step.Attempt == 1 {
			select {
			case s.k.sent <- err:
			default:
			}
		}
		return []byte{}, err
	case to:
		if _, err := s.p.Receive(ctx, from, step.Key(relayNote)); err != nil {
			return nil, fmt.Errorf("waiting for %s's note: %w", from, err)
		}
	}
	return []byte{}, nil
}

// A party whose log lags the attempt its peers run, and that restarts
// after a peer's message of it was acknowledged (held in memory, lost
// with the process), reports the attempt as restarted when the attempt
// reaches its log, so the step is re-run at once instead of waiting for
// the lost message until the step's timeout (ten minutes here, beyond
// the test's context): the leader appended the attempt before the
// restarted node started. Replication of round 1's start to org3 is
// withheld, so org2's note reaches org3 before org3's log holds it.
func TestRestartLosingEarlyMessageRerunsAttempt(t *testing.T) {
	t.Parallel()
	kind := relay{sent: make(chan error, 1)}
	c := startCluster(t, 3, job.Registry{"relay": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.MakeLeader(ctx, "org1"); err != nil {
		t.Fatal(err)
	}
	node.WithholdStart(c.Node("org3"), "relay", 1, 1)
	id, err := c.Node("org1").Submit(ctx, []byte("kind: relay\nparties: [{name: org1}, {name: org2}, {name: org3}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-kind.sent:
		if err != nil {
			t.Fatalf("org2's note did not reach org3 before its log held the attempt: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("org2 never sent its note")
	}
	if err := c.Kill("org3"); err != nil {
		t.Fatal(err)
	}
	rec := restartThenDone(t, ctx, c, "org3", id)
	for _, s := range rec.Steps {
		if s.Phase == "relay" && s.Round == 1 && s.Attempt < 2 {
			t.Errorf("round 1 ended in attempt %d: org3 did not report the attempt as restarted", s.Attempt)
		}
	}
}

// restartThenDone restarts the stopped member name of c and waits for
// job id to end done, which it returns; a wait cut by ctx says that the
// job waited out a step for what the member lost.
func restartThenDone(t *testing.T, ctx context.Context, c *sim.Cluster, name, id string) *node.JobRecord {
	t.Helper()
	if _, err := c.Restart(name); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Node("org1").Wait(ctx, id)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the job waited for what the restarted %s lost, until the test's deadline", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	return rec
}
