package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/table"
)

// RunOptions configure one simulated job.
type RunOptions struct {
	Kinds job.Registry
	// Out receives result.json and audit/PARTY.jsonl.
	Out string
	// Progress, if set, receives a line per committed step.
	Progress io.Writer
	// Timeout bounds the whole run.
	Timeout time.Duration
	// Timing overrides node timeouts.
	Timing node.Timing
	// Setup is passed to the cluster (key material per node).
	Setup func(names []string) (func(name, dataDir string) error, error)
}

// Run starts one node per party of the spec, runs the job and writes
// OUT/result.json. The spec is checked (kind, params, every party's tables)
// before anything is started or written, so bad input leaves nothing behind.
// A failed job leaves no result.json, only the audit ledgers of what was sent.
func Run(ctx context.Context, specPath string, opts RunOptions) (map[string]any, error) {
	spec, err := job.LoadSpec(specPath)
	if err != nil {
		return nil, err
	}
	if err := Check(spec, opts.Kinds); err != nil {
		return nil, err
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, fmt.Errorf("output dir: %w", err)
	}
	resultPath := filepath.Join(opts.Out, "result.json")
	if err := os.Remove(resultPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove old result: %w", err)
	}
	scratch, err := os.MkdirTemp("", "cohort-sim-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)

	start := time.Now()
	var progress func(node.Event)
	if opts.Progress != nil {
		var mu sync.Mutex
		progress = func(e node.Event) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(opts.Progress, describeEvent(time.Since(start), e))
		}
	}
	cluster, err := StartCluster(ctx, scratch, spec.PartyNames(), ClusterOptions{
		Kinds: opts.Kinds, TablesDir: spec.Dir, AuditDir: filepath.Join(opts.Out, "audit"),
		Timing: opts.Timing, OnApply: progress, Setup: opts.Setup,
	})
	if err != nil {
		return nil, err
	}
	defer cluster.Close()
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return nil, err
	}
	first := cluster.Running()[0]
	id, err := first.Submit(ctx, raw)
	if err != nil {
		return nil, err
	}
	rec, err := first.Wait(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec.Status != node.StatusDone {
		return nil, fmt.Errorf("job %s (%s) failed: %s", id, spec.Kind, rec.Error)
	}
	var result map[string]any
	if err := json.Unmarshal(rec.Result, &result); err != nil {
		return nil, fmt.Errorf("job result: %w", err)
	}
	if err := writeAtomic(resultPath, append(rec.Result, '\n')); err != nil {
		return nil, err
	}
	return result, nil
}

// Check validates a spec for simulation: its kind and params, and that each
// party's tables load.
func Check(spec *job.Spec, kinds job.Registry) error {
	kind, ok := kinds[spec.Kind]
	if !ok {
		return spec.Errorf("kind", "unknown job kind %q", spec.Kind)
	}
	if err := kind.Validate(spec); err != nil {
		return err
	}
	for _, p := range spec.Parties {
		for _, t := range p.Tables {
			schema, err := spec.TableSchema(t.Name)
			if err != nil {
				return err
			}
			path, err := job.ResolveTablePath(spec.Dir, t.Path)
			if err != nil {
				return fmt.Errorf("%w: %s: party %s: %w", job.ErrSpec, spec.Source, p.Name, err)
			}
			if _, err := table.Load(path, t.Name, schema); err != nil {
				return fmt.Errorf("%w: %s: party %s: %w", job.ErrSpec, spec.Source, p.Name, err)
			}
		}
	}
	return nil
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
			s += fmt.Sprintf(" (failed: %v)", e.Failed)
		}
		return s
	case "finish":
		return prefix + ": finished"
	case "fail":
		return prefix + ": FAILED: " + e.Error
	}
	return prefix + ": " + e.Op
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
