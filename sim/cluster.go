// Package sim runs a consortium inside one process: one real node per party,
// real libp2p on loopback, real Raft with bbolt logs in a scratch directory.
// `cohort sim`, `cohort demo`, the end-to-end tests and the benchmarks all
// use it, so what they measure is the production code path.
package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/table"
)

// ClusterOptions configure an in-process consortium.
type ClusterOptions struct {
	// Kinds are the job kinds the nodes run.
	Kinds job.Registry
	// KindsFor, if set, gives a node its own job kinds instead of Kinds:
	// tests use it to make one party misbehave or to watch what it sends.
	KindsFor func(name string) job.Registry
	// TablesDir resolves relative table paths (the spec's directory).
	TablesDir string
	// Tables, if set, gives each node (by party name) its node.yaml tables:
	// mapping from logical table names to sources.
	Tables map[string]map[string]table.Source
	// AuditDir, if set, puts each node's ledger at AuditDir/NAME.jsonl.
	AuditDir string
	// Timing overrides the nodes' timeouts.
	Timing node.Timing
	// MaxJobs is how many jobs a leader coordinates at once (0: the default).
	MaxJobs int
	// MaxTableRows is every node's max_table_rows (0: no limit).
	MaxTableRows int64
	// RandomizerPool is every node's randomizer_pool (0: the default, -1:
	// none).
	RandomizerPool int
	// LatticePool is every node's lattice_pool (0: the default, -1: none).
	LatticePool int
	// Campaign, if set, names the member that stands for election as soon
	// as every node has started (see campaign), so that it most likely
	// leads; the others still elect one of their own if it cannot.
	Campaign string
	// Listen overrides the listen multiaddrs (default: TCP and QUIC on
	// 127.0.0.1, OS-chosen ports).
	Listen []string
	// Logger receives the nodes' logs; nil discards them.
	Logger *slog.Logger
	// OnApply sees the log entries committed on the first node.
	OnApply func(node.Event)
	// Setup, if set, runs for each node's data dir before the node starts
	// (for example to install the consortium's threshold key share).
	Setup func(names []string) (func(name, dataDir string) error, error)
	// Policy is every node's organisation policy; PolicyFor, if set, gives
	// a node its own. Nil means policy.Permissive: a cluster for tests of
	// other things than the policy. (cohort sim runs the default policy:
	// RunOptions.Policy.)
	Policy    *policy.Policy
	PolicyFor func(name string) *policy.Policy
}

// Cluster is a running in-process consortium.
type Cluster struct {
	Dir   string
	Names []string
	Cons  *node.Consortium
	opts  ClusterOptions

	mu      sync.Mutex
	nodes   map[string]*node.Node
	configs map[string]*node.Config
}

