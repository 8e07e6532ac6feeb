package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/api"
	"github.com/spf13/cobra"
)

// consortiumCmd changes and shows the consortium of a running node.
func (a *app) consortiumCmd() *cobra.Command {
	t := &target{}
	cmd := groupCmd("consortium", "Show, add and remove consortium members; reload the consortium file")
	a.configFlag(cmd, true, &t.config, "node.yaml of the node to talk to (via its control socket)")
	cmd.PersistentFlags().StringVar(&t.api, "api", "", "talk to the node's HTTP listener instead: HOST:PORT or http://HOST:PORT")
	show := a.consortiumAction(t, &cobra.Command{
		Use:   "show",
		Short: "List the members as the Raft log has them, and which vote",
		Args:  cobra.NoArgs,
	}, func(ctx context.Context, c *client, _ []string) (*api.ConsortiumStatus, error) {
		return c.Consortium(ctx)
	})
	remove := a.consortiumAction(t, &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a member through a Raft configuration change (refused while a job runs)",
		Long: `remove commits the member's removal to the Raft log: every node drops it from its
consortium file and refuses its connections from then on, and the leader removes it
from Raft (promoting the next member by name if it voted). Stop the removed node.
Deal a new threshold key for the remaining members: the removed member still holds a
share of the old one.`,
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, c *client, args []string) (*api.ConsortiumStatus, error) {
		st, err := c.RemoveMember(ctx, args[0])
		if err == nil && a.format == "text" {
			fmt.Fprintf(a.stderr, "removed %s; deal a new threshold key for the %d remaining members\n", args[0], len(st.Members))
		}
		return st, err
	})
	reload := a.consortiumAction(t, &cobra.Command{
		Use:   "reload",
		Short: "Re-read the node's consortium file for new member addresses and redial them",
		Long: `reload makes the running node re-read its consortium file: each member's addresses
become the file's and every member is redialled at once, so a member that moved is
found again without a restart. Members themselves change only through add and remove;
a file that lists other members or peer ids is refused.`,
		Args: cobra.NoArgs,
	}, func(ctx context.Context, c *client, _ []string) (*api.ConsortiumStatus, error) {
		return c.ReloadConsortium(ctx)
	})
	cmd.AddCommand(show, a.consortiumAddCmd(t), remove, reload)
	return cmd
}

// consortiumAction makes cmd send one consortium request and print the
// membership the node answers with.
func (a *app) consortiumAction(t *target, cmd *cobra.Command, act func(ctx context.Context, c *client, args []string) (*api.ConsortiumStatus, error)) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := a.newClient(t.config, t.api)
		if err != nil {
			return err
		}
		st, err := act(cmd.Context(), c, args)
		if err != nil {
			return c.hint(err)
		}
		return a.printConsortium(st)
	}
	return cmd
}

func (a *app) printConsortium(st *api.ConsortiumStatus) error {
	if a.format == "json" {
		return a.printJSON(st)
	}
	for _, m := range st.Members {
		role := "non-voter"
		if slices.Contains(st.Voters, m.Name) {
			role = "voter"
		}
		fmt.Fprintf(a.stdout, "%-16s %-9s %s  %s\n", m.Name, role, m.PeerID, strings.Join(m.Addrs, ", "))
	}
	return nil
}

func (a *app) consortiumAddCmd(t *target) *cobra.Command {
	var name, peerID string
	var addrs []string
	add := a.consortiumAction(t, &cobra.Command{
		Use:   "add [MEMBER.json] | add --name NAME --peer-id ID --addr MULTIADDR...",
		Short: "Add a member through a Raft configuration change (refused while a job runs)",
		Long: `add commits a new member to the consortium's Raft log. Every node then admits it (its
connections are refused until now), adds it to its consortium file, and the leader
adds it to Raft as a non-voting replica (promoted if it is among the first voters by
name). The member comes from the JSON 'cohort node init --format json' printed on its
machine, or from the flags. Start the new node with 'cohort node run --join' and a
consortium file that lists every member, itself included.

Refused while a job runs. The consortium's threshold key was dealt for the old
members: deal a new one for the new member set ('cohort keys deal') and install each
share before running jobs that decrypt.`,
		Args: cobra.MaximumNArgs(1),
	}, func(ctx context.Context, c *client, args []string) (*api.ConsortiumStatus, error) {
		var m api.Member
		switch {
		case len(args) == 1:
			b, err := os.ReadFile(args[0])
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, fmt.Errorf("%s: want the JSON of 'cohort node init --format json': %w", args[0], err)
			}
		case name != "" && peerID != "":
			m = api.Member{Name: name, PeerID: peerID, Addrs: addrs}
		default:
			return nil, fmt.Errorf("give MEMBER.json or --name and --peer-id (and --addr)")
		}
		st, err := c.AddMember(ctx, m)
		if err == nil && a.format == "text" {
			fmt.Fprintf(a.stderr, "added %s; deal a new threshold key for the %d members before jobs that decrypt\n", m.Name, len(st.Members))
		}
		return st, err
	})
	add.Flags().StringVar(&name, "name", "", "the new member's party name")
	add.Flags().StringVar(&peerID, "peer-id", "", "the new member's peer id")
	add.Flags().StringSliceVar(&addrs, "addr", nil, "the new member's libp2p multiaddrs")
	return add
}
