package sim

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/table"
)

// BatchJob is one spec of a batch and where its output goes (as
// RunOptions.Out and Replace).
type BatchJob struct {
	Spec    string
	Out     string
	Replace bool
}

// BatchOptions configure RunBatch; the fields mean what RunOptions' do,
// except that Timeout bounds each job and Setup deals one key for the
// whole consortium.
type BatchOptions struct {
	Kinds    job.Registry
	Progress io.Writer
	Timeout  time.Duration
	Timing   node.Timing
	Setup    func(names []string) (func(name, dataDir string) error, error)
	Policy   *policy.Policy
	// OnStart, if set, sees the cluster once it has a leader.
	OnStart func(*Cluster)
}

// batchJobsAtOnce is how many of a batch's jobs the leader coordinates at
// once. A node's default, half the cores, ran the demo's jobs one after
// another on two cores, each idling a core while it waited on its round
// trips. Two overlap one job's waits with another's work; four were slower
// on two cores (demo 5.7-8.1 s against 4.8-5.9 s, interleaved, load 7-10),
// the jobs then contending for the cores. (Three or more at once also used
// to fail on a loaded machine: each running step pinged every party, and
// libp2p's resource manager reset all but two ping streams per peer; the
// steps now share one probe per member, node/probeshare.go.)
const batchJobsAtOnce = 2

// noPool is a simulation's nodes' randomizer_pool and lattice_pool: none.
// A node's pools fill while the node is in no job, to take encryption off
// a later job's critical path; a simulation's nodes run its jobs from
// their start to their close, all in one process, so that filling only
// takes the cores from the jobs (a member that is a party of every job,
// the coordinator, never idles to fill its own). Worse, the four demo
// nodes' Paillier pools of 256 are more than the 490 encryptions after
// which package paillier builds the key's wide table (its tables are the
// process's, and every node's pool counts towards them): 0.6 s of CPU
// filling and 1.0 s building, of the demo's 7.1 s, for the few dozen
// encryptions its jobs make (docs/runtime.md, "The demo's profile"). The
// lattice pools (64 encryptions of zero, 0.2 s of a core and 24 MiB per
// node) went unused but for the lattice examples' few contributions.
const noPool = -1

// JobError is the failure of job Job (an index into the batch).
type JobError struct {
	Job int
	Err error
}

func (e *JobError) Error() string { return e.Err.Error() }
func (e *JobError) Unwrap() error { return e.Err }

// RunBatch runs several specs on one cluster whose members are the parties
// of every spec, so that a batch (the demo) pays once for starting nodes,
// electing a leader and dealing the key rather than once per spec. The jobs
// run batchJobsAtOnce at a time, so that one job's Raft commits and round
// trips overlap another's computing. They are submitted in turn: when the
// key is dealt already (cached), the jobs that decrypt with it first;
// else the others first, running while it is dealt and the nodes start.
// A member that is a party of every job, if there is one, is made the
// leader first, so that as when Run starts each spec's parties alone, no
// other member coordinates a job.
//
// Each job's output is what Run would write for it alone, reported in the
// batch's order whatever order the jobs end in: OUT/result.json, then
// report(i, result); OUT/audit/PARTY.jsonl, each node's ledger entries of
// that job, once the nodes are closed (so that it holds everything they
// recorded). Every spec and output dir is checked before anything starts.
// The first job (in order) that fails ends the batch with a *JobError: the
// jobs still running are cancelled, and each job's output is what its own
// end left (a result, or only its audit ledgers).
func RunBatch(ctx context.Context, jobs []BatchJob, opts BatchOptions, report func(i int, result map[string]any) error) (err error) {
	b, err := loadBatch(ctx, jobs, opts.Kinds)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "cohort-sim-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	key := b.dealKey(opts)
	defer key.wait()
	cluster, err := StartCluster(ctx, scratch, b.names, ClusterOptions{
		Kinds: opts.Kinds, TablesDir: b.root, Tables: b.tables, Timing: opts.Timing,
		OnApply: progressLines(opts.Progress), Policy: cmp.Or(opts.Policy, policy.Default()),
		MaxJobs: min(len(jobs), batchJobsAtOnce), RandomizerPool: noPool, LatticePool: noPool,
		Campaign: b.firstCommon(),
	})
	if err != nil {
		key.abort()
		return err
	}
	key.start(cluster)
	if opts.OnStart != nil {
		opts.OnStart(cluster)
	}
	ran := make([]ranJob, len(jobs))
	defer func() {
		// The ledgers are complete once every node is closed.
		if end := errors.Join(cluster.Close(), b.finish(cluster, ran)); end != nil {
			err = errors.Join(err, end)
		}
	}()
	if err := b.commonLeader(ctx, cluster); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	turn := newTurns(b.usesKey, key.dealtNow())
	ended := make([]chan ranJob, len(jobs))
	var wg sync.WaitGroup
	defer wg.Wait() // before the nodes close
	for i := range jobs {
		ended[i] = make(chan ranJob, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer turn.pass[i]()
			ended[i] <- b.run(ctx, i, cluster, key, turn, opts)
		}()
	}
	var failed error
	for i := range jobs {
		ran[i] = <-ended[i] // each job ends with ctx
		if failed != nil {
			continue
		}
		if ran[i].err != nil {
			failed = &JobError{Job: i, Err: ran[i].err}
			cancel()
			continue
		}
		if err := b.outs[i].place(ran[i].dir, false); err != nil {
			failed = &JobError{Job: i, Err: err}
			ran[i].dir = ""
			cancel()
			continue
		}
		ran[i].dir, ran[i].placed = b.outs[i].path, true
		if err := report(i, ran[i].result); err != nil {
			failed = err
			cancel()
		}
	}
	return failed
}