// StartCluster creates a data dir per name under dir and starts the nodes.
// A dir that already holds the same consortium's nodes (from an earlier
// StartCluster on it) is started again instead: each node keeps its
// identity, Raft log and files (models, keys), and only its ports change.
// Key setup then runs only if no node holds a key share yet, so a
// consortium never mixes two dealt keys.
func StartCluster(ctx context.Context, dir string, names []string, opts ClusterOptions) (*Cluster, error) {
	if len(names) == 0 {
		return nil, errors.New("sim: no parties")
	}
	c := &Cluster{Dir: dir, Names: names, opts: opts, nodes: map[string]*node.Node{}, configs: map[string]*node.Config{}}
	reuse, err := earlierNodes(dir, names)
	if err != nil {
		return nil, err
	}
	if reuse && holdsKeys(dir, names) {
		opts.Setup = nil
	}
	var setup func(name, dataDir string) error
	if opts.Setup != nil {
		var err error
		if setup, err = opts.Setup(names); err != nil {
			return nil, err
		}
	}
	timing := opts.Timing
	if timing.HeartbeatMS == 0 && timing.ElectionMS == 0 {
		timing.HeartbeatMS = crowdedRaftMS(len(names), runtime.GOMAXPROCS(0))
		timing.ElectionMS = timing.HeartbeatMS
	}
	cons := &node.Consortium{}
	for _, name := range names {
		dataDir := filepath.Join(dir, name)
		if !reuse {
			if _, _, err := node.Init(name, dataDir, nil); err != nil {
				c.Close()
				return nil, err
			}
		}
		if setup != nil {
			if err := setup(name, dataDir); err != nil {
				c.Close()
				return nil, err
			}
		}
		listen := opts.Listen
		if len(listen) == 0 {
			listen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
		}
		cfg := &node.Config{Name: name, DataDir: dataDir, TablesDir: opts.TablesDir, Tables: opts.Tables[name], Timing: timing, Listen: listen, MaxJobs: opts.MaxJobs, MaxTableRows: opts.MaxTableRows,
			RandomizerPool: opts.RandomizerPool, LatticePool: opts.LatticePool,
			// Loopback, and every node on the same cores: QUIC's CPU per
			// byte is the cost, and there is no slow link (node.Config).
			PreferTCP: true}
		n, err := c.newNode(cfg)
		if err != nil {
			c.Close()
			return nil, err
		}
		// Pin the ports the OS chose, so a restarted node is found at the
		// addresses the consortium file lists.
		cfg.Listen = n.Addrs()
		c.configs[name] = cfg
		c.nodes[name] = n
		cons.Members = append(cons.Members, node.Member{Name: name, PeerID: n.PeerID().String(), Addrs: n.Addrs()})
	}
	c.Cons = cons
	if err := cons.Save(filepath.Join(dir, "consortium.yaml")); err != nil {
		c.Close()
		return nil, err
	}
	for _, name := range names {
		if err := c.nodes[name].Start(cons); err != nil {
			c.Close()
			return nil, err
		}
	}
	if n := c.nodes[opts.Campaign]; n != nil {
		if err := campaign(n.Raft()); err != nil {
			c.Close()
			return nil, fmt.Errorf("sim: %s's campaign: %w", opts.Campaign, err)
		}
	}
	if _, err := c.WaitLeader(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// campaign makes r's follower loop check for a leader now rather than when
// its heartbeat timeout runs out: a fresh cluster's first election, which
// Raft holds a random 1–2 heartbeat timeouts after start (0.4–0.8 s at the
// default), was the largest part of the demo's 0.6 s start-up, spent with
// every core idle. Raft runs that check at once when its heartbeat
// timeout is lowered (raft.ReloadConfig), so campaign raises the timeout
// (and the election timeout, which may not be shorter) by a millisecond
// and lowers it back: the configuration ends as it was. The check is the
// one the timer runs, so a follower that has heard from a leader within
// the timeout stays a follower; one that has not campaigns, as it would
// have later, and Raft's votes decide as ever.
func campaign(r *raft.Raft) error {
	if r == nil {
		return errors.New("no Raft replica")
	}
	was := r.ReloadableConfig()
	up := was
	up.HeartbeatTimeout += time.Millisecond
	up.ElectionTimeout += time.Millisecond
	if err := r.ReloadConfig(up); err != nil {
		return err
	}
	return r.ReloadConfig(was)
}

// earlierNodes reports whether dir holds the nodes of an earlier cluster
// over exactly these names; one over other names is an error, as is a
// half-made one.
func earlierNodes(dir string, names []string) (bool, error) {
	path := filepath.Join(dir, "consortium.yaml")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	cons, err := node.LoadConsortium(path)
	if err != nil {
		return false, fmt.Errorf("sim: state %s: %w", dir, err)
	}
	if had := cons.Names(); !slices.Equal(had, slices.Sorted(slices.Values(names))) {
		return false, fmt.Errorf("sim: state %s holds the nodes of parties %s, not %s; use another state directory",
			dir, strings.Join(had, ", "), strings.Join(slices.Sorted(slices.Values(names)), ", "))
	}
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name, node.IdentityFile)); err != nil {
			return false, fmt.Errorf("sim: state %s: node %s: %w", dir, name, err)
		}
	}
	return true, nil
}

// holdsKeys reports whether any of the nodes under dir holds a key share.
func holdsKeys(dir string, names []string) bool {
	for _, name := range names {
		if keyring.Held(filepath.Join(dir, name)) {
			return true
		}
	}
	return false
}

func (c *Cluster) newNode(cfg *node.Config) (*node.Node, error) {
	kinds := c.opts.Kinds
	if c.opts.KindsFor != nil {
		kinds = c.opts.KindsFor(cfg.Name)
	}
	opts := node.Options{Config: cfg, Kinds: kinds, Logger: c.opts.Logger, Policy: c.opts.Policy}
	if c.opts.PolicyFor != nil {
		opts.Policy = c.opts.PolicyFor(cfg.Name)
	}
	if opts.Policy == nil {
		opts.Policy = policy.Permissive()
	}
	opts.LedgerPath = c.ledgerPath(cfg.Name, cfg.DataDir)
	if len(c.Names) > 0 && cfg.Name == c.Names[0] {
		opts.OnApply = c.opts.OnApply
	}
	return node.New(opts)
}

// LedgerPath is where the named node keeps its audit ledger: under
// Options.AuditDir if set, else in its data directory.
func (c *Cluster) LedgerPath(name string) string {
	return c.ledgerPath(name, c.DataDir(name))
}

func (c *Cluster) ledgerPath(name, dataDir string) string {
	if c.opts.AuditDir != "" {
		return filepath.Join(c.opts.AuditDir, name+".jsonl")
	}
	return filepath.Join(dataDir, "audit.jsonl")
}

