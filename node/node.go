// Package node is Cohort's daemon: a libp2p host that admits consortium
// members only, a hashicorp/raft replica over libp2p streams whose leader
// coordinates jobs, the job runner, the audit ledger and the HTTP status,
// metrics and job API.
//
// Jobs are replayable (see package job): the Raft log holds each job's spec,
// every step attempt the coordinator started and every step's outputs. Every
// node reconciles against that log: the leader coordinates running jobs and
// every party runs the steps it takes part in. A new leader therefore
// resumes a job at its first unfinished step, and a restarted node rebuilds
// its state from its bbolt log.
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/mailbox"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// Options configure a node beyond its node.yaml.
type Options struct {
	Config *Config
	// Kinds are the job kinds this node can run.
	Kinds job.Registry
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// LedgerPath overrides where the audit ledger goes (default DATA/audit.jsonl).
	LedgerPath string
	// OnApply, if set, sees every committed log entry (for progress displays).
	// It must not block.
	OnApply func(Event)
	// Policy, if set, is the node's policy instead of node.yaml's
	// policy_file (or the default).
	Policy *policy.Policy
	// Join starts a node with no Raft state without bootstrapping it: the
	// node was added to a running consortium (cohort consortium add) and
	// receives the configuration and the log from the leader. It has no
	// effect on a node that has Raft state.
	Join bool
	// Version is the release the binary was linked as ("" when none): the
	// console shows it with the build info.
	Version string
}

// Event describes a committed log entry, for progress displays.
type Event struct {
	Op      string
	Job     string
	Phase   string
	Round   int
	Attempt int
	Failed  []string
	// Failures is, for a step's record, each failed party's report as the
	// log holds it (what every member reads; value-free by the jobs'
	// leakage tests): why a step is re-run, for the operator who watches.
	Failures map[string]string
	Error    string
}

// Node is one organisation's running Cohort node.
type Node struct {
	// Node wires components that each own their goroutines and stop them
	// in Close: mesh (mesh.go), consensus (consensus.go), jobRunner
	// (jobs.go) and apiServer (apiserver.go). New and Start make them in
	// dependency order; Close closes them in reverse.
	cfg    *Config
	timing Timing
	kinds  job.Registry
	log    *slog.Logger
	join   bool // Options.Join

	// Made by New.
	lock     *dirLock
	key      crypto.PrivKey // the node's identity, which signs its submissions
	token    string         // the HTTP API's bearer token
	console  *consoleSite   // the operator's web pages (console.go)
	metrics  *metrics
	mesh     *mesh // libp2p host, member gater, member set, redial loop
	ledger   *audit.Ledger
	policy   *policy.Enforcer
	fsm      *fsm
	ms       *messenger     // job messages over the mesh (messaging.go)
	progress *progressBoard // the coordinators' progress per job, for the API
	memory   *memoryBoard   // the process's peak memory per kind of job (memory.go)
	probes   *probeShare    // one probe of a member at a time for every step (probeshare.go)
	secrets  job.Secrets    // the data dir's, with their cache of parsed keys
	pools    *randomizers   // the key's encryption randomisers (randomizers.go)

	// Made by Start; nil before.
	consensus *consensus // Raft, its log store and transport, the voter loop
	api       *apiServer // the control socket and HTTP listener
	pprof     *apiServer // the optional profiling listener (debug.go), nil when off
	jobs      *jobRunner // the reconcile loop, coordinations and workers

	// ctx is the node's life from Start: its end tells every component's
	// goroutines to stop at once, before Close waits for each.
	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool
}

type stepID struct {
	job, phase     string
	round, attempt int
}

