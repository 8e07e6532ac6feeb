package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/mailbox"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

// The job runner of a member that leads coordinates a committed job: one
// of a kind it does not run fails, through the log. Close stops the
// runner and removes the scratch of ended jobs, not that of jobs it does
// not know.
func TestJobRunnerCoordinatesAndSweeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x, m, me := newTestMesh(t, "a")
	x.admit(&Consortium{Members: []Member{me}})
	f := newFSM()
	c := newTestConsensus(t, dir, x, m, f, "a", false)
	defer c.Close()
	r := newJobRunner(t.Context(), jobsConfig{
		Self: "a", DataDir: dir, Kinds: job.Registry{}, FSM: f, Raft: c, Box: mailbox.New(maxQueuedBytes),
		Metrics: m, Progress: newProgressBoard(), Log: discard(), Commit: raftLog{f, c},
		Config: runner.DefaultConfig, MaxJobs: 1, UnknownJobGrace: unknownJobGrace,
	})
	awaitLeader(t.Context(), t, c)
	if err := c.apply(submitEntry("j1", "nosuch")); err != nil {
		t.Fatal(err)
	}
	awaitJob(t.Context(), t, f, "j1", StatusFailed)
	if j, _ := f.jobs.Job("j1"); !strings.Contains(j.Error, `"nosuch"`) {
		t.Fatalf("j1 failed with %q, want its unknown kind named", j.Error)
	}

	ended, unknown := filepath.Join(dir, JobScratchDir, "j1"), filepath.Join(dir, JobScratchDir, "other")
	for _, d := range []string{ended, unknown} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if _, err := os.Stat(ended); !os.IsNotExist(err) {
		t.Fatalf("an ended job's scratch outlived Close: %v", err)
	}
	if _, err := os.Stat(unknown); err != nil {
		t.Fatalf("an unknown job's scratch went: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.coordinating) != 0 || len(r.workers) != 0 {
		t.Fatalf("after Close: %d coordinations, %d workers", len(r.coordinating), len(r.workers))
	}
}

// The progress board keeps only the jobs it is told are live.
func TestProgressBoardKeepsLiveJobs(t *testing.T) {
	t.Parallel()
	b := newProgressBoard()
	b.set("a", "count", 1, 3)
	b.set("b", "count", 2, 3)
	b.keep(map[string]bool{"a": true})
	if p, ok := b.get("a"); !ok || p != (Progress{Phase: "count", Done: 1, Total: 3}) {
		t.Fatalf("a: %+v, %v", p, ok)
	}
	if _, ok := b.get("b"); ok {
		t.Fatal("an ended job's progress was kept")
	}
}
