package sim

import (
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

	"github.com/cohortdm/cohort/internal/atomicfile"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/table"
)

// RunOptions configure one simulated job.
type RunOptions struct {
	Kinds job.Registry
	// Out receives result.json and audit/PARTY.jsonl. It must be absent or
	// empty unless Replace is set. The run writes into a fresh directory
	// beside Out and moves it into place when it ends, so Out never mixes
	// the files of two runs.
	Out string
	// Replace lets a successful run replace a non-empty Out whole; a failed
	// run then leaves the earlier Out as it was.
	Replace bool
	// Progress, if set, receives a line per committed step.
	Progress io.Writer
	// Timeout bounds the whole run.
	Timeout time.Duration
	// Timing overrides node timeouts.
	Timing node.Timing
	// Setup is passed to the cluster (key material per node) for kinds
	// that decrypt with the consortium's threshold key (job.KeyUser);
	// others run without it, since dealing a key costs seconds.
	Setup func(names []string) (func(name, dataDir string) error, error)
	// Policy is every node's organisation policy (policy.Default when nil:
	// a simulation runs under the policy a new node starts with).
	Policy *policy.Policy
	// State, if set, keeps the nodes' data dirs there instead of in a
	// scratch directory removed at the end, and starts the nodes of an
	// earlier run on the same State again: what a job left each party
	// (an sjc model, a generated key) is there for the next run, such as
	// an sjc-predict naming the model.
	State string
}

// ErrOutNotEmpty means Run was given an output directory that already holds
// files, without RunOptions.Replace.
var ErrOutNotEmpty = errors.New("output directory is not empty")

// Run starts one node per party of the spec, runs the job and writes
// OUT/result.json. The spec is checked (kind, params, every party's tables)
// before anything is started or written, so bad input leaves nothing behind.
// A failed job leaves no result.json, only the audit ledgers of what was sent
// (or, when it was to replace an earlier OUT, that OUT untouched).
func Run(ctx context.Context, specPath string, opts RunOptions) (map[string]any, error) {
	spec, err := job.LoadSpec(specPath)
	if err != nil {
		return nil, err
	}
	if err := Check(ctx, spec, opts.Kinds); err != nil {
		return nil, err
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	o, err := checkOut(opts.Out, opts.Replace)
	if err != nil {
		return nil, err
	}
	stage, err := o.stage()
	if err != nil {
		return nil, err
	}
	result, runErr := run(ctx, spec, specPath, stage, opts)
	if err := o.finish(stage, runErr); err != nil {
		return nil, err
	}
	return result, nil
}

// outDir is a run's output directory, checked before anything starts.
type outDir struct {
	path    string // absolute
	earlier bool   // it held an earlier run's files (Replace was set)
}

// checkOut checks that out is new or empty, or that replace allows
// replacing it.
func checkOut(out string, replace bool) (outDir, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return outDir{}, fmt.Errorf("output dir: %w", err)
	}
	earlier, err := nonEmptyDir(abs)
	if err != nil {
		return outDir{}, fmt.Errorf("output dir: %w", err)
	}
	if earlier && !replace {
		return outDir{}, fmt.Errorf("%w: %s", ErrOutNotEmpty, out)
	}
	return outDir{path: abs, earlier: earlier}, nil
}

// stage makes the fresh directory beside the output that a run writes into.
func (o outDir) stage() (string, error) {
	if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
		return "", fmt.Errorf("output dir: %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(o.path), "."+filepath.Base(o.path)+".cohort-sim-*")
	if err != nil {
		return "", fmt.Errorf("output dir: %w", err)
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		os.RemoveAll(stage)
		return "", fmt.Errorf("output dir: %w", err)
	}
	return stage, nil
}

// finish moves a run's stage into place and returns the run's error: a
// failed run leaves its audit ledgers but no result, or, when it was to
// replace an earlier output, that output untouched.
func (o outDir) finish(stage string, runErr error) error {
	if err := o.place(stage, runErr != nil); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// place moves stage to the output dir, or drops it when the run failed
// and the output holds an earlier run's files.
func (o outDir) place(stage string, failed bool) error {
	if failed && o.earlier {
		os.RemoveAll(stage) // keep the earlier run's output whole
		return nil
	}
	if err := replaceDir(stage, o.path); err != nil {
		os.RemoveAll(stage)
		return fmt.Errorf("output dir: %w", err)
	}
	return nil
}

// nonEmptyDir reports whether dir exists and holds anything; a path that is
// not a directory is an error.
func nonEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", dir, err)
	}
	return len(names) > 0, nil
}