// ranJob is how a job of the batch ended: its id ("" if it got none), its
// result or error, and the dir its audit ledgers go to: its stage, moved
// into place once they are in it, or its output dir once placed.
type ranJob struct {
	id     string
	result map[string]any
	err    error
	dir    string
	placed bool
}

// common returns the members that are a party of every job.
func (b *batch) common() []string {
	var common []string
	for _, name := range b.names {
		if !slices.ContainsFunc(b.specs, func(s *job.Spec) bool { return !slices.Contains(s.PartyNames(), name) }) {
			common = append(common, name)
		}
	}
	return common
}

// firstCommon is the member that commonLeader makes the leader ("" if
// none): the cluster has it campaign first, so that the transfer is
// seldom needed.
func (b *batch) firstCommon() string {
	if common := b.common(); len(common) > 0 {
		return common[0]
	}
	return ""
}

// commonLeader makes a member that is a party of every job the leader,
// unless the leader already is one or there is none.
func (b *batch) commonLeader(ctx context.Context, cluster *Cluster) error {
	common := b.common()
	if len(common) == 0 {
		return nil
	}
	leader, err := cluster.WaitLeader(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(common, leader.Name()) {
		return nil
	}
	return cluster.MakeLeader(ctx, common[0])
}

// batch is a checked batch: its specs, what each party's node must
// resolve, and where each job's output goes.
type batch struct {
	specs   []*job.Spec
	sent    [][]byte // each spec as submitted, its paths under root
	usesKey []bool
	outs    []outDir
	names   []string // every spec's parties, sorted
	root    string   // the nodes' tables dir: every spec's dir is under it
	tables  map[string]map[string]table.Source
}

// loadBatch loads and checks every spec and output dir, and rewrites each
// spec's relative paths to be relative to the directory that holds every
// spec's directory: one tables dir serves every node for every spec.
func loadBatch(ctx context.Context, jobs []BatchJob, kinds job.Registry) (*batch, error) {
	if len(jobs) == 0 {
		return nil, errors.New("sim: an empty batch")
	}
	b := &batch{tables: map[string]map[string]table.Source{}}
	var dirs []string
	for _, j := range jobs {
		spec, err := job.LoadSpec(j.Spec)
		if err != nil {
			return nil, err
		}
		if err := Check(ctx, spec, kinds); err != nil {
			return nil, err
		}
		if spec.Dir, err = filepath.Abs(spec.Dir); err != nil {
			return nil, fmt.Errorf("spec dir: %w", err)
		}
		o, err := checkOut(j.Out, j.Replace)
		if err != nil {
			return nil, err
		}
		ku, ok := kinds[spec.Kind].(job.KeyUser)
		b.specs, b.outs = append(b.specs, spec), append(b.outs, o)
		b.usesKey = append(b.usesKey, ok && ku.UsesThresholdKey())
		dirs = append(dirs, spec.Dir)
		for _, name := range spec.PartyNames() {
			if !slices.Contains(b.names, name) {
				b.names = append(b.names, name)
			}
		}
	}
	slices.Sort(b.names)
	b.root = commonDir(dirs)
	for _, spec := range b.specs {
		rel, err := filepath.Rel(b.root, spec.Dir)
		if err != nil {
			return nil, fmt.Errorf("spec dir: %w", err)
		}
		moved := relocate(spec, filepath.ToSlash(rel))
		raw, err := moved.Marshal()
		if err != nil {
			return nil, err
		}
		b.sent = append(b.sent, raw)
		for party, sources := range partySources(moved) {
			if b.tables[party] == nil {
				b.tables[party] = map[string]table.Source{}
			}
			for name, src := range sources {
				if had, ok := b.tables[party][name]; ok && had != src {
					return nil, fmt.Errorf("%w: %s: party %s's table %s names another source than in an earlier spec of the batch", job.ErrSpec, spec.Source, party, name)
				}
				b.tables[party][name] = src
			}
		}
	}
	return b, nil
}

// run runs job i of the batch into a stage beside its OUT, once the key
// is installed if its kind needs it, submitting it in its turn.
func (b *batch) run(ctx context.Context, i int, cluster *Cluster, key *batchKey, turn *turns, opts BatchOptions) ranJob {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	if b.usesKey[i] {
		if err := key.ready(ctx); err != nil {
			return ranJob{err: err}
		}
	}
	stage, err := b.outs[i].stage()
	if err != nil {
		return ranJob{err: err}
	}
	if err := turn.await(ctx, i); err != nil {
		os.RemoveAll(stage)
		return ranJob{err: err}
	}
	id, res, err := runJob(ctx, cluster, b.specs[i], b.sent[i], stage, opts.Kinds, turn.pass[i])
	return ranJob{id: id, result: res, err: err, dir: stage}
}

// finish writes each job's audit ledgers from the closed nodes' ledgers
// and moves each stage not yet in place into place: a job's own end
// decides what it holds (a failed job: only its ledgers; one that failed
// before it had an id: nothing, and it is dropped).
func (b *batch) finish(cluster *Cluster, ran []ranJob) error {
	ledgers := map[string][][]byte{}
	var errs []error
	for _, name := range b.names {
		lines, err := readLines(cluster.LedgerPath(name))
		if err != nil {
			errs = append(errs, fmt.Errorf("sim: ledger of %s: %w", name, err))
		}
		ledgers[name] = lines
	}
	for i, r := range ran {
		switch {
		case r.dir == "":
			continue
		case r.id == "":
			os.RemoveAll(r.dir)
			continue
		}
		if err := writeAudit(ledgers, b.specs[i].PartyNames(), r.id, filepath.Join(r.dir, "audit")); err != nil {
			errs = append(errs, err)
		}
		if !r.placed {
			errs = append(errs, b.outs[i].place(r.dir, r.err != nil))
		}
	}
	return errors.Join(errs...)
}

// writeAudit writes dir/NAME.jsonl with the entries of job id from each
// node's ledger lines: for every party (as Run's nodes would write it),
// and for any other node that recorded something of the job.
func writeAudit(ledgers map[string][][]byte, parties []string, id, dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("audit dir: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(ledgers)) {
		var buf bytes.Buffer
		for _, line := range ledgers[name] {
			var e struct {
				Job string `json:"job"`
			}
			if json.Unmarshal(line, &e) == nil && id != "" && e.Job == id {
				buf.Write(line)
				buf.WriteByte('\n')
			}
		}
		if buf.Len() == 0 && !slices.Contains(parties, name) {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), buf.Bytes(), 0o640); err != nil {
			return fmt.Errorf("audit of %s: %w", name, err)
		}
	}
	return nil
}

