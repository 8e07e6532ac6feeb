package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/policy"
)

// policyCmd is `cohort node policy`: the organisation's policy in force on
// its node.
func (a *app) policyCmd() *cobra.Command {
	cmd := groupCmd("policy", "Show this node's policy and the privacy budget spent and left")
	var config, apiAddr string
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the policy in force (re-read when its file changes) and the budget spent and left per column",
		Long: `show asks the running node for the policy it enforces (node.yaml's policy_file, or the
default) and, per table.column, the differential-privacy budget that noised results have
spent and what is left; per dataset, the exact releases (exact_releases) and synthetic
releases (synthetic_releases) made and what is left of each allowance. Without a running node, --file prints a policy file as the node
would read it, or the default policy when --file is "default".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var s *policy.Show
			if file, _ := cmd.Flags().GetString("file"); file != "" {
				p := policy.Default()
				if file != "default" {
					var err error
					if p, err = policy.Load(file); err != nil {
						return err
					}
				}
				s = &policy.Show{Policy: p}
			} else {
				c, err := a.newClient(config, apiAddr)
				if err != nil {
					return err
				}
				raw, err := c.Policy(cmd.Context())
				if err != nil {
					return c.hint(err)
				}
				s = new(policy.Show)
				if err := json.Unmarshal(raw, s); err != nil {
					return fmt.Errorf("the node's policy: %w", err)
				}
			}
			if a.format == "json" {
				return a.printJSON(s)
			}
			return a.printPolicy(s)
		},
	}
	a.configFlag(show, false, &config, "node.yaml of the node to ask (via its control socket)")
	show.Flags().StringVar(&apiAddr, "api", "", "ask the node's HTTP listener instead: HOST:PORT or http://HOST:PORT")
	show.Flags().String("file", "", "print this policy file (or \"default\") without asking a node")
	cmd.AddCommand(show)
	return cmd
}

func (a *app) printPolicy(s *policy.Show) error {
	if s.Policy == nil {
		return fmt.Errorf("policy: the node's answer holds no policy")
	}
	b, err := yaml.Marshal(s.Policy)
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	fmt.Fprintf(a.stdout, "%s", b)
	// What is spent and released is a report, not policy: written as YAML
	// comments, so the output still reads back as a policy file.
	tw := tabwriter.NewWriter(a.stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw)
	if len(s.Spent) == 0 {
		fmt.Fprintln(tw, "# spent: nothing yet")
	} else {
		fmt.Fprintln(tw, "# spent:\tEPSILON SPENT\tEPSILON LEFT\tDELTA SPENT\tDELTA LEFT")
		for _, k := range slices.Sorted(maps.Keys(s.Spent)) {
			sp, left := s.Spent[k], s.Left[k]
			fmt.Fprintf(tw, "# %s\t%g\t%g\t%g\t%g\n", k, sp.Epsilon, left.Epsilon, sp.Delta, left.Delta)
		}
	}
	printReleases(tw, "exact releases", s.Releases, s.Policy.ExactReleases)
	printReleases(tw, "synthetic releases", s.Synthetic, s.Policy.SyntheticReleases)
	return tw.Flush()
}

// printReleases writes, as YAML comments, the releases made per dataset
// and what is left of the policy's allowance of them.
func printReleases(tw *tabwriter.Writer, what string, made map[string]int, allowance int) {
	fmt.Fprintln(tw)
	if len(made) == 0 {
		fmt.Fprintf(tw, "# %s: none yet\n", what)
		return
	}
	fmt.Fprintf(tw, "# %s:\tRELEASED\tLEFT\n", what)
	for _, d := range slices.Sorted(maps.Keys(made)) {
		fmt.Fprintf(tw, "# %s\t%d\t%d\n", d, made[d], max(0, allowance-made[d]))
	}
}