// replaceDir moves the finished stage directory to out, replacing whatever
// out held. Both are in the same parent directory, so each step is a rename;
// between the two renames out is briefly absent, never half old, half new.
func replaceDir(stage, out string) error {
	old := stage + ".old"
	moved := false
	if err := os.Rename(out, old); err == nil {
		moved = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("move %s aside: %w", out, err)
	}
	if err := os.Rename(stage, out); err != nil {
		if moved {
			_ = os.Rename(old, out) // put the earlier output back
		}
		return fmt.Errorf("move new output to %s: %w", out, err)
	}
	if moved {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove earlier output: %w", err)
		}
	}
	return nil
}

// run runs the job with its output under dir; the nodes are closed (and
// their ledgers with them) when it returns.
func run(ctx context.Context, spec *job.Spec, specPath, dir string, opts RunOptions) (map[string]any, error) {
	scratch := opts.State
	if scratch == "" {
		var err error
		if scratch, err = os.MkdirTemp("", "cohort-sim-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(scratch)
	} else {
		var err error
		if scratch, err = filepath.Abs(scratch); err != nil {
			return nil, fmt.Errorf("state dir: %w", err)
		}
		if err := os.MkdirAll(scratch, 0o700); err != nil {
			return nil, fmt.Errorf("state dir: %w", err)
		}
	}

	cluster, err := StartCluster(ctx, scratch, spec.PartyNames(), ClusterOptions{
		Kinds: opts.Kinds, TablesDir: spec.Dir, Tables: partySources(spec), AuditDir: filepath.Join(dir, "audit"),
		Timing: opts.Timing, OnApply: progressLines(opts.Progress), Setup: keySetup(opts, spec), Policy: cmp.Or(opts.Policy, policy.Default()),
		RandomizerPool: noPool, LatticePool: noPool,
	})
	if err != nil {
		return nil, err
	}
	defer cluster.Close()
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("read job spec: %w", err)
	}
	_, result, err := runJob(ctx, cluster, spec, raw, dir, opts.Kinds, nil)
	return result, err
}

// runJob submits raw, the spec as it is sent, from the first of the spec's
// parties on cluster, waits for the job and writes dir/result.json (and
// what the kind assembles under dir). It returns the job's id, once there
// is one, with the result. submitted, if set, is called once the
// submission is committed or has failed.
func runJob(ctx context.Context, cluster *Cluster, spec *job.Spec, raw []byte, dir string, kinds job.Registry, submitted func()) (string, map[string]any, error) {
	first := cluster.Node(spec.PartyNames()[0])
	if first == nil {
		return "", nil, fmt.Errorf("sim: party %s is not running", spec.PartyNames()[0])
	}
	id, err := first.Submit(ctx, raw)
	if submitted != nil {
		submitted()
	}
	if err != nil {
		return "", nil, err
	}
	rec, err := first.Wait(ctx, id)
	if err != nil {
		return id, nil, err
	}
	if rec.Status != node.StatusDone {
		msg := rec.Error
		for _, p := range slices.Sorted(maps.Keys(rec.Failures)) {
			msg += fmt.Sprintf("\n  %s: %s", p, rec.Failures[p])
		}
		return id, nil, fmt.Errorf("job %s (%s) failed: %s", id, spec.Kind, msg)
	}
	if raw, err = withBytes(rec.Result, id, cluster, spec.PartyNames()); err != nil {
		return id, nil, fmt.Errorf("job %s (%s): %w", id, spec.Kind, err)
	}
	if a, ok := kinds[spec.Kind].(job.Assembler); ok {
		// sim owns every party, so it may put together what they each keep.
		parties := map[string]job.Secrets{}
		for _, name := range spec.PartyNames() {
			parties[name] = job.DirSecrets(cluster.DataDir(name))
		}
		if raw, err = a.Assemble(ctx, spec, raw, parties, dir); err != nil {
			return id, nil, fmt.Errorf("job %s (%s): assemble the result: %w", id, spec.Kind, err)
		}
	}
	var result map[string]any
	if err := json.Unmarshal(raw, &result); err != nil {
		return id, nil, fmt.Errorf("job result: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, "result.json"), append(raw, '\n'), 0o644); err != nil {
		return id, nil, err
	}
	return id, result, nil
}

// keySetup returns opts.Setup when the job's kind decrypts with the
// consortium's threshold key, else nil.
func keySetup(opts RunOptions, spec *job.Spec) func(names []string) (func(name, dataDir string) error, error) {
	if ku, ok := opts.Kinds[spec.Kind].(job.KeyUser); ok && ku.UsesThresholdKey() {
		return opts.Setup
	}
	return nil
}

// withBytes adds "bytes" (what each party sent for the job, from each
// party's own audit ledger) to a result.
func withBytes(result []byte, id string, cluster *Cluster, parties []string) ([]byte, error) {
	var res map[string]any
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("job result: %w", err)
	}
	sent, err := cluster.SentBytes(id, parties)
	if err != nil {
		return nil, err
	}
	res["bytes"] = sent
	return json.MarshalIndent(res, "", "  ")
}

