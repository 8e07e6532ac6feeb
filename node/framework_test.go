package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// prober is a multi-round test job that exercises the framework: each
// round every party returns fresh random bytes (its private output, which
// must reach the coordinator only), the coordinator commits how many
// outputs it got (its public decision), and in round 1 it sends the first
// party a note within the attempt. It counts sessions opened and closed and
// remembers every output, so tests can look for them where they must not be.
type prober struct {
	opens, closes atomic.Int32
	mu            sync.Mutex
	outputs       [][]byte
	histories     map[string][]int // party -> len(History) at each Open
	notes         atomic.Int32
}

const noteType = "probe/note"

type proberParams struct {
	Rounds int   `yaml:"rounds"`
	HoldMS int   `yaml:"hold_ms"`
	Hold   []int `yaml:"hold"` // rounds that wait hold_ms
}

func (k *prober) params(spec *job.Spec) (*proberParams, error) {
	p := &proberParams{Rounds: 3}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (k *prober) Validate(spec *job.Spec) error { _, err := k.params(spec); return err }

type proberDecision struct {
	Outputs int    `msgpack:"outputs"`
	Pick    uint64 `msgpack:"pick"` // from the job's seed: the same on every replay
}

func (k *prober) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := k.params(c.Spec())
	if err != nil {
		return nil, err
	}
	total := 0
	for r := 0; r < p.Rounds; r++ {
		a, err := c.Start(ctx, job.Step{Phase: "probe", Round: r, TimeoutMS: 20000})
		if err != nil {
			return nil, err
		}
		rec := a.Record()
		if rec == nil {
			if r == 1 {
				st := a.Step()
				if err := c.Send(ctx, st.Parties[0], st.Message(c.Self(), noteType, []byte("you won")), "probe-note"); err != nil {
					return nil, err
				}
			}
			outs, err := a.Wait(ctx)
			if err != nil {
				return nil, err
			}
			if len(outs.Failed) > 0 {
				return nil, fmt.Errorf("round %d: %v", r, outs.Failed)
			}
			d := proberDecision{Outputs: len(outs.Results), Pick: job.Rand(c.Seed(), "pick").Uint64()}
			b, err := wire.Marshal(&d)
			if err != nil {
				return nil, err
			}
			if rec, err = a.Commit(ctx, outs, b, ""); err != nil {
				return nil, err
			}
		}
		var d proberDecision
		if err := wire.Unmarshal(rec.Decision, &d); err != nil {
			return nil, err
		}
		if d.Pick != job.Rand(c.Seed(), "pick").Uint64() {
			return nil, errors.New("the seed gave another pick on replay")
		}
		total += d.Outputs
	}
	return job.Result{"outputs": total}, nil
}

func (k *prober) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	k.opens.Add(1)
	prm, err := k.params(p.Spec())
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	if k.histories == nil {
		k.histories = map[string][]int{}
	}
	k.histories[p.Self()] = append(k.histories[p.Self()], len(p.History()))
	k.mu.Unlock()
	return &proberSession{k: k, p: p, prm: prm}, nil
}

func (k *prober) OutputDisclosure(job.Step) wire.Disclosure { return "probe-output" }

type proberSession struct {
	k   *prober
	p   job.Participant
	prm *proberParams
}

func (s *proberSession) Close() { s.k.closes.Add(1) }

