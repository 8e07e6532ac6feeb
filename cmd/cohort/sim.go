package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/examples"
	"github.com/cohortdm/cohort/sim"
)

func (a *app) simCmd() *cobra.Command {
	var out string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "sim SPEC.yaml --out DIR",
		Short: "Run a job with one in-process node per party (real libp2p on loopback, real Raft)",
		Long: `sim starts one node per party named in the spec, in this process, runs the job and
writes DIR/result.json and DIR/audit/PARTY.jsonl. Paths in the spec are relative to the
spec file. It exits non-zero, leaving no result.json, if the job fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out DIR is required")
			}
			res, err := a.runSim(cmd, args[0], out, timeout)
			if err != nil {
				return err
			}
			return a.printResult(res, out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output directory for result.json and audit/")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	return cmd
}

func (a *app) runSim(cmd *cobra.Command, spec, out string, timeout time.Duration) (map[string]any, error) {
	var progress io.Writer
	if a.format == "text" {
		progress = a.stderr
	}
	return sim.Run(cmd.Context(), spec, sim.RunOptions{
		Kinds: kinds(), Out: out, Progress: progress, Timeout: timeout, Setup: consortiumKeys,
	})
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
		fmt.Fprintf(a.stdout, "%-10s %v\n", k+":", res[k])
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
	var out string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run every bundled example job on in-process nodes over loopback",
		Long: `demo extracts the bundled examples and runs each one with 'sim': one real node per
party in this process, libp2p on loopback, a Raft-elected coordinator. Results go under
--out (a temporary directory by default).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			work, err := os.MkdirTemp("", "cohort-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(work)
			if err := examples.Extract(work); err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(os.TempDir(), "cohort-demo-out")
			}
			names, err := examples.Names()
			if err != nil {
				return err
			}
			all := map[string]any{}
			for _, name := range names {
				if a.format == "text" {
					fmt.Fprintf(a.stdout, "== %s\n", name)
				}
				dir := filepath.Join(out, name)
				res, err := a.runSim(cmd, filepath.Join(work, name, "spec.yaml"), dir, 5*time.Minute)
				if err != nil {
					return fmt.Errorf("demo %s: %w", name, err)
				}
				all[name] = res
				if a.format == "text" {
					if err := a.printResult(res, dir); err != nil {
						return err
					}
				}
			}
			if a.format == "json" {
				return a.printJSON(all)
			}
			fmt.Fprintf(a.stdout, "demo finished in %.2fs: %s\n", time.Since(start).Seconds(), strings.Join(names, ", "))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "where to write each example's result.json and audit/ (default: $TMPDIR/cohort-demo-out)")
	return cmd
}
