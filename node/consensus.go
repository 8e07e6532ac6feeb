package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/bbolt"

	"github.com/cohortdm/cohort/wire"
)

// consensus is the node's Raft replica with everything it runs on, so
// that what opens the log also closes it: the bbolt log store, the
// snapshots, the transport over libp2p streams (raftnet.go), Raft's logger
// and the loop that keeps the voter set (voters.go).
type consensus struct {
	raft       *raft.Raft
	store      *raftboltdb.BoltStore
	logs       *faultStore // the store as Raft writes it
	trans      *raft.NetworkTransport
	streams    *raftStreams
	log        *slog.Logger
	startIndex uint64      // the log's last index when the process started, before any bootstrap entry
	closing    atomic.Bool // set when shutdown begins: Raft's failed RPCs are then expected

	self      string
	members   func() *Consortium // the member set the voter loop keeps Raft's configuration to
	voterDown time.Duration      // Timing.VoterDownMS
	lost      *lostLeaders       // replaced leaders' last heartbeats (probe.go)
	faults    *memberFaults      // storage faults members reported to this node as leader

	cancel   context.CancelFunc // stops the voter loop
	wg       sync.WaitGroup
	stopOnce sync.Once
	stopErr  error
}

// consensusConfig is what a replica needs from its node.
type consensusConfig struct {
	DataDir string // Raft's files go in DataDir/raft
	Self    string
	Timing  Timing // with defaults
	Host    host.Host
	// MemberName names the member a peer id belongs to (the gater's view).
	MemberName func(peer.ID) (string, bool)
	Members    func() *Consortium
	Refused    *prometheus.CounterVec
	FSM        raft.FSM
	// Join leaves a replica with no state unbootstrapped (Options.Join).
	Join bool
	Log  *slog.Logger
	// ReportFault tells the leader this node's log store fails (a
	// control request); nil reports nothing.
	ReportFault func(ctx context.Context, leader, why string) error
}

// newConsensus opens the Raft log, bootstrapping it from Members on first
// start unless Join, starts the replica and the voter loop, which runs
// until ctx ends or shutdown.
func newConsensus(ctx context.Context, cfg consensusConfig) (*consensus, error) {
	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("raft dir: %w", err)
	}
	c := &consensus{log: cfg.Log, self: cfg.Self, members: cfg.Members,
		voterDown: time.Duration(cfg.Timing.VoterDownMS) * time.Millisecond}
	hlog := newRaftLogger(cfg.Log, c.closing.Load)
	bo := *bbolt.DefaultOptions
	bo.Timeout = boltOpenTimeout
	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"), BoltOptions: &bo})
	if err != nil {
		return nil, fmt.Errorf("open raft log %s: %w", dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hlog)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("raft snapshots: %w", err)
	}
	streams := newRaftStreams(cfg.Host, cfg.Log, cfg.MemberName, cfg.Refused)
	// Pipelined replication is off (MaxRPCsInFlight 1). raft v1.7.3's
	// pipeline can deadlock when a response fails while a send is under
	// way: its decoder blocks handing the failed future to a consumer that
	// has already returned, and the sender blocks handing it the next one,
	// so Shutdown never returns (seen under -race in TestLeaderElection's
	// cleanup). Our log takes a few entries per job step, so one
	// AppendEntries in flight per follower costs nothing measurable.
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: streams, MaxPool: 4, Timeout: raftTransportTimeout, Logger: hlog, MaxRPCsInFlight: 1,
	})
	fail := func(err error) (*consensus, error) {
		trans.Close()
		store.Close()
		return nil, err
	}
	// What the log held when this process started (startIndex): attempts
	// begun before, and those open in the snapshot NewRaft restores, are
	// reported as restarted (fsm.startedBeforeBoot), so it is read before
	// Raft can apply anything.
	last, err := store.LastIndex()
	if err != nil {
		return fail(fmt.Errorf("raft log: %w", err))
	}
	if f, ok := cfg.FSM.(*fsm); ok {
		f.setBootIndex(last)
	}
	rc := raftConfig(cfg.Self, cfg.Timing)
	rc.Logger = hlog
	logs := newFaultStore(store)
	has, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		return fail(fmt.Errorf("raft state: %w", err))
	}
	if !has && cfg.Join {
		cfg.Log.Info("joining: waiting for the leader to add this node (cohort consortium add)")
	}
	if !has && !cfg.Join {
		// Every member bootstraps the same configuration: the first
		// members by name vote, the rest are non-voting replicas.
		if err := raft.BootstrapCluster(rc, logs, store, snaps, trans, cfg.Members().raftConfiguration()); err != nil {
			return fail(fmt.Errorf("bootstrap raft: %w", err))
		}
	}
	r, err := raft.NewRaft(rc, cfg.FSM, logs, store, snaps, trans)
	if f, ok := cfg.FSM.(*fsm); ok {
		f.booted() // NewRaft restores the latest snapshot before it returns
	}
	if err != nil {
		return fail(fmt.Errorf("start raft: %w", err))
	}
	c.raft, c.store, c.logs, c.trans, c.streams = r, store, logs, trans, streams
	c.lost = newLostLeaders(cfg.Self)
	c.faults = newMemberFaults()
	// The filter records as Raft observes; with no channel nothing is queued.
	r.RegisterObserver(raft.NewObserver(nil, false, func(o *raft.Observation) bool {
		if lo, ok := o.Data.(raft.LeaderObservation); ok {
			c.lost.observe(string(lo.LeaderID), r.LastContact())
		}
		return false
	}))
	c.startIndex = last
	ctx, c.cancel = context.WithCancel(ctx)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.keepVoters(ctx)
	}()
	if cfg.ReportFault != nil {
		// A leader whose own store fails steps down; it reports to the next.
		other := func() string {
			if l := c.leader(); l != c.self {
				return l
			}
			return ""
		}
		c.wg.Go(func() { logs.reportFaults(ctx, other, cfg.ReportFault) })
	}
	return c, nil
}