// readLines returns a file's non-empty lines; a missing file has none.
func readLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			lines = append(lines, slices.Clone(sc.Bytes()))
		}
	}
	return lines, sc.Err()
}

// relocate returns a copy of spec whose relative paths (tables, sources,
// taxonomies, test tables) are prefixed with dir.
func relocate(spec *job.Spec, dir string) *job.Spec {
	out := *spec
	join := func(p string) string {
		if p == "" || dir == "." {
			return p
		}
		return dir + "/" + p
	}
	out.Parties = make([]job.PartySpec, len(spec.Parties))
	for i, p := range spec.Parties {
		p.Tables = slices.Clone(p.Tables)
		for j, t := range p.Tables {
			t.Path = join(t.Path)
			if t.Source != nil {
				src := *t.Source
				src.Path, src.SQLite, src.PostgresFile = join(src.Path), join(src.SQLite), join(src.PostgresFile)
				t.Source = &src
			}
			p.Tables[j] = t
		}
		out.Parties[i] = p
	}
	out.Taxonomies = mapValues(spec.Taxonomies, join)
	out.Test = mapValues(spec.Test, join)
	return &out
}

func mapValues(m map[string]string, f func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

// commonDir returns the deepest directory that holds every one of dirs
// (absolute, cleaned).
func commonDir(dirs []string) string {
	root := dirs[0]
	for _, d := range dirs[1:] {
		for root != filepath.Dir(root) && d != root && !strings.HasPrefix(d, root+string(filepath.Separator)) {
			root = filepath.Dir(root)
		}
	}
	return root
}
