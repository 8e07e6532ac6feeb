package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/examples"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

func (a *app) simCmd() *cobra.Command {
	var out string
	var timeout time.Duration
	var force bool
	var raftTimeout time.Duration
	var state, policyFile, cpuProfile string
	cmd := &cobra.Command{
		Use:   "sim SPEC.yaml --out DIR",
		Short: "Run a job with one in-process node per party (real libp2p on loopback, real Raft)",
		Long: `sim starts one node per party named in the spec, in this process, runs the job and
writes DIR/result.json and DIR/audit/PARTY.jsonl. Paths in the spec are relative to the
spec file. It exits non-zero, leaving no result.json, if the job fails.

DIR must be new or empty; with --force a non-empty DIR is replaced whole when the run
succeeds, and left as it was when it fails. The run writes into a fresh directory beside
DIR and renames it into place at the end, so DIR never mixes two runs' files.

The nodes' data dirs are scratch, removed at the end, unless --state STATE keeps them:
a later sim with the same --state (and the same parties) restarts those nodes, so what a
job left each party is still there. Train with kind sjc, then classify with kind
sjc-predict naming the training job (result.json's "job"):

  cohort sim examples/sjc/spec.yaml --out /tmp/train --state /tmp/hospitals
  cohort sim predict.yaml --out /tmp/pred --state /tmp/hospitals

Every node runs under the default policy a new node starts with ('cohort node policy show
--file default') unless --policy FILE gives every node that policy instead.

The simulation's keys are dealt once per set of parties and kept in the user's cache
dir (cohort/sim-keys, mode 0700): a simulation's operator holds every share anyway.
COHORT_SIM_KEY_CACHE=off deals a fresh key each run; COHORT_SIM_KEY_CACHE=DIR moves it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out DIR is required")
			}
			if raftTimeout < 0 || (raftTimeout > 0 && raftTimeout < 50*time.Millisecond) || raftTimeout > time.Minute {
				return fmt.Errorf("--raft-timeout %v: want 0 (the default) or between 50ms and 1m", raftTimeout)
			}
			ms := int(raftTimeout.Milliseconds())
			pol, err := loadPolicy(policyFile)
			if err != nil {
				return err
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			res, err := a.runSim(cmd, args[0], sim.RunOptions{Out: out, Timeout: timeout, Replace: force, Setup: a.consortiumKeys(),
				Timing: node.Timing{HeartbeatMS: ms, ElectionMS: ms}, State: state, Policy: pol})
			if err != nil {
				if errors.Is(err, sim.ErrOutNotEmpty) {
					return fmt.Errorf("%w (choose a new --out, or --force to replace it whole once the run succeeds)", err)
				}
				return err
			}
			return a.printResult(res, out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output directory for result.json and audit/ (new or empty)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	cmd.Flags().BoolVar(&force, "force", false, "replace a non-empty --out whole if the run succeeds")
	cmd.Flags().StringVar(&policyFile, "policy", "", "every node's policy file (default: the policy a new node starts with)")
	cmd.Flags().StringVar(&state, "state", "", "keep the nodes' data dirs (identities, Raft logs, models, keys) in this directory and restart them there on the next run with the same --state")
	cmd.Flags().DurationVar(&raftTimeout, "raft-timeout", 0, "Raft heartbeat and election timeout of the simulated nodes (0: 400ms, more when many nodes share few cores); raise it, e.g. to 3s, on a heavily loaded machine, where busy nodes miss heartbeats and liveness probes and steps are re-run")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (for go tool pprof)")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

// runSim runs one spec with sim.Run, this binary's kinds and progress lines.
func (a *app) runSim(cmd *cobra.Command, spec string, o sim.RunOptions) (map[string]any, error) {
	o.Kinds = kinds()
	if a.format == "text" {
		o.Progress = a.stderr
	}
	return sim.Run(cmd.Context(), spec, o)
}

// loadPolicy reads --policy, or returns nil (the default) without one.
func loadPolicy(file string) (*policy.Policy, error) {
	if file == "" {
		return nil, nil
	}
	return policy.Load(file)
}

func (a *app) printResult(res map[string]any, out string) error {
	if a.format == "json" {
		return a.printJSON(res)
	}
	keys := make([]string, 0, len(res))
	for k := range res {
		if k != "timing" && k != "bytes" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeField(a.stdout, "", k, res[k])
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tseconds\t")
	for _, k := range sortedKeys(res["timing"]) {
		fmt.Fprintf(tw, "%s\t%.3f\t\n", k, res["timing"].(map[string]any)[k])
	}
	fmt.Fprintln(tw, "party\tbytes sent\t")
	for _, k := range sortedKeys(res["bytes"]) {
		fmt.Fprintf(tw, "%s\t%.0f\t\n", k, res["bytes"].(map[string]any)[k])
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "%-10s %s\n", "written:", filepath.Join(out, "result.json"))
	return nil
}

// writeField prints one field of a decoded JSON result as text: scalars and
// lists of scalars on the key's line, objects as indented "key: value" lines
// below it (never Go's map[...] syntax).
func writeField(w io.Writer, indent, key string, v any) {
	label := fmt.Sprintf("%s%-10s", indent, key+":")
	switch v := v.(type) {
	case map[string]any:
		fmt.Fprintln(w, strings.TrimRight(label, " "))
		for _, k := range sortedKeys(v) {
			writeField(w, indent+"  ", k, v[k])
		}
	default:
		fmt.Fprintf(w, "%s %s\n", label, formatValue(v))
	}
}

// formatValue renders a decoded JSON value on one line.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		return v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		items := make([]string, len(v))
		for i, x := range v {
			items[i] = formatValue(x)
		}
		return strings.Join(items, ", ")
	case map[string]any:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	default:
		return fmt.Sprint(v)
	}
}

// sortedKeys returns the keys of a JSON object (or nothing for other values).
func sortedKeys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a *app) demoCmd() *cobra.Command {
	var out, policyFile, cpuProfile string
	var force bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run every bundled example job on in-process nodes over loopback",
		Long: `demo extracts the bundled examples and runs them, two at a time, on one cluster of
real nodes in this process: a node per party of any example, libp2p on loopback, a
Raft-elected coordinator that is a party of every example, one dealt key (cached as
for sim; COHORT_SIM_KEY_CACHE=off deals a fresh one). It prints each
example's result and phase timings in turn, in the order of the examples. Each example's
result.json and audit/ go to OUT/EXAMPLE; OUT is --out (new or empty) or, by default, a
fresh directory under the system temp dir, printed at the start and the end. Under
--policy, a dataset is named by its path among the examples (sum/data/north.csv).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			defer demoTables()()
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			work, err := os.MkdirTemp(a.tempDir(), "cohort-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(work)
			if err := examples.Extract(work); err != nil {
				return err
			}
			if out == "" {
				// A fresh directory per run: a fixed one under the shared temp
				// dir mixed runs and users.
				if out, err = os.MkdirTemp(a.tempDir(), "cohort-demo-out-"); err != nil {
					return fmt.Errorf("demo output dir: %w", err)
				}
			} else if full, err := nonEmpty(out); err != nil {
				return fmt.Errorf("demo output dir: %w", err)
			} else if full && !force {
				return fmt.Errorf("demo --out %s is not empty; choose a new directory, or --force to replace each example's results in it", out)
			}
			if a.format == "text" {
				fmt.Fprintf(a.stdout, "writing results under %s\n", out)
			} else {
				fmt.Fprintf(a.stderr, "writing results under %s\n", out)
			}
			names, err := examples.Names()
			if err != nil {
				return err
			}
			pol, err := loadPolicy(policyFile)
			if err != nil {
				return err
			}
			jobs := make([]sim.BatchJob, len(names))
			for i, name := range names {
				jobs[i] = sim.BatchJob{Spec: filepath.Join(work, name, "spec.yaml"), Out: filepath.Join(out, name), Replace: force}
			}
			o := sim.BatchOptions{Kinds: kinds(), Timeout: 5 * time.Minute, Setup: a.consortiumKeys(), Policy: pol, OnStart: a.clusterStarted}
			if a.format == "text" {
				o.Progress = a.stderr
			}
			all := map[string]any{}
			err = sim.RunBatch(cmd.Context(), jobs, o, func(i int, res map[string]any) error {
				all[names[i]] = res
				if a.format != "text" {
					return nil
				}
				fmt.Fprintf(a.stdout, "== %s\n", names[i])
				return a.printResult(res, jobs[i].Out)
			})
			var failed *sim.JobError
			if errors.As(err, &failed) {
				if a.format == "text" {
					fmt.Fprintf(a.stdout, "== %s\n", names[failed.Job])
				}
				return fmt.Errorf("demo %s: %w", names[failed.Job], failed.Err)
			}
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			if a.format == "json" {
				return a.printJSON(all)
			}
			fmt.Fprintf(a.stdout, "demo finished in %.2fs: %s; results under %s\n", time.Since(start).Seconds(), strings.Join(names, ", "), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "where to write each example's result.json and audit/, new or empty (default: a fresh directory under $TMPDIR, printed)")
	cmd.Flags().BoolVar(&force, "force", false, "replace earlier results in a non-empty --out")
	cmd.Flags().StringVar(&policyFile, "policy", "", "every node's policy file (default: the policy a new node starts with)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (for go tool pprof)")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

// demoTableBudget is the demo's budget for the process's Paillier
// fixed-base tables (paillier.SetFixedBaseBudget): room for the small
// tables of its key (0.2 and 0.4 MiB at 2048 bits), none for the wide
// ones (57 and 23 MiB). A wide table repays its build (about 1 s of CPU)
// after some 490 encryptions; the demo makes a few dozen. Before
// secureagg counted packed ciphertexts rather than values towards it, one
// of four profiled runs passed 490 and built the encryption table it then
// hardly used: 1.0 of its 6.0 s of CPU (docs/runtime.md, "The demo's
// profile"). The budget stays as the bound on the demo's memory: every
// node of the consortium shares this process and its tables' counts.
const demoTableBudget = 8 << 20

// demoTables sets the process's table budget for the demo and returns
// what restores the one before: the demo owns its process, and a caller
// that runs it in process (the tests) gets its budget back.
func demoTables() (restore func()) {
	prev := paillier.SetFixedBaseBudget(demoTableBudget)
	return func() { paillier.SetFixedBaseBudget(prev) }
}

// startCPUProfile writes a CPU profile to path until the returned stop is
// called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// nonEmpty reports whether dir exists and holds anything.
func nonEmpty(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return len(entries) > 0, err
}