// raftConfig is Raft's configuration for a member with these timings.
func raftConfig(self string, t Timing) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(self)
	rc.HeartbeatTimeout = time.Duration(t.HeartbeatMS) * time.Millisecond
	rc.ElectionTimeout = time.Duration(t.ElectionMS) * time.Millisecond
	// The lease is as long as the heartbeat timeout: a leader busy with
	// cryptography on a loaded machine should not step down for a late ack.
	rc.LeaderLeaseTimeout = rc.HeartbeatTimeout
	rc.CommitTimeout = time.Duration(t.CommitMS) * time.Millisecond
	return rc
}

// shutdown stops the replica and the voter loop; the store and transport
// stay open until Close. It comes first when the node closes, so that
// goroutines waiting on Raft (an apply, a barrier) return at once. It does
// not wait for Raft RPCs in flight: a dead peer would hold it for up to
// raftTransportTimeout.
func (c *consensus) shutdown() {
	c.stopOnce.Do(func() {
		c.closing.Store(true)
		c.cancel()
		// Shutdown tells Raft's goroutines to stop, then waits for them; one
		// blocked in an RPC to a dead peer (a dial or a read, each bounded
		// only by raftTransportTimeout) would hold the wait, so the stream
		// layer ends every RPC in flight first.
		stopped := c.raft.Shutdown()
		c.streams.abort()
		c.stopErr = waitBounded(stopped, raftShutdownWait, c.log)
		c.wg.Wait()
	})
}

// Close shuts the replica down if it runs and closes its transport and
// store.
func (c *consensus) Close() error {
	c.shutdown()
	return errors.Join(c.stopErr, c.trans.Close(), c.store.Close())
}

func (c *consensus) isLeader() bool { return c.raft.State() == raft.Leader }

// leader is the leader's name, or "" while there is none.
func (c *consensus) leader() string {
	_, id := c.raft.LeaderWithID()
	return string(id)
}

// voters are the voters of the current Raft configuration, sorted.
func (c *consensus) voters() []string {
	f := c.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	var out []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			out = append(out, string(s.ID))
		}
	}
	sort.Strings(out)
	return out
}

// apply commits a command through Raft. Only the leader can; others get
// errNotLeader so that a deposed coordinator stops quietly.
func (c *consensus) apply(cmd *command) error {
	if cmd.Time.IsZero() {
		cmd.Time = time.Now().UTC()
	}
	b, err := wire.Marshal(cmd)
	if err != nil {
		return err
	}
	f := c.raft.Apply(b, 10*time.Second)
	if err := f.Error(); err != nil {
		if d := deposed(err); d != nil {
			return d
		}
		return fmt.Errorf("raft apply %s: %w", cmd.Op, err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// lastCommandIndex returns the index of the newest command entry in the
// local log at or below idx (raft's own entries, such as a new leader's
// no-op, never reach the FSM), or 0 when none is left in the log (compacted
// into a snapshot, which Restore applied whole).
func (c *consensus) lastCommandIndex(idx uint64) uint64 {
	var l raft.Log
	for i := idx; i > 0 && idx-i < 64; i-- {
		if err := c.store.GetLog(i, &l); err != nil {
			return 0
		}
		if l.Type == raft.LogCommand {
			return i
		}
	}
	return 0
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
