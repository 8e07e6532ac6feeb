package node

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/internal/strictyaml"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/table"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"gopkg.in/yaml.v3"
)

// Config is a node's node.yaml.
type Config struct {
	// Name is this node's party name; it must appear in the consortium.
	Name string `yaml:"name"`
	// DataDir holds the identity key, Raft state, key shares and the audit
	// ledger. Relative paths are relative to node.yaml.
	DataDir string `yaml:"data_dir"`
	// Listen lists libp2p multiaddrs (TCP and QUIC).
	Listen []string `yaml:"listen"`
	// Consortium is the path of the consortium file.
	Consortium string `yaml:"consortium"`
	// TablesDir resolves the relative table paths of job specs submitted to
	// this node (each organisation keeps its own tables at home).
	TablesDir string `yaml:"tables_dir,omitempty"`
	// Tables maps the logical table names of job specs to this node's own
	// sources (CSV or Parquet files and SQLite databases under tables_dir,
	// PostgreSQL tables or queries); a table not mapped is read from the
	// spec's path under tables_dir. See job.ResolveSource.
	Tables map[string]table.Source `yaml:"tables,omitempty"`
	// HTTP is an optional listen address for /status, /metrics and the job API.
	HTTP string `yaml:"http,omitempty"`
	// Pprof is an optional host:port on the loopback interface (such as
	// 127.0.0.1:6060) where the node serves Go's runtime profiles under
	// /debug/pprof/ (heap, goroutine, CPU), without a token; off unless
	// set, and refused on any other interface (debug.go).
	Pprof string `yaml:"pprof,omitempty"`
	// Timing overrides Raft and messaging timeouts; zero values take defaults.
	Timing Timing `yaml:"timing,omitempty"`
	// PolicyFile is this organisation's policy (see package policy; `cohort
	// node init` writes a commented default beside node.yaml); without it
	// the node runs under the default policy. The node re-reads it when it
	// changes. Relative paths are relative to node.yaml.
	PolicyFile string `yaml:"policy_file,omitempty"`
	// MaxJobs is how many jobs this node coordinates at once while it
	// leads; later submissions queue in order. Zero: half the cores, at
	// least one.
	MaxJobs int `yaml:"max_jobs,omitempty"`
	// MaxTableRows bounds how many rows of one table a job may load into
	// this node's memory (the kinds whose algorithm needs rows: sjc,
	// anonymize, integrate, coherence, ...); a table with more is refused,
	// naming the table and the kind. Aggregates pushed down to a database
	// or streamed (sum, quantile) are not bounded by it. A table in
	// tables: may set its own max_rows. Zero: no limit beyond the memory
	// budget for one table (half the machine's memory).
	MaxTableRows int64 `yaml:"max_table_rows,omitempty"`
	// SJCMemoryBudget bounds, in bytes, the sjc partitions (a party's
	// row sets and class counts at a tree level's nodes) this node holds
	// in memory; the rest are spilled to the job's scratch in the data
	// dir and read back when their level is processed (sjc.Kind). The
	// tree does not depend on it. Zero: no budget.
	SJCMemoryBudget int64 `yaml:"sjc_memory_budget,omitempty"`
	// SJCGroupRows is how sjc loads this node's tables: "true", as
	// their distinct rows with counts (a database groups them where they
	// live), which pays where rows repeat and costs where every row is
	// distinct; "false", row by row; "auto" (the default, also when
	// empty), per table from a cheap estimate of its distinct rows
	// (sjc.Kind.GroupRows; docs/sources.md has the figures). The tree
	// does not depend on it.
	SJCGroupRows string `yaml:"sjc_group_rows,omitempty"`
	// BoostGroupRows is how boost reads this node's tables: "true", as
	// their binned groups with counts (a database computes the bins and
	// groups where the data lives), which pays where rows repeat in what
	// boost reads (join values, bins, the class); "false", row by row;
	// "auto" (the default, also when empty), per table from a cheap
	// estimate of its groups (boost.Kind.GroupRows; docs/sources.md has
	// the figures). The model does not depend on it.
	BoostGroupRows string `yaml:"boost_group_rows,omitempty"`
	// BoostLatticeCacheBytes caps the memory, in bytes, this node spends
	// per boost job on its lattice path's kept plaintexts (each column's
	// W per chunk, which spares their NTT at later levels and trees:
	// boost.Kind.LatticeCacheBytes): lower it to trade CPU for memory.
	// Zero: boost's default (256 MiB); -1: keep none. The model does not
	// depend on it.
	BoostLatticeCacheBytes int64 `yaml:"boost_lattice_cache_bytes,omitempty"`
	// RandomizerPool bounds how many Paillier encryption randomisers the
	// node computes ahead for the consortium key, between jobs, so that a
	// job's encryptions wait for a multiplication each instead of an
	// exponentiation (one ciphertext-sized integer each, 512 bytes at
	// 2048 bits). Zero: DefaultRandomizerPool; -1: none.
	RandomizerPool int `yaml:"randomizer_pool,omitempty"`
	// LatticePool bounds how many lattice encryptions of zero the node
	// computes ahead for the consortium's lattice key, between jobs, so
	// that a contribution's encryption is an addition per ciphertext
	// instead of a public-key encryption (384 KiB each; a million values
	// of sum at five parties take 63), and twice as many polynomials of
	// its decryption shares' smudging noise (192 KiB each). Zero:
	// DefaultLatticePool; -1: none.
	LatticePool int `yaml:"lattice_pool,omitempty"`
	// PreferTCP dials members over TCP first, QUIC only if TCP does not
	// connect (host.go, tcpFirst): a third of QUIC's CPU per byte, but one
	// TCP connection carries every stream, so on a slow link a large body
	// can hold a Raft heartbeat back. Off: go-libp2p's ranking (QUIC
	// first). cohort sim's in-process nodes set it.
	PreferTCP bool `yaml:"prefer_tcp,omitempty"`
	// PaillierTables is when the node builds the consortium key's wide
	// fixed-base tables (80 MiB at 2048 bits; see package paillier):
	// "lazy" (the default when left out) once their uses repay them, a few
	// hundred encryptions in, so a node that runs few jobs never pays for
	// them; "eager" (what cohort node init writes) as soon as it holds the
	// key, in the background, so that its memory is at its level from the
	// start instead of stepping up a few hundred jobs in (docs/runtime.md,
	// "Memory flat").
	PaillierTables string `yaml:"paillier_tables,omitempty"`

	// source is the file this config was read from, for error messages.
	source string
}

