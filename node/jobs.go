package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/internal/mailbox"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
)

// jobRunner is the node's share of running jobs, in one place so that
// whatever starts a job's work also stops it: the reconcile loop
// (reconcile.go), the coordinations it runs while the node leads
// (coordinator.go) and one worker per job the node takes part in
// (participant.go), with their jobs' scratch (scratch.go).
type jobRunner struct {
	jobsConfig
	coord *runner.Coordinator // drives jobs while this node leads

	ctx    context.Context // ends with Close (or the node's context)
	cancel context.CancelFunc
	wg     sync.WaitGroup // the reconcile loop, coordinations and workers

	mu           sync.Mutex
	coordinating map[string]*coordination
	workers      map[string]*worker // jobs this node takes part in
	swept        bool               // ended jobs' scratch removed once after catching up (under mu)
	lastState    raft.RaftState     // touched only by the reconcile loop
	ready        bool               // applied up to the start index; touched only by the reconcile loop
}

// jobsConfig is what the job runner needs from its node.
type jobsConfig struct {
	Self    string
	DataDir string // job scratch lives in DataDir/JobScratchDir
	Kinds   job.Registry
	FSM     *fsm
	Raft    *consensus
	Box     *mailbox.Box // the messenger's mailbox, pruned of undeliverable messages
	Metrics *metrics
	// Progress receives the coordinator's progress per job.
	Progress *progressBoard
	// Memory receives the process's memory per kind of job (memory.go).
	Memory *memoryBoard
	Log    *slog.Logger

	// The node as the runtime sees it.
	Commit runner.Log
	Net    job.Party
	Member runner.Member
	Policy *policy.Enforcer
	// Config is the runtime's timeouts, read as each job starts here (the
	// policy's approval timeout can change while the node runs).
	Config func() runner.Config
	Watch  func(ctx context.Context, parties []string, down func(p string, why error))
	// Busy, if set, hears after each reconcile whether the node takes
	// part in any job (the randomiser pool fills only between jobs).
	Busy func(bool)

	MaxJobs int // jobs coordinated at once while leading
	// UnknownJobGrace is how long messages for a job not (yet) in the log are kept.
	UnknownJobGrace time.Duration
}

// newJobRunner starts the reconcile loop, which runs until ctx ends or
// Close.
func newJobRunner(ctx context.Context, cfg jobsConfig) *jobRunner {
	if cfg.Memory == nil {
		cfg.Memory = newMemoryBoard()
	}
	r := &jobRunner{jobsConfig: cfg, coordinating: map[string]*coordination{}, workers: map[string]*worker{}}
	r.coord = r.newCoordinator()
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		r.reconcileLoop()
	}()
	go func() {
		defer r.wg.Done()
		r.sampleMemory(r.ctx)
	}()
	return r
}

// Close stops every coordination and worker and waits for them, then
// removes the scratch of jobs that ended while their workers were
// stopping, not at the next start.
func (r *jobRunner) Close() {
	r.cancel()
	r.wg.Wait()
	r.sweepScratch()
}

// progressBoard is how far each running job's phase has got, as its
// coordinator reports it, for the API.
type progressBoard struct {
	mu sync.Mutex
	m  map[string]Progress
}

func newProgressBoard() *progressBoard { return &progressBoard{m: map[string]Progress{}} }

func (b *progressBoard) set(jobID, phase string, done, total int) {
	b.mu.Lock()
	b.m[jobID] = Progress{Phase: phase, Done: done, Total: total}
	b.mu.Unlock()
}

func (b *progressBoard) get(jobID string) (Progress, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.m[jobID]
	return p, ok
}

// keep forgets every job not in live.
func (b *progressBoard) keep(live map[string]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.m {
		if !live[id] {
			delete(b.m, id)
		}
	}
}
