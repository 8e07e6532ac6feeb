package sjc_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// chainCase writes a small generated chain (3 tables, 3 parties) with its
// test set and returns its spec and the in-process tree.
func chainCase(t *testing.T, params map[string]any) (*job.Spec, *tree.Tree) {
	t.Helper()
	ch, err := sjc.GenChain(sjc.ChainParams{Tables: 3, N: 60, V: 15, X: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, tb := range ch.Train {
		writeTable(t, filepath.Join(dir, name+".csv"), tb)
		writeTable(t, filepath.Join(dir, name+"_test.csv"), ch.Test[name])
	}
	spec := *ch.Spec
	spec.Dir, spec.Source, spec.Params = dir, "chain.yaml", params
	g, err := sjc.NewGraph(&spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sjc.ParseParams(&spec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sjc.Build(g, ch.Train, p)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := want.Size(); n < 7 {
		t.Fatalf("the chain's tree has %d nodes: too small to fail over in", n)
	}
	return &spec, want
}

func writeTable(t *testing.T, path string, tb *table.Table) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := sjc.WriteCSV(f, tb); err != nil {
		t.Fatal(err)
	}
}

// TestJobLeaderKilled: the leader is deposed in the middle of a level's
// choice (once the first offers of the second level are sent), in the
// middle of a level's split (once the first split summary of the third
// level is sent) and between levels; the new leaders re-run the unfinished
// steps from the log and the tree is the one grown without faults.
func TestJobLeaderKilled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, want := chainCase(t, nil)
	var mu sync.Mutex
	midChoose, midSplit, between, inFinish := false, false, false, false
	run, err := runJob(t, ctx, spec, jobtest.Options{
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			mu.Lock()
			defer mu.Unlock()
			m := s.Message
			if !midChoose && m.Type == jobrun.OutputType && m.Phase == "choose" && m.Round == 1 {
				midChoose = true
				return jobtest.Fault{Leader: "p2"}
			}
			if !midSplit && m.Type == sjc.TypeSplitSummary && m.Phase == "split" && m.Round == 2 {
				midSplit = true
				return jobtest.Fault{Leader: "p1"}
			}
			// Once a party has finished (kept its model, emptied its
			// state) it restarts, and finish runs again under a new leader.
			if !inFinish && m.Type == jobrun.OutputType && m.Phase == "finish" {
				inFinish = true
				return jobtest.Fault{Leader: "p1", Restart: []string{s.From}}
			}
			return jobtest.Fault{}
		},
		OnStep: func(ev jobtest.Event) jobtest.Fault {
			mu.Lock()
			defer mu.Unlock()
			if !between && ev.Kind == jobtest.Committed && ev.Step.Phase == "split" && ev.Step.Round == 1 {
				between = true
				return jobtest.Fault{Leader: "p3"}
			}
			return jobtest.Fault{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !midChoose || !midSplit || !between || !inFinish || len(run.rep.Leaders) < 5 {
		t.Fatalf("faults not injected: mid-choice %v, mid-split %v, between %v, in finish %v, leaders %v", midChoose, midSplit, between, inFinish, run.rep.Leaders)
	}
	if d := tree.Diff(want, run.tree); d != "" {
		t.Fatalf("after leader changes the tree differs: %s", d)
	}
	reruns := map[string]int{}
	for _, e := range run.rep.Log {
		if e.Op == jobtest.OpStart && e.Step.Attempt > 1 {
			reruns[e.Step.Phase]++
		}
	}
	if reruns["choose"] == 0 || reruns["split"] == 0 || reruns["finish"] == 0 {
		t.Fatalf("steps re-run after the leader changes: %v; want choose, split and finish", reruns)
	}
}

// TestJobPartyRestarted: parties restart between levels (their sessions
// reopen from their tables, the history and their kept state), as a
// level's choice starts, and in the middle of a split (the restarted party
// says so at once and the runtime runs the split again as a new attempt);
// the job finishes with the same tree.
func TestJobPartyRestarted(t *testing.T) {
	t.Parallel()
	jobPartyRestarted(t, sjc.Kind{})
}

// jobPartyRestarted is TestJobPartyRestarted with the parties' Kind.
func jobPartyRestarted(t *testing.T, kind sjc.Kind) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, want := chainCase(t, map[string]any{"timeout_ms": 1500})
	var mu sync.Mutex
	restarts := 0
	midSplit := -1
	run, err := runJobKind(t, ctx, kind, spec, jobtest.Options{
		OnStep: func(ev jobtest.Event) jobtest.Fault {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case ev.Kind == jobtest.Committed && ev.Step.Phase == "propagate":
				restarts++
				return jobtest.Fault{Restart: []string{"p1", "p2", "p3"}}
			case ev.Kind == jobtest.Starting && ev.Step.Phase == "choose" && ev.Step.Round == 1 && ev.Step.Attempt == 1:
				restarts++
				return jobtest.Fault{Restart: []string{"p2"}}
			case ev.Kind == jobtest.Committed && ev.Step.Phase == "split" && ev.Step.Round == 1:
				restarts++
				return jobtest.Fault{Restart: []string{"p1", "p3"}}
			}
			return jobtest.Fault{}
		},
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			mu.Lock()
			defer mu.Unlock()
			if midSplit < 0 && s.Message.Type == sjc.TypeSplitSummary && s.Message.Phase == "split" && s.Message.Round == 2 {
				midSplit = s.Message.Round
				return jobtest.Fault{Restart: []string{s.From}}
			}
			return jobtest.Fault{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if restarts != 3 || midSplit < 0 {
		t.Fatalf("restarts injected: %d between steps, mid-split %v", restarts, midSplit >= 0)
	}
	if d := tree.Diff(want, run.tree); d != "" {
		t.Fatalf("after restarts the tree differs: %s", d)
	}
	// The split a party restarted in was committed from a later attempt.
	for _, r := range run.rep.Records() {
		if r.Step.Phase == "split" && r.Step.Round == midSplit && r.Step.Attempt < 2 {
			t.Fatalf("the split a party restarted in was not re-run: %+v", r.Step)
		}
	}
}