// Timing collects every timeout the runtime uses, so each protocol's
// deadlines are named in one place.
type Timing struct {
	// HeartbeatMS and ElectionMS are Raft's heartbeat and election timeouts.
	HeartbeatMS int `yaml:"heartbeat_ms,omitempty"`
	ElectionMS  int `yaml:"election_ms,omitempty"`
	// SendMS bounds one message delivery (open stream, write, ack): the
	// runtime's grace (runner.Config.Grace, whose default it takes).
	SendMS int `yaml:"send_ms,omitempty"`
	// StepMS is the default time parties have to finish a job step
	// (runner.Config.StepTimeout, whose default it takes).
	StepMS int `yaml:"step_ms,omitempty"`
	// CommitMS is how long the Raft leader goes without new entries before
	// it tells followers what is committed (Raft's CommitTimeout). Parties
	// start a step when their node learns the step is committed, so it
	// bounds each step's start delay; each idle node pays one small RPC per
	// follower per interval for it.
	CommitMS int `yaml:"commit_ms,omitempty"`
	// VoterDownMS is how long the leader goes without hearing from a Raft
	// voter before it demotes it and promotes the next member (see Voters).
	VoterDownMS int `yaml:"voter_down_ms,omitempty"`
}

func (t Timing) withDefaults() Timing {
	if t.HeartbeatMS == 0 {
		t.HeartbeatMS = 400
	}
	if t.ElectionMS == 0 {
		t.ElectionMS = 400
	}
	def := runner.DefaultConfig()
	if t.SendMS == 0 {
		t.SendMS = int(def.Grace.Milliseconds())
	}
	if t.StepMS == 0 {
		t.StepMS = int(def.StepTimeout.Milliseconds())
	}
	if t.CommitMS == 0 {
		t.CommitMS = 5
	}
	if t.VoterDownMS == 0 {
		t.VoterDownMS = 15_000
	}
	return t
}