// Check validates a spec for simulation: its kind and params, and that each
// party's tables load from their sources (ctx bounds database reads).
func Check(ctx context.Context, spec *job.Spec, kinds job.Registry) error {
	kind, ok := kinds[spec.Kind]
	if !ok {
		known := make([]string, 0, len(kinds))
		for k := range kinds {
			known = append(known, k)
		}
		slices.Sort(known)
		return spec.Errorf("kind", "unknown job kind %q: this binary runs %s", spec.Kind, strings.Join(known, ", "))
	}
	if err := kind.Validate(spec); err != nil {
		return err
	}
	for i, p := range spec.Parties {
		// Each party becomes a node whose name names files; say so here
		// rather than when its node is created.
		if err := node.CheckName(p.Name); err != nil {
			return spec.Errorf(fmt.Sprintf("parties[%d].name", i), "%v", err)
		}
	}
	for _, p := range spec.Parties {
		for _, t := range p.Tables {
			schema, err := spec.TableSchema(t.Name)
			if err != nil {
				return err
			}
			src, err := job.ResolveSource(spec.Dir, t, nil, true)
			if err != nil {
				return fmt.Errorf("%w: %s: party %s: %w", job.ErrSpec, spec.Source, p.Name, err)
			}
			if err := checkTable(ctx, src, schema); err != nil {
				return fmt.Errorf("%w: %s: party %s: table %s: %w", job.ErrSpec, spec.Source, p.Name, t.Name, err)
			}
		}
	}
	return nil
}

// partySources maps each party's tables that name a source in the spec, as
// that party's node.yaml would (tables:): simulated nodes, like real ones,
// read only sources their own configuration names.
func partySources(spec *job.Spec) map[string]map[string]table.Source {
	out := map[string]map[string]table.Source{}
	for _, p := range spec.Parties {
		for _, t := range p.Tables {
			if t.Source == nil {
				continue
			}
			if out[p.Name] == nil {
				out[p.Name] = map[string]table.Source{}
			}
			out[p.Name][t.Name] = *t.Source
		}
	}
	return out
}

// progressLines returns an OnApply that writes a line per committed step
// to w, timed from now, or nil without w.
func progressLines(w io.Writer) func(node.Event) {
	if w == nil {
		return nil
	}
	start := time.Now()
	var mu sync.Mutex
	return func(e node.Event) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, describeEvent(time.Since(start), e))
	}
}

func describeEvent(at time.Duration, e node.Event) string {
	prefix := fmt.Sprintf("[%6.2fs] job %s", at.Seconds(), e.Job)
	switch e.Op {
	case "submit":
		return prefix + ": submitted"
	case "start":
		return fmt.Sprintf("%s: %s round %d started (attempt %d)", prefix, e.Phase, e.Round, e.Attempt)
	case "done":
		s := fmt.Sprintf("%s: %s round %d done", prefix, e.Phase, e.Round)
		if len(e.Failed) > 0 {
			s += fmt.Sprintf(" (failed: %s)", strings.Join(e.Failed, ", "))
			for _, p := range e.Failed {
				if why := e.Failures[p]; why != "" {
					s += fmt.Sprintf("\n    %s: %s", p, why)
				}
			}
		}
		return s
	case "finish":
		return prefix + ": finished"
	case "fail":
		return prefix + ": FAILED: " + e.Error
	}
	return prefix + ": " + e.Op
}
