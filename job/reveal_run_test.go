package job_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// seedKind draws a joint seed over its parties, then runs one step, use,
// in which every party reports the seed it folds from the log; the
// coordinator checks that each is its own and returns it.
type seedKind struct{}

var useRound = job.Round[struct{}, useOutput, struct{}]{Phase: "use"}

type useOutput struct {
	Seed []byte `msgpack:"seed"`
}

func (seedKind) Validate(*job.Spec) error { return nil }

func (seedKind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

func (seedKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	js := job.NewJointSeed(c.JobID(), 0, c.Spec().PartyNames())
	seed, err := js.Draw(ctx, c, 0)
	if err != nil {
		return nil, err
	}
	_, err = useRound.Run(ctx, c, job.Call[struct{}]{Parties: js.Parties}, func(o *job.Outcome[useOutput]) (struct{}, error) {
		if err := o.Err(); err != nil {
			return struct{}{}, err
		}
		for _, p := range js.Parties {
			if !bytes.Equal(o.Results[p].Seed, seed) {
				return struct{}{}, fmt.Errorf("party %s folds another seed", p)
			}
		}
		return struct{}{}, nil
	})
	if err != nil {
		return nil, err
	}
	return job.Result{"seed": hex.EncodeToString(seed)}, nil
}

func (seedKind) Open(_ context.Context, p job.Participant) (job.Session, error) {
	return seedSession{p: p, js: job.NewJointSeed(p.JobID(), 0, p.Spec().PartyNames())}, nil
}

type seedSession struct {
	p  job.Participant
	js job.JointSeed
}

func (s seedSession) Close() {}

func (s seedSession) Step(_ context.Context, step job.Step) ([]byte, error) {
	if job.IsSeedStep(step) {
		return s.js.Serve(s.p, step)
	}
	return useRound.Serve(step, func(struct{}) (useOutput, error) {
		seed, err := s.js.Seed(s.p)
		return useOutput{Seed: seed}, err
	})
}

func seedSpec(t *testing.T) *job.Spec {
	t.Helper()
	s, err := job.ParseSpec([]byte("kind: seedtest\nparties: [{name: ann}, {name: bob}, {name: cat}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runSeed runs seedKind with the given faults and checks the draw against
// its profile and the result against the log.
func runSeed(t *testing.T, opts jobtest.Options) *jobtest.Report {
	t.Helper()
	spec := seedSpec(t)
	opts.Secrets = jobtest.SecretsIn(t.TempDir(), spec.PartyNames())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, seedKind{}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := rep.CheckJointSeed(job.NewJointSeed(rep.JobID, 0, spec.PartyNames()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result["seed"] != hex.EncodeToString(seed) {
		t.Fatalf("result %v, the log's seed %x", rep.Result, seed)
	}
	return rep
}

// outputsOf returns each party's outputs of the steps of phase, by
// attempt.
func outputsOf(rep *jobtest.Report, phase string) map[string]map[int][]byte {
	out := map[string]map[int][]byte{}
	for _, o := range rep.Outputs {
		if o.Step.Phase == phase {
			if out[o.Party] == nil {
				out[o.Party] = map[int][]byte{}
			}
			out[o.Party][o.Step.Attempt] = o.Output
		}
	}
	return out
}

// sameAcrossAttempts fails unless phase ran more than once and every
// party sent the same output in every attempt.
func sameAcrossAttempts(t *testing.T, rep *jobtest.Report, phase string) {
	t.Helper()
	rerun := false
	for p, byAttempt := range outputsOf(rep, phase) {
		var first []byte
		for _, o := range byAttempt {
			if first == nil {
				first = o
			} else if !bytes.Equal(o, first) {
				t.Fatalf("%s sent different %s outputs in two attempts", p, phase)
			}
		}
		rerun = rerun || len(byAttempt) > 1
	}
	if !rerun {
		t.Fatalf("%s never ran twice", phase)
	}
}

// TestJointSeedRun: every party folds the coordinator's seed, which the
// log determines, and the draw keeps its profile.
func TestJointSeedRun(t *testing.T) {
	a := runSeed(t, jobtest.Options{Members: []string{"hub"}, Leader: "hub"})
	b := runSeed(t, jobtest.Options{})
	if a.Result["seed"] == b.Result["seed"] {
		t.Fatal("two jobs drew one seed")
	}
}

// A leader change (and the sender's restart) in the middle of each step:
// the step re-runs and every party sends the same commitment, and the same
// opening, again, from the contribution it keeps.
func TestJointSeedRerunSendsTheSame(t *testing.T) {
	for _, phase := range []string{job.PhaseSeedCommit, job.PhaseSeedReveal} {
		t.Run(phase, func(t *testing.T) {
			var once sync.Once
			rep := runSeed(t, jobtest.Options{OnSend: func(s jobtest.Sent) jobtest.Fault {
				f := jobtest.Fault{}
				if s.Message.Phase == phase && s.Message.Attempt == 1 {
					once.Do(func() { f = jobtest.Fault{Leader: "cat", Restart: []string{s.From}} })
				}
				return f
			}})
			if len(rep.Leaders) < 2 {
				t.Fatalf("leaders %v: no leader change", rep.Leaders)
			}
			sameAcrossAttempts(t, rep, phase)
		})
	}
}

// A new leader after the draw replays it from the log (nothing re-runs)
// and gets the seed the parties fold; parties restarted before the use
// step fold it again from the log and their kept contributions.
func TestJointSeedReplay(t *testing.T) {
	rep := runSeed(t, jobtest.Options{OnStep: func(ev jobtest.Event) jobtest.Fault {
		switch {
		case ev.Kind == jobtest.Committed && ev.Step.Phase == job.PhaseSeedReveal:
			return jobtest.Fault{Leader: "bob"}
		case ev.Kind == jobtest.Starting && ev.Step.Phase == "use" && ev.Step.Attempt == 1:
			return jobtest.Fault{Restart: []string{"ann", "bob", "cat"}}
		}
		return jobtest.Fault{}
	}})
	if len(rep.Leaders) < 2 {
		t.Fatalf("leaders %v: no leader change", rep.Leaders)
	}
	for p, byAttempt := range outputsOf(rep, job.PhaseSeedCommit) {
		if len(byAttempt) != 1 {
			t.Fatalf("%s committed in %d attempts: the new leader re-ran the draw", p, len(byAttempt))
		}
	}
}

// CheckJointSeed catches a contribution in a message of another step, and
// a reveal started before the commitments were committed.
func TestCheckJointSeedCatches(t *testing.T) {
	rep := runSeed(t, jobtest.Options{})
	js := job.NewJointSeed(rep.JobID, 0, seedSpec(t).PartyNames())
	var opened job.SeedOpenings
	for _, e := range rep.Log {
		if e.Record != nil && e.Record.Step.Phase == job.PhaseSeedReveal {
			if err := wire.Unmarshal(e.Record.Decision, &opened); err != nil {
				t.Fatal(err)
			}
		}
	}
	leak := *rep
	m := &wire.Message{Type: "x", Phase: "use", Body: opened.Openings[1].Contribution}
	leak.Sent = append(append([]jobtest.Sent(nil), rep.Sent...), jobtest.Sent{From: "bob", To: "ann", Message: m, Disclosure: wire.DisclosePublicResult})
	if _, err := leak.CheckJointSeed(js); err == nil {
		t.Fatal("bob's contribution in a use message passed")
	}
	early := *rep
	early.Log = nil
	for _, e := range rep.Log {
		if e.Op == jobtest.OpStart && e.Step.Phase == job.PhaseSeedReveal {
			early.Log = append([]jobtest.Entry{e}, early.Log...)
			continue
		}
		early.Log = append(early.Log, e)
	}
	if _, err := early.CheckJointSeed(js); err == nil {
		t.Fatal("a reveal started before the commitments passed")
	}
}