// check refuses a negative timeout (zero takes the default), and a step
// timeout the runtime would refuse.
func (t Timing) check(source string) error {
	for _, f := range []struct {
		name string
		ms   int
	}{{"heartbeat_ms", t.HeartbeatMS}, {"election_ms", t.ElectionMS}, {"send_ms", t.SendMS},
		{"step_ms", t.StepMS}, {"commit_ms", t.CommitMS}, {"voter_down_ms", t.VoterDownMS}} {
		if f.ms < 0 {
			return configErr(source, "timing."+f.name, "%d: want a positive number of milliseconds, or leave it out for the default", f.ms)
		}
	}
	if most := job.MaxStepTimeout.Milliseconds(); int64(t.StepMS) > most {
		return configErr(source, "timing.step_ms", "%d: want at most %d (a day)", t.StepMS, most)
	}
	return nil
}

// Member is one organisation in the consortium file.
type Member = api.Member

// Consortium is the consortium file: who may connect, and where to find them.
type Consortium struct {
	Members []Member `yaml:"members"`
	// VotersWanted is how many members are Raft voters (default
	// DefaultVoters); the rest are non-voting replicas. See Voters.
	VotersWanted int `yaml:"voters,omitempty"`
}

// ErrConfig wraps every configuration problem.
var ErrConfig = errors.New("config error")

func configErr(file, field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s: %s", ErrConfig, file, field, fmt.Sprintf(format, args...))
}

// LoadConfig reads node.yaml, resolving relative paths against its directory.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err) // callers test for fs.ErrNotExist
	}
	var c Config
	if err := decodeStrict(b, &c); err != nil {
		return nil, configErr(path, "yaml", "%v", err)
	}
	c.source = path
	base := filepath.Dir(path)
	for _, p := range []*string{&c.DataDir, &c.Consortium, &c.TablesDir, &c.PolicyFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
	if c.Name == "" {
		return nil, configErr(path, "name", "missing")
	}
	if err := CheckName(c.Name); err != nil {
		return nil, configErr(path, "name", "%v", err)
	}
	if c.DataDir == "" {
		return nil, configErr(path, "data_dir", "missing")
	}
	if c.Consortium == "" {
		return nil, configErr(path, "consortium", "missing")
	}
	for _, name := range sortedNames(c.Tables) {
		src := c.Tables[name]
		if err := src.Validate(); err != nil {
			return nil, configErr(path, "tables."+name, "%v", err)
		}
		// A connection file is the operator's, named relative to node.yaml.
		if src.PostgresFile != "" && !filepath.IsAbs(src.PostgresFile) {
			src.PostgresFile = filepath.Join(base, src.PostgresFile)
			c.Tables[name] = src
		}
	}
	for i, a := range c.Listen {
		if err := CheckListen(a); err != nil {
			return nil, configErr(path, fmt.Sprintf("listen[%d]", i), "%v", err)
		}
	}
	if c.MaxTableRows < 0 {
		return nil, configErr(path, "max_table_rows", "must not be negative")
	}
	if c.SJCMemoryBudget < 0 {
		return nil, configErr(path, "sjc_memory_budget", "must not be negative")
	}
	if c.BoostLatticeCacheBytes < -1 {
		return nil, configErr(path, "boost_lattice_cache_bytes", "must be -1 (keep none), 0 (the default) or a number of bytes")
	}
	for _, g := range []struct{ setting, value string }{{"sjc_group_rows", c.SJCGroupRows}, {"boost_group_rows", c.BoostGroupRows}} {
		if _, err := job.ParseGroupMode(g.setting, g.value); err != nil {
			return nil, configErr(path, g.setting, "must be true, false or auto")
		}
	}
	if _, err := c.latticePool(path); err != nil {
		return nil, err
	}
	if _, err := c.randomizerPool(path); err != nil {
		return nil, err
	}
	if _, err := c.eagerTables(path); err != nil {
		return nil, err
	}
	if c.Pprof != "" {
		if err := checkPprofAddr(c.Pprof); err != nil {
			return nil, configErr(path, "pprof", "%v", err)
		}
	}
	if err := c.Timing.check(path); err != nil {
		return nil, err
	}
	return &c, nil
}

