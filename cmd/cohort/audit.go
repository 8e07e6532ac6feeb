package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/audit"
)

func (a *app) auditCmd() *cobra.Command {
	var dir string
	var decisions bool
	cmd := &cobra.Command{
		Use:   "audit --dir DIR",
		Short: "Summarise what this node disclosed, per job, peer and kind",
		Long: `audit reads a node's ledger (DIR/audit.jsonl in a node's data dir) or, for a
simulation output dir, every DIR/audit/PARTY.jsonl, and prints messages and bytes sent per
job, peer and disclosure kind, and after each ledger the node's policy decisions on jobs
(accepted, refused with the rule, awaiting approval). --decisions prints only the decisions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required")
			}
			files, err := ledgerFiles(dir)
			if err != nil {
				return err
			}
			out := map[string][]audit.Row{}
			decided := map[string][]audit.Entry{}
			for _, f := range files {
				entries, err := audit.ReadFile(f)
				if err != nil {
					return err
				}
				out[f], decided[f] = audit.Summarize(entries), audit.Decisions(entries)
			}
			if a.format == "json" {
				if decisions {
					return a.printJSON(decided)
				}
				return a.printJSON(out)
			}
			for _, f := range files {
				fmt.Fprintf(a.stdout, "== %s\n", f)
				if !decisions {
					if err := audit.WriteTable(a.stdout, out[f]); err != nil {
						return err
					}
				}
				if len(decided[f]) > 0 || decisions {
					if err := audit.WriteDecisions(a.stdout, decided[f]); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "a node's data dir, or a sim output dir")
	cmd.Flags().BoolVar(&decisions, "decisions", false, "print only the policy decisions (with --format json, as entries per ledger)")
	return cmd
}

func ledgerFiles(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "audit.jsonl")); err == nil {
		return []string{filepath.Join(dir, "audit.jsonl")}, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no audit ledger in %s (looked for audit.jsonl and audit/*.jsonl)", dir)
	}
	sort.Strings(files)
	return files, nil
}