func (s *proberSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if step.Round == 1 && step.Parties[0] == s.p.Self() {
		m, err := s.p.Receive(ctx, step.Coordinator, step.Key(noteType))
		if err != nil {
			return nil, fmt.Errorf("waiting for the coordinator's note: %w", err)
		}
		if string(m.Body) == "you won" {
			s.k.notes.Add(1)
		}
	}
	for _, r := range s.prm.Hold {
		if r == step.Round {
			select {
			case <-time.After(time.Duration(s.prm.HoldMS) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	out := make([]byte, 24)
	if _, err := rand.Read(out); err != nil {
		return nil, err
	}
	s.k.mu.Lock()
	s.k.outputs = append(s.k.outputs, out)
	s.k.mu.Unlock()
	return out, nil
}

func proberSpec(parties []string, params string) []byte {
	var b strings.Builder
	b.WriteString("kind: probe\nparties:\n")
	for _, p := range parties {
		fmt.Fprintf(&b, "  - name: %s\n", p)
	}
	b.WriteString("params: " + params + "\n")
	return []byte(b.String())
}

// Private outputs reach the coordinator only: after a multi-round job, no
// node's Raft log or snapshot holds any party's output, the coordinator's
// note reached its one recipient and is in the coordinator's ledger, every
// session was opened once and closed once.
func TestPrivateOutputsStayOutOfTheLog(t *testing.T) {
	t.Parallel()
	kind := &prober{}
	c := startCluster(t, 3, job.Registry{"probe": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.MakeLeader(ctx, "org3"); err != nil { // the note's recipient org1 is remote
		t.Fatal(err)
	}
	rec := submitAndWait(t, ctx, c.Node("org1"), proberSpec(names(3), "{rounds: 4}"))
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	if got := resultField(t, rec, "outputs"); got != float64(12) {
		t.Fatalf("outputs %v, want 12", got)
	}
	if n := kind.notes.Load(); n != 1 {
		t.Errorf("the note arrived %d times, want once", n)
	}
	waitFor(t, ctx, func() bool { return kind.closes.Load() == 3 })
	if o := kind.opens.Load(); o != 3 {
		t.Errorf("%d sessions opened, want one per party", o)
	}
	for _, n := range c.Running() {
		if err := n.Raft().Snapshot().Error(); err != nil {
			t.Fatal(err)
		}
	}
	kind.mu.Lock()
	outputs := kind.outputs
	kind.mu.Unlock()
	if len(outputs) != 12 {
		t.Fatalf("captured %d outputs", len(outputs))
	}
	files := 0
	for _, name := range c.Names {
		raftDir := filepath.Join(c.Dir, name, "raft")
		err := filepath.WalkDir(raftDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			for _, o := range outputs {
				if bytes.Contains(b, o) {
					t.Errorf("%s holds a party's private output", path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 2*len(c.Names) {
		t.Fatalf("searched only %d files (log and snapshots)", files)
	}
	// The coordinator's ledger names the note; each party's ledger records
	// its outputs as disclosed to the coordinator.
	ledgers := map[string]string{}
	for _, name := range c.Names {
		b, err := os.ReadFile(filepath.Join(c.Dir, name, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		ledgers[name] = string(b)
	}
	all := strings.Join([]string{ledgers["org1"], ledgers["org2"], ledgers["org3"]}, "")
	if n := strings.Count(ledgers["org3"], `"type":"probe/note"`); n != 1 {
		t.Errorf("the coordinator's ledger has %d note entries, want 1", n)
	}
	if !strings.Contains(all, `"disclosure":"probe-output"`) {
		t.Error("no ledger records an output as disclosed to the coordinator")
	}
}

// A replayed Coordinate that derives another step than the committed one
// fails the job with an error naming the field.
func TestReplayMismatchFailsTheJob(t *testing.T) {
	t.Parallel()
	kind := &drifting{}
	c := startCluster(t, 3, job.Registry{"drift": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.MakeLeader(ctx, "org3"); err != nil {
		t.Fatal(err)
	}
	id, err := c.Node("org1").Submit(ctx, []byte("kind: drift\nparties: [{name: org1}, {name: org2}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	// The runtime's admit phase is the first step, the kind's the second.
	waitFor(t, ctx, func() bool { js, ok := c.Node("org1").Job(id); return ok && len(js.Steps) == 2 })
	if err := c.Kill("org3"); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Node("org1").Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "field args") {
		t.Fatalf("job %s: %q, want a failure naming field args", rec.Status, rec.Error)
	}
}

// driftRound is drifting's one round: its args are the coordinator's name.
var driftRound = job.Round[string, struct{}, int]{Phase: "p"}

// drifting commits a step whose args name the coordinator: not
// deterministic, so a new leader derives other args.
type drifting struct{}

func (drifting) Validate(*job.Spec) error { return nil }
func (drifting) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	_, err := driftRound.Run(ctx, c, job.Call[string]{Args: c.Self(), TimeoutMS: 20000},
		func(*job.Outcome[struct{}]) (int, error) { return 0, nil })
	return job.Result{}, err
}
func (drifting) Open(context.Context, job.Participant) (job.Session, error) {
	return holdSession{}, nil
}
func (drifting) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseControl }

// holdSession never finishes a step on its own.
type holdSession struct{}

func (holdSession) Close() {}
func (holdSession) Step(ctx context.Context, _ job.Step) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A party restarted mid-job opens a new session, which sees the finished
// steps in History, and the job ends with the same result.
func TestRestartedPartyReopensSession(t *testing.T) {
	t.Parallel()
	kind := &prober{}
	c := startCluster(t, 3, job.Registry{"probe": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.MakeLeader(ctx, "org1"); err != nil {
		t.Fatal(err)
	}
	id, err := c.Node("org1").Submit(ctx, proberSpec(names(3), "{rounds: 4, hold: [2], hold_ms: 2500}"))
	if err != nil {
		t.Fatal(err)
	}
	// After the admit phase, rounds 0 and 1 done and round 2 started.
	waitFor(t, ctx, func() bool { js, ok := c.Node("org1").Job(id); return ok && len(js.Steps) == 4 })
	if err := c.Kill("org3"); err != nil {
		t.Fatal(err)
	}
	restartThenDone(t, ctx, c, "org3", id)
	kind.mu.Lock()
	h := kind.histories["org3"]
	kind.mu.Unlock()
	if len(h) != 2 || h[0] != 0 || h[1] < 2 {
		t.Fatalf("org3 opened sessions with histories %v, want [0 ≥2] (all: %v)", h, kind.histories)
	}
}

// A cancelled job fails everywhere with "cancelled" and every session is
// closed; nothing keeps running.
func TestCancelJob(t *testing.T) {
	t.Parallel()
	kind := &prober{}
	c := startCluster(t, 3, job.Registry{"probe": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id, err := c.Node("org2").Submit(ctx, proberSpec(names(3), "{rounds: 2, hold: [1], hold_ms: 30000}"))
	if err != nil {
		t.Fatal(err)
	}
	// After the admit phase and round 0, round 1 holds.
	waitFor(t, ctx, func() bool { js, ok := c.Node("org1").Job(id); return ok && len(js.Steps) == 3 })
	if err := c.Node("org3").Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Running() {
		rec, err := n.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "cancelled") {
			t.Fatalf("%s sees the job %s: %q", n.Name(), rec.Status, rec.Error)
		}
	}
	waitFor(t, ctx, func() bool { return kind.closes.Load() == kind.opens.Load() })
	if err := c.Node("org1").Cancel(ctx, id); !errors.Is(err, node.ErrNotRunning) {
		t.Fatalf("cancelling an ended job: %v", err)
	}
}

// With max_jobs 1, jobs submitted together run one at a time in submission
// order, and a waiting job reports its place in the queue.
func TestJobsQueue(t *testing.T) {
	t.Parallel()
	kind := &prober{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names(3), sim.ClusterOptions{
		Kinds: job.Registry{"probe": kind}, MaxJobs: 1,
	})
	defer c.Close()
	var ids []string
	for i := 0; i < 3; i++ {
		id, err := c.Node("org1").Submit(ctx, proberSpec(names(3), "{rounds: 1, hold: [0], hold_ms: 800}"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	js, _ := c.Node("org1").Job(ids[2])
	if js.Status != node.StatusQueued || js.Queue < 1 {
		t.Fatalf("third job: status %s, queue %d", js.Status, js.Queue)
	}
	var finished []time.Time
	for _, id := range ids {
		rec, err := c.Node("org1").Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != node.StatusDone {
			t.Fatal(rec.Error)
		}
		finished = append(finished, rec.Finished)
		full, _ := c.Node("org1").Job(id)
		if len(full.Steps) != 2 || !full.Steps[0].Done || !full.Steps[1].Done { // admit, then the probe
			t.Fatalf("job %s steps %+v", id, full.Steps)
		}
	}
	for i := 1; i < len(ids); i++ {
		first, _ := c.Node("org1").Job(ids[i])
		if first.Steps[0].Started.Before(finished[i-1]) {
			t.Errorf("job %d started before job %d finished", i, i-1)
		}
	}
}

// A party that cannot record what it sends (its disk is full) reports its
// own error to the coordinator, so the failed job names the cause instead
// of "no output".
func TestFullDiskIsReported(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	kind := &prober{}
	auditDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names(3), sim.ClusterOptions{
		Kinds: job.Registry{"probe": kind}, AuditDir: auditDir,
		Setup: func([]string) (func(name, dataDir string) error, error) {
			return func(name, _ string) error {
				if name != "org2" {
					return nil
				}
				return os.Symlink("/dev/full", filepath.Join(auditDir, name+".jsonl"))
			}, nil
		},
	})
	defer c.Close()
	if err := c.MakeLeader(ctx, "org1"); err != nil {
		t.Fatal(err)
	}
	rec := submitAndWait(t, ctx, c.Node("org1"), proberSpec(names(3), "{rounds: 3}"))
	if rec.Status != node.StatusFailed {
		t.Fatalf("job %s", rec.Status)
	}
	if why := rec.Failures["org2"]; !strings.Contains(why, "no space left on device") {
		t.Fatalf("failures %v, error %q: org2's cause is not named", rec.Failures, rec.Error)
	}
}

// A node restarted after a job failed does not run any of its steps again.
func TestRestartAfterFailedJobRunsNothing(t *testing.T) {
	t.Parallel()
	kind := &prober{}
	c := startCluster(t, 3, job.Registry{"probe": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id, err := c.Node("org1").Submit(ctx, proberSpec(names(3), "{rounds: 2, hold: [1], hold_ms: 30000}"))
	if err != nil {
		t.Fatal(err)
	}
	// After the admit phase and round 0, round 1 holds.
	waitFor(t, ctx, func() bool { js, ok := c.Node("org1").Job(id); return ok && len(js.Steps) == 3 })
	if err := c.Node("org1").Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool { return kind.closes.Load() == 3 })
	opens := kind.opens.Load()
	for _, name := range []string{"org2", "org3"} {
		if err := c.Kill(name); err != nil {
			t.Fatal(err)
		}
		n, err := c.Restart(name)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, func() bool { js, ok := n.Job(id); return ok && js.Status == node.StatusFailed })
	}
	time.Sleep(time.Second) // give a wrongly woken runner time to act
	if got := kind.opens.Load(); got != opens {
		t.Fatalf("restarted nodes opened %d sessions for a failed job", got-opens)
	}
}

// Over the HTTP API: a queued job shows its place, cancel answers with the
// failed job, a second cancel is a conflict, an unknown id is not found,
// and the queued job runs once the cancelled one has freed the slot.
func TestCancelAndQueueOverHTTP(t *testing.T) {
	t.Parallel()
	kind := &prober{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names(3), sim.ClusterOptions{Kinds: job.Registry{"probe": kind}, MaxJobs: 1})
	defer c.Close()
	srv := httptest.NewServer(withToken(c.Node("org2")))
	defer srv.Close()
	first, err := c.Node("org1").Submit(ctx, proberSpec(names(3), "{rounds: 1, hold: [0], hold_ms: 30000}"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Node("org1").Submit(ctx, proberSpec(names(3), "{rounds: 1}"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool { js, ok := c.Node("org2").Job(second); return ok && js.Queue == 1 })
	var js node.JobStatus
	if code := getJSON(t, srv.URL+"/v1/jobs/"+second, &js); code != http.StatusOK || js.Status != node.StatusQueued || js.Queue != 1 {
		t.Fatalf("queued job: %d %s place %d", code, js.Status, js.Queue)
	}
	if code, msg := post(t, srv.URL+"/v1/jobs/"+first+"/cancel", nil); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, msg)
	}
	if code, _ := post(t, srv.URL+"/v1/jobs/"+first+"/cancel", nil); code != http.StatusConflict {
		t.Fatalf("second cancel: %d, want 409", code)
	}
	if code, _ := post(t, srv.URL+"/v1/jobs/nope/cancel", nil); code != http.StatusNotFound {
		t.Fatalf("cancel of an unknown job: %d, want 404", code)
	}
	// The queued job runs once the slot is free.
	if rec, err := c.Node("org2").Wait(ctx, second); err != nil || rec.Status != node.StatusDone {
		t.Fatalf("queued job after the cancel: %v %+v", err, rec)
	}
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}