// New starts the node's libp2p host, so its listen addresses are known, but
// does not join the consortium yet: call Start.
func New(opts Options) (*Node, error) {
	cfg := opts.Config
	if cfg == nil {
		return nil, errors.New("node: no config")
	}
	if err := cfg.Timing.check("node " + cfg.Name); err != nil {
		return nil, err // a config built in code, not by LoadConfig
	}
	if _, err := cfg.randomizerPool("node " + cfg.Name); err != nil {
		return nil, err
	}
	if _, err := cfg.latticePool("node " + cfg.Name); err != nil {
		return nil, err
	}
	if _, err := cfg.eagerTables("node " + cfg.Name); err != nil {
		return nil, err
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	lg = lg.With("node", cfg.Name)
	// The data dir lock comes before anything in the data dir is opened.
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	n, err := newNode(opts, cfg, lg)
	if err != nil {
		lock.release()
		return nil, err
	}
	n.lock = lock
	return n, nil
}

func newNode(opts Options, cfg *Config, lg *slog.Logger) (*Node, error) {
	site, lg := newConsoleSite(lg, opts.Version)
	sk, err := LoadIdentity(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	token, err := ensureToken(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	m := newMetrics()
	mesh, err := newMesh(sk, cfg.Listen, cfg.PreferTCP, lg, m)
	if err != nil {
		return nil, err
	}
	ledgerPath := opts.LedgerPath
	if ledgerPath == "" {
		ledgerPath = filepath.Join(cfg.DataDir, "audit.jsonl")
	}
	site.ledgerPath = ledgerPath
	ledger, err := audit.Open(ledgerPath)
	if err != nil {
		mesh.Close()
		return nil, fmt.Errorf("open audit ledger: %w", err)
	}
	enforcer, err := newEnforcer(cfg, opts.Policy, ledger)
	if err != nil {
		mesh.Close()
		ledger.Close()
		return nil, err
	}
	poolSize, _ := cfg.randomizerPool("") // checked by New
	eager, _ := cfg.eagerTables("")
	secrets := job.DirSecrets(cfg.DataDir)
	n := &Node{
		cfg: cfg, timing: cfg.Timing.withDefaults(), kinds: opts.Kinds, log: lg, join: opts.Join,
		key: sk, token: token, console: site, metrics: m, mesh: mesh, ledger: ledger, policy: enforcer,
		fsm: newFSM(), progress: newProgressBoard(), memory: newMemoryBoard(), probes: newProbeShare(),
		secrets: secrets, pools: newRandomizers(poolSize, eager, secrets, lg),
	}
	zeros, _ := cfg.latticePool("") // checked by New
	n.pools.zeros = newLatticeZeros(zeros, secrets, lg)
	m.reg.MustRegister(n.pools)
	if opts.OnApply != nil {
		n.fsm.onApply = func(c *command) { opts.OnApply(eventOf(c)) }
	}
	n.ms = &messenger{
		self: cfg.Name, host: mesh.host, gater: mesh.gater, members: mesh.memberID, box: mailbox.New(maxQueuedBytes), ledger: ledger,
		metrics: m, log: lg, sendTTL: time.Duration(n.timing.SendMS) * time.Millisecond,
		accept: n.acceptMessage,
	}
	return n, nil
}

func eventOf(c *command) Event {
	e := Event{Op: c.Op, Job: c.Job, Error: c.Error}
	if c.Step != nil {
		e.Phase, e.Round, e.Attempt = c.Step.Phase, c.Step.Round, c.Step.Attempt
	}
	if c.Record != nil {
		e.Phase, e.Round, e.Attempt = c.Record.Step.Phase, c.Record.Step.Round, c.Record.Step.Attempt
		e.Failed, e.Failures = sortedNames(c.Record.Failed), maps.Clone(c.Record.Failed)
	}
	return e
}

// Name is the node's party name.
func (n *Node) Name() string { return n.cfg.Name }

// PeerID is the node's libp2p identity.
func (n *Node) PeerID() peer.ID { return n.mesh.host.ID() }

// Addrs are the node's listen multiaddrs, as strings.
func (n *Node) Addrs() []string {
	var out []string
	for _, a := range n.mesh.host.Addrs() {
		out = append(out, a.String())
	}
	return out
}

// Start joins the consortium: admits its members, starts Raft (bootstrapping
// the membership on first start) and the job runner.
func (n *Node) Start(cons *Consortium) error {
	if err := cons.Validate("consortium"); err != nil {
		return err
	}
	me, ok := cons.Member(n.cfg.Name)
	if !ok {
		return fmt.Errorf("%w: %s: name: %q is not a member of the consortium", ErrConfig, n.cfg.source, n.cfg.Name)
	}
	if id := n.mesh.host.ID(); me.PeerID != id.String() {
		return fmt.Errorf("%w: consortium lists peer id %s for %q but this node's identity is %s",
			ErrConfig, me.PeerID, n.cfg.Name, id)
	}
	n.mesh.admit(cons)
	n.fsm.setMembers(cons)
	n.fsm.onMembers = n.membersChanged
	n.mesh.host.SetStreamHandler(wire.JobProtocol, n.ms.handle)
	// After the handler: every job message from now on reaches this
	// instance (fsm.noteStart).
	n.fsm.setStarted(time.Now())
	n.mesh.host.SetStreamHandler(wire.ControlProtocol, n.handleControl)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	c, err := newConsensus(n.ctx, consensusConfig{
		DataDir: n.cfg.DataDir, Self: n.cfg.Name, Timing: n.timing, Host: n.mesh.host, MemberName: n.mesh.gater.name,
		Members: n.mesh.members, Refused: n.metrics.raftRefused, FSM: n.fsm, Join: n.join, Log: n.log,
		ReportFault: n.reportStorageFault,
	})
	if err != nil {
		return err
	}
	n.consensus = c
	api, err := newAPIServer(n.ctx, filepath.Join(n.cfg.DataDir, SocketName), n.cfg.HTTP, n.cfg.source, "http", n.Handler(), n.log)
	if err == nil && n.cfg.Pprof != "" {
		n.pprof, err = n.startPprof()
		if err != nil {
			api.Close()
		}
	}
	if err != nil {
		n.cancel()
		n.consensus = nil
		_ = c.Close()
		return err
	}
	n.api = api
	maxJobs := n.cfg.MaxJobs
	if maxJobs <= 0 {
		maxJobs = defaultMaxJobs()
	}
	n.jobs = newJobRunner(n.ctx, jobsConfig{
		Self: n.cfg.Name, DataDir: n.cfg.DataDir, Kinds: n.kinds, FSM: n.fsm, Raft: c, Box: n.ms.box,
		Metrics: n.metrics, Progress: n.progress, Memory: n.memory, Log: n.log,
		Commit: raftLog{n.fsm, c}, Net: netParty{n}, Member: member{n: n, secrets: randomizerSecrets{n.secrets, n.pools}},
		Policy: n.policy, Config: n.runtimeConfig, Watch: n.watchReachable, Busy: n.pools.setBusy,
		MaxJobs: maxJobs, UnknownJobGrace: unknownJobGrace,
	})
	n.mesh.start(n.ctx)
	n.pools.start(n.ctx)
	return nil
}

// Close stops the runner, Raft and the host, closing the node's
// components in the reverse of the order they were made. It is safe to
// call twice. It does not wait for Raft RPCs in flight: a dead peer would
// hold it for up to raftTransportTimeout.
func (n *Node) Close() error {
	if !n.closed.CompareAndSwap(false, true) {
		return nil
	}
	// First, while the host still answers: refuse job messages rather
	// than acknowledge what would die with the mailbox (messenger.close).
	n.ms.close()
	if n.cancel != nil {
		n.cancel() // every component's goroutines begin to stop
	}
	if n.consensus != nil {
		n.consensus.shutdown() // so that goroutines waiting on Raft return
	}
	if n.api != nil {
		n.api.Close()
	}
	if n.pprof != nil {
		n.pprof.Close()
	}
	if n.jobs != nil {
		n.jobs.Close()
	}
	n.pools.close()
	var errs []error
	if n.consensus != nil {
		errs = append(errs, n.consensus.Close())
	}
	errs = append(errs, n.mesh.Close(), n.ledger.Close(), n.lock.release())
	return errors.Join(errs...)
}

// IsLeader reports whether this node is the Raft leader (the coordinator).
func (n *Node) IsLeader() bool { return n.consensus != nil && n.consensus.isLeader() }

// Leader returns the coordinator's name, or "" while there is none.
func (n *Node) Leader() string {
	if n.consensus == nil {
		return ""
	}
	return n.consensus.leader()
}

// Raft exposes the Raft replica, for tests and status.
func (n *Node) Raft() *raft.Raft {
	if n.consensus == nil {
		return nil
	}
	return n.consensus.raft
}

// apply commits a command through Raft (consensus.apply).
func (n *Node) apply(c *command) error { return n.consensus.apply(c) }