// randomizerPool is the pool's bound that RandomizerPool asks for (0:
// none), or why it is refused.
func (c *Config) randomizerPool(source string) (int, error) {
	switch n := c.RandomizerPool; {
	case n == 0:
		return DefaultRandomizerPool, nil
	case n == -1:
		return 0, nil
	case n < -1 || n > maxRandomizerPool:
		return 0, configErr(source, "randomizer_pool", "%d: want 1 to %d randomisers, -1 for none, or leave it out for %d", n, maxRandomizerPool, DefaultRandomizerPool)
	default:
		return n, nil
	}
}

// latticePool is the bound that LatticePool asks for (0: none), or why it
// is refused.
func (c *Config) latticePool(source string) (int, error) {
	switch n := c.LatticePool; {
	case n == 0:
		return DefaultLatticePool, nil
	case n == -1:
		return 0, nil
	case n < -1 || n > maxLatticePool:
		return 0, configErr(source, "lattice_pool", "%d: want 1 to %d encryptions of zero, -1 for none, or leave it out for %d", n, maxLatticePool, DefaultLatticePool)
	default:
		return n, nil
	}
}

// eagerTables reports whether PaillierTables asks for the key's tables at
// once, or why it is refused.
func (c *Config) eagerTables(source string) (bool, error) {
	switch c.PaillierTables {
	case "", "lazy":
		return false, nil
	case "eager":
		return true, nil
	default:
		return false, configErr(source, "paillier_tables", "want lazy or eager")
	}
}

// Save writes the config as YAML.
func (c *Config) Save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("marshal node config: %w", err)
	}
	return writeFileAtomic(path, b, 0o644)
}

// LoadConsortium reads and validates a consortium file.
func LoadConsortium(path string) (*Consortium, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	var c Consortium
	if err := decodeStrict(b, &c); err != nil {
		return nil, configErr(path, "yaml", "%v", err)
	}
	if err := c.Validate(path); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks names, peer ids and addresses; source names the file in errors.
func (c *Consortium) Validate(source string) error {
	if len(c.Members) == 0 {
		return configErr(source, "members", "no members")
	}
	if c.VotersWanted < 0 {
		return configErr(source, "voters", "%d: want a positive count (3 or 5 is usual), or leave it out for %d", c.VotersWanted, DefaultVoters)
	}
	names, ids := map[string]bool{}, map[string]bool{}
	for i, m := range c.Members {
		field := fmt.Sprintf("members[%d]", i)
		if m.Name == "" {
			return configErr(source, field+".name", "missing")
		}
		if names[m.Name] {
			return configErr(source, field+".name", "duplicate member %q", m.Name)
		}
		names[m.Name] = true
		if _, err := peer.Decode(m.PeerID); err != nil {
			return configErr(source, field+".peer_id", "malformed peer id %q: %v", m.PeerID, err)
		}
		if ids[m.PeerID] {
			return configErr(source, field+".peer_id", "duplicate peer id")
		}
		ids[m.PeerID] = true
		for j, a := range m.Addrs {
			if _, err := ma.NewMultiaddr(a); err != nil {
				return configErr(source, fmt.Sprintf("%s.addrs[%d]", field, j), "%v", err)
			}
		}
	}
	return nil
}

// Save writes the consortium file.
func (c *Consortium) Save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("marshal consortium: %w", err)
	}
	return writeFileAtomic(path, b, 0o644)
}

// Names returns the members' names, sorted.
func (c *Consortium) Names() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.Name
	}
	sort.Strings(out)
	return out
}

// Member returns the named member.
func (c *Consortium) Member(name string) (Member, bool) {
	for _, m := range c.Members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func decodeStrict(b []byte, v any) error {
	return strictyaml.Decode(bytes.NewReader(b), v)
}

// writeFileAtomic creates path's directory and writes path atomically.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	return atomicfile.Write(path, b, perm)
}
