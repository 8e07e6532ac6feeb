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
	// Starting, if set, is told before job i starts (its key is waited
	// for, its coordinator chosen, its spec submitted).
	Starting func(i int)
}

// RunBatch runs several specs, one after another, on one cluster whose
// members are the parties of every spec, so that a batch (the demo) pays
// once for starting nodes, electing a leader and dealing the key rather
// than once per spec. The key, if any spec's kind needs it, is dealt while
// the nodes start and the first specs that need none run. Each job's
// output is what Run would write for it alone: OUT/result.json as soon as
// the job ends, then done(i, result), in order; OUT/audit/PARTY.jsonl,
// each node's ledger entries of that job, once the nodes are closed (so
// that it holds everything they recorded). Every spec and output dir is
// checked before anything starts; the first failing job ends the batch.
func RunBatch(ctx context.Context, jobs []BatchJob, opts BatchOptions, done func(i int, result map[string]any) error) (err error) {
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
	})
	if err != nil {
		return err
	}
	if opts.OnStart != nil {
		opts.OnStart(cluster)
	}
	ran := make([]ranJob, 0, len(jobs))
	defer func() {
		// The ledgers are complete once every node is closed.
		err = errors.Join(err, cluster.Close(), b.finish(cluster, ran))
	}()
	for i := range jobs {
		if opts.Starting != nil {
			opts.Starting(i)
		}
		if b.usesKey[i] {
			if err := key.install(ctx, cluster); err != nil {
				return err
			}
		}
		if err := partyLeads(ctx, cluster, b.specs[i].PartyNames()); err != nil {
			return err
		}
		r, res, err := b.run(ctx, i, cluster, opts)
		if r.dir != "" {
			ran = append(ran, r)
		}
		if err != nil {
			return err
		}
		if err := done(i, res); err != nil {
			return err
		}
	}
	return nil
}

// ranJob is a job the batch ran: its id ("" if it got none), the dir its
// audit ledgers go to, and whether it failed (its dir is then its stage,
// moved into place only once the ledgers are in it).
type ranJob struct {
	i      int
	id     string
	dir    string
	failed bool
}

// batch is a checked batch: its specs, what each party's node must
// resolve, and where each job's output goes.
type batch struct {
	jobs    []BatchJob
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
	b := &batch{jobs: jobs, tables: map[string]map[string]table.Source{}}
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

// run runs job i of the batch, its output staged beside its OUT and, if
// it succeeds, moved into place at once.
func (b *batch) run(ctx context.Context, i int, cluster *Cluster, opts BatchOptions) (ranJob, map[string]any, error) {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	stage, err := b.outs[i].stage()
	if err != nil {
		return ranJob{}, nil, err
	}
	id, res, err := runJob(ctx, cluster, b.specs[i], b.sent[i], stage, opts.Kinds)
	if err != nil {
		return ranJob{i: i, id: id, dir: stage, failed: true}, nil, err
	}
	if err := b.outs[i].place(stage, false); err != nil {
		return ranJob{}, nil, err
	}
	return ranJob{i: i, id: id, dir: b.outs[i].path}, res, nil
}

// finish writes each job's audit ledgers from the closed nodes' ledgers
// and moves a failed job's stage into place (or drops it).
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
	for _, r := range ran {
		if err := writeAudit(ledgers, b.specs[r.i].PartyNames(), r.id, filepath.Join(r.dir, "audit")); err != nil {
			errs = append(errs, err)
		}
		if r.failed {
			errs = append(errs, b.outs[r.i].place(r.dir, true))
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

// partyLeads makes one of parties the Raft leader, and so the job's
// coordinator, unless one already is: as when Run starts the parties
// alone, no other member coordinates (or sends) anything of the job.
func partyLeads(ctx context.Context, cluster *Cluster, parties []string) error {
	leader, err := cluster.WaitLeader(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(parties, leader.Name()) {
		return nil
	}
	return cluster.MakeLeader(ctx, parties[0])
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

// batchKey is the consortium's key, dealt in the background: dealing (a
// safe-prime search) needs no node, so it runs while the nodes start and
// the jobs that need no key run.
type batchKey struct {
	dealt     chan dealtKey // nil: nothing to deal
	got       bool
	installed bool
}

type dealtKey struct {
	install func(name, dataDir string) error
	err     error
}

// dealKey starts dealing the key for the batch's members if opts.Setup is
// set and some job's kind needs it.
func (b *batch) dealKey(opts BatchOptions) *batchKey {
	k := &batchKey{}
	if opts.Setup == nil || !slices.Contains(b.usesKey, true) {
		return k
	}
	k.dealt = make(chan dealtKey, 1)
	names := slices.Clone(b.names)
	go func() {
		install, err := opts.Setup(names)
		k.dealt <- dealtKey{install, err}
	}()
	return k
}

// install waits for the key and, the first time, installs each member's
// share in its data dir, where a job's steps read it.
func (k *batchKey) install(ctx context.Context, cluster *Cluster) error {
	if k.dealt == nil || k.installed {
		return nil
	}
	var d dealtKey
	select {
	case d = <-k.dealt:
		k.got = true
	case <-ctx.Done():
		return fmt.Errorf("sim: waiting for the key to be dealt: %w", ctx.Err())
	}
	if d.err != nil {
		return d.err
	}
	for _, name := range cluster.Names {
		if err := d.install(name, cluster.DataDir(name)); err != nil {
			return err
		}
	}
	k.installed = true
	return nil
}

// wait waits for a dealing still under way, so that it does not outlive
// the batch: it takes no context, and ends within seconds.
func (k *batchKey) wait() {
	if k.dealt != nil && !k.got {
		<-k.dealt
	}
}