// SentBytes returns what each named party sent for job id, read from its
// own audit ledger: the log holds no byte counts, but the simulation owns
// every node, so it may add up what each one recorded. A party without a
// ledger sent nothing.
func (c *Cluster) SentBytes(id string, names []string) (map[string]int64, error) {
	sent := map[string]int64{}
	for _, name := range names {
		entries, err := audit.ReadFile(c.LedgerPath(name))
		if errors.Is(err, os.ErrNotExist) {
			sent[name] = 0
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sim: ledger of %s: %w", name, err)
		}
		sent[name] = audit.JobBytes(entries, id)
	}
	return sent, nil
}

// SentPerParty is a job's bytes as benchmarks report them, from each
// node's ledger (the log holds none): the mean over names and the most
// any one of them sent.
func (c *Cluster) SentPerParty(id string, names []string) (mean, most float64, err error) {
	sent, err := c.SentBytes(id, names)
	if err != nil {
		return 0, 0, err
	}
	for _, v := range sent {
		mean += float64(v) / float64(len(names))
		most = max(most, float64(v))
	}
	return mean, most, nil
}

// Node returns the named running node, or nil if it is stopped.
func (c *Cluster) Node(name string) *node.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[name]
}

// DataDir is the data dir of the named node ("" for a name not in the
// cluster).
func (c *Cluster) DataDir(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg, ok := c.configs[name]; ok {
		return cfg.DataDir
	}
	return ""
}

// Running returns the running nodes.
func (c *Cluster) Running() []*node.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*node.Node
	for _, name := range c.Names {
		if n := c.nodes[name]; n != nil {
			out = append(out, n)
		}
	}
	return out
}

// WaitLeader waits until a running node is leader and the others agree.
func (c *Cluster) WaitLeader(ctx context.Context) (*node.Node, error) {
	for {
		if l := c.leader(); l != nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sim: no leader elected: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// MakeLeader transfers Raft leadership to the named running node and waits
// until every running node agrees on it; tests use it to choose the
// coordinator. A transfer refused while an election is under way is retried
// until ctx ends.
func (c *Cluster) MakeLeader(ctx context.Context, name string) error {
	target := c.Node(name)
	if target == nil {
		return fmt.Errorf("sim: no running node %q", name)
	}
	var transferErr error
	for {
		leader, err := c.WaitLeader(ctx)
		if err != nil {
			return errors.Join(err, transferErr)
		}
		if leader.Name() == name {
			return nil
		}
		if leader != target {
			transferErr = leader.Raft().LeadershipTransferToServer(raft.ServerID(name), raft.ServerAddress(target.PeerID().String())).Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sim: %s did not become leader: %w", name, errors.Join(ctx.Err(), transferErr))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *Cluster) leader() *node.Node {
	var leader *node.Node
	running := c.Running()
	for _, n := range running {
		if n.IsLeader() {
			leader = n
		}
	}
	if leader == nil {
		return nil
	}
	for _, n := range running {
		if n.Leader() != leader.Name() {
			return nil
		}
	}
	return leader
}

// Kill stops a node abruptly (as far as its peers can tell).
func (c *Cluster) Kill(name string) error {
	c.mu.Lock()
	n := c.nodes[name]
	delete(c.nodes, name)
	c.mu.Unlock()
	if n == nil {
		return fmt.Errorf("sim: %s is not running", name)
	}
	return n.Close()
}

// Restart starts a stopped node again from its data dir.
func (c *Cluster) Restart(name string) (*node.Node, error) {
	c.mu.Lock()
	cfg, ok := c.configs[name]
	running := c.nodes[name] != nil
	c.mu.Unlock()
	if !ok || running {
		return nil, fmt.Errorf("sim: cannot restart %s", name)
	}
	n, err := c.newNode(cfg)
	if err != nil {
		return nil, err
	}
	if err := n.Start(c.Cons); err != nil {
		n.Close()
		return nil, err
	}
	c.mu.Lock()
	c.nodes[name] = n
	c.mu.Unlock()
	return n, nil
}

// Close stops every node.
func (c *Cluster) Close() error {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = map[string]*node.Node{}
	c.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(c.Names))
	for i, name := range c.Names {
		if n := nodes[name]; n != nil {
			wg.Add(1)
			go func(i int, n *node.Node) {
				defer wg.Done()
				errs[i] = n.Close()
			}(i, n)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// crowdedRaftMS returns Raft heartbeat and election timeouts for nodes
// in-process nodes sharing cores cores, or 0 for the node default.
//
// Raft's 400 ms default is right for one node per machine. In one process,
// every node's cryptography competes for the same cores: with 17 nodes on 2
// cores, some 30 goroutines encrypt at once, a heartbeat waits for a core
// longer than the timeout, followers start elections, and each leader change
// restarts the job's step (seen: attempt 10 of one aggregation after 100 s).
// Beyond 4 nodes per core the timeouts grow with the nodes per core.
func crowdedRaftMS(nodes, cores int) int {
	cores = max(cores, 1)
	perCore := (nodes + cores - 1) / cores
	if perCore <= 4 {
		return 0
	}
	return 200 * perCore
}
