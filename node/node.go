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
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"go.etcd.io/bbolt"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/mailbox"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/protocol"
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
	Error   string
}

// Node is one organisation's running Cohort node.
type Node struct {
	cfg     *Config
	timing  Timing
	kinds   job.Registry
	log     *slog.Logger
	key     crypto.PrivKey // the node's identity, which signs its submissions
	policy  *policy.Enforcer
	mesh    *mesh // libp2p host, member gater, member set, redial loop
	metrics *metrics
	ledger  *audit.Ledger
	ms      *messenger
	fsm     *fsm
	secrets job.Secrets
	lock    *dirLock
	raftLog *raftLogger
	closing atomic.Bool // set when Close begins
	streams *raftStreams
	token   string       // the HTTP API's bearer token
	join    bool         // Options.Join
	version string       // Options.Version
	console *consoleSite // the operator's web pages (console.go)
	api     *apiServer   // serves Handler; made by Start

	raft   *raft.Raft
	coord  *runner.Coordinator // drives jobs while this node leads
	store  *raftboltdb.BoltStore
	trans  *raft.NetworkTransport
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu           sync.Mutex
	coordinating map[string]*coordination
	workers      map[string]*worker // jobs this node takes part in
	progress     map[string]Progress
	maxJobs      int // jobs coordinated at once while leading
	// unknownJobGrace is how long messages for a job not (yet) in the log are kept.
	unknownJobGrace time.Duration
	closed          bool
	lastState       raft.RaftState // touched only by the reconcile loop
	startIndex      uint64         // the log's last index at start
	ready           bool           // applied up to startIndex; touched only by the reconcile loop
	swept           bool           // ended jobs' scratch removed once after catching up (reconcile, under mu)
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
	site, lg := newConsoleSite(lg)
	sk, err := LoadIdentity(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	token, err := ensureToken(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	m := newMetrics()
	mesh, err := newMesh(sk, cfg.Listen, lg, m)
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
	n := &Node{
		key: sk, policy: enforcer, cfg: cfg, timing: cfg.Timing.withDefaults(), kinds: opts.Kinds, log: lg, mesh: mesh,
		metrics: m, ledger: ledger, fsm: newFSM(), token: token, join: opts.Join, version: opts.Version, secrets: job.DirSecrets(cfg.DataDir),
		coordinating: map[string]*coordination{}, workers: map[string]*worker{}, progress: map[string]Progress{},
		maxJobs: cfg.MaxJobs, unknownJobGrace: unknownJobGrace, console: site,
	}
	if n.maxJobs <= 0 {
		n.maxJobs = defaultMaxJobs()
	}
	n.raftLog = newRaftLogger(lg, n.closing.Load)
	if opts.OnApply != nil {
		n.fsm.onApply = func(c *command) { opts.OnApply(eventOf(c)) }
	}
	n.ms = &messenger{
		self: cfg.Name, host: mesh.host, gater: mesh.gater, members: mesh.memberID, box: mailbox.New(maxQueuedBytes), ledger: ledger,
		metrics: m, log: lg, sendTTL: time.Duration(n.timing.SendMS) * time.Millisecond,
		accept: n.acceptMessage, jobBytes: map[string]int64{},
	}
	n.coord = n.newCoordinator()
	return n, nil
}

func eventOf(c *command) Event {
	e := Event{Op: c.Op, Job: c.Job, Error: c.Error}
	if c.Step != nil {
		e.Phase, e.Round, e.Attempt = c.Step.Phase, c.Step.Round, c.Step.Attempt
	}
	if c.Record != nil {
		e.Phase, e.Round, e.Attempt = c.Record.Step.Phase, c.Record.Step.Round, c.Record.Step.Attempt
		e.Failed = sortedNames(c.Record.Failed)
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
	n.mesh.host.SetStreamHandler(protocol.JobProtocol, n.ms.handle)
	n.mesh.host.SetStreamHandler(protocol.ControlProtocol, n.handleControl)
	if err := n.startRaft(); err != nil {
		return err
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	api, err := newAPIServer(n.ctx, filepath.Join(n.cfg.DataDir, SocketName), n.cfg.HTTP, n.cfg.source, n.Handler(), n.log)
	if err != nil {
		n.cancel()
		n.raft.Shutdown().Error()
		n.store.Close()
		return err
	}
	n.api = api
	n.wg.Add(2)
	go n.reconcileLoop()
	go n.keepVoters()
	n.mesh.start(n.ctx)
	return nil
}

func (n *Node) startRaft() error {
	dir := filepath.Join(n.cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("raft dir: %w", err)
	}
	bo := *bbolt.DefaultOptions
	bo.Timeout = boltOpenTimeout
	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"), BoltOptions: &bo})
	if err != nil {
		return fmt.Errorf("open raft log %s: %w", dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, n.hclog())
	if err != nil {
		store.Close()
		return fmt.Errorf("raft snapshots: %w", err)
	}
	streams := newRaftStreams(n.mesh.host, n.log, n.mesh.gater.name, n.metrics.raftRefused)
	// Pipelined replication is off (MaxRPCsInFlight 1). raft v1.7.3's
	// pipeline can deadlock when a response fails while a send is under
	// way: its decoder blocks handing the failed future to a consumer that
	// has already returned, and the sender blocks handing it the next one,
	// so Shutdown never returns (seen under -race in TestLeaderElection's
	// cleanup). Our log takes a few entries per job step, so one
	// AppendEntries in flight per follower costs nothing measurable.
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: streams, MaxPool: 4, Timeout: raftTransportTimeout, Logger: n.hclog(), MaxRPCsInFlight: 1,
	})
	fail := func(err error) error {
		trans.Close()
		store.Close()
		return err
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(n.cfg.Name)
	rc.HeartbeatTimeout = time.Duration(n.timing.HeartbeatMS) * time.Millisecond
	rc.ElectionTimeout = time.Duration(n.timing.ElectionMS) * time.Millisecond
	// The lease is as long as the heartbeat timeout: a leader busy with
	// cryptography on a loaded machine should not step down for a late ack.
	rc.LeaderLeaseTimeout = rc.HeartbeatTimeout
	rc.CommitTimeout = time.Duration(n.timing.CommitMS) * time.Millisecond
	rc.Logger = n.hclog()
	has, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return fail(fmt.Errorf("raft state: %w", err))
	}
	if !has && n.join {
		n.log.Info("joining: waiting for the leader to add this node (cohort consortium add)")
	}
	if !has && !n.join {
		// Every member bootstraps the same configuration: the first
		// members by name vote, the rest are non-voting replicas.
		if err := raft.BootstrapCluster(rc, store, store, snaps, trans, n.mesh.members().raftConfiguration()); err != nil {
			return fail(fmt.Errorf("bootstrap raft: %w", err))
		}
	}
	r, err := raft.NewRaft(rc, n.fsm, store, store, snaps, trans)
	if err != nil {
		return fail(fmt.Errorf("start raft: %w", err))
	}
	n.raft, n.store, n.trans, n.streams = r, store, trans, streams
	n.startIndex = r.LastIndex()
	return nil
}

// hclog is the logger Raft, its transport and its snapshot store use.
func (n *Node) hclog() hclog.Logger { return n.raftLog }

// Close stops the runner, Raft and the host. It is safe to call twice. It
// does not wait for Raft RPCs in flight: a dead peer would hold it for up
// to raftTransportTimeout.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.closing.Store(true)
	if n.cancel != nil {
		n.cancel()
	}
	var errs []error
	if n.raft != nil {
		// Shutdown tells Raft's goroutines to stop, then waits for them; one
		// blocked in an RPC to a dead peer (a dial or a read, each bounded
		// only by raftTransportTimeout) would hold the wait, so the stream
		// layer ends every RPC in flight first.
		stopped := n.raft.Shutdown()
		n.streams.abort()
		errs = append(errs, waitBounded(stopped, raftShutdownWait, n.log))
	}
	if n.api != nil {
		n.api.Close()
	}
	n.wg.Wait()
	// Every session is closed now: the scratch of jobs that ended while
	// their workers were stopping goes too, not at the next start.
	n.sweepScratch()
	if n.trans != nil {
		errs = append(errs, n.trans.Close())
	}
	errs = append(errs, n.mesh.Close())
	if n.store != nil {
		errs = append(errs, n.store.Close())
	}
	errs = append(errs, n.ledger.Close())
	errs = append(errs, n.lock.release())
	return errors.Join(errs...)
}

// IsLeader reports whether this node is the Raft leader (the coordinator).
func (n *Node) IsLeader() bool { return n.raft != nil && n.raft.State() == raft.Leader }

// Leader returns the coordinator's name, or "" while there is none.
func (n *Node) Leader() string {
	if n.raft == nil {
		return ""
	}
	_, id := n.raft.LeaderWithID()
	return string(id)
}

// Raft exposes the Raft replica, for tests and status.
func (n *Node) Raft() *raft.Raft { return n.raft }

// apply commits a command through Raft. Only the leader can; others get
// errNotLeader so that a deposed coordinator stops quietly.
func (n *Node) apply(c *command) error {
	if c.Time.IsZero() {
		c.Time = time.Now().UTC()
	}
	b, err := protocol.Marshal(c)
	if err != nil {
		return err
	}
	f := n.raft.Apply(b, 10*time.Second)
	if err := f.Error(); err != nil {
		if d := deposed(err); d != nil {
			return d
		}
		return fmt.Errorf("raft apply %s: %w", c.Op, err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

var errNotLeader = errors.New("not the leader")

// deposed returns err as errNotLeader when it means this node cannot
// commit (another leads, leadership is moving to another, or Raft is shut
// down), and nil otherwise.
func deposed(err error) error {
	for _, e := range []error{raft.ErrNotLeader, raft.ErrLeadershipLost, raft.ErrLeadershipTransferInProgress, raft.ErrRaftShutdown} {
		if errors.Is(err, e) {
			return fmt.Errorf("%w: %v", errNotLeader, err)
		}
	}
	return nil
}

// raftShutdownWait bounds how long Close waits for Raft's goroutines. They
// stop in milliseconds (the stream layer ends every RPC in flight); should
// one hang anyway inside raft, the node still closes, leaving it behind.
const raftShutdownWait = 5 * time.Second

// waitBounded waits for f at most d.
func waitBounded(f raft.Future, d time.Duration, log *slog.Logger) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		log.Error("raft did not stop in time; closing the node anyway", "waited", d)
		return nil
	}
}
