package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/node"
)

// consortiumCmd changes and shows the consortium of a running node.
func (a *app) consortiumCmd() *cobra.Command {
	var config, apiAddr string
	cmd := groupCmd("consortium", "Show, add and remove consortium members; reload the consortium file")
	a.configFlag(cmd, true, &config, "node.yaml of the node to talk to (via its control socket)")
	cmd.PersistentFlags().StringVar(&apiAddr, "api", "", "talk to the node's HTTP listener instead: HOST:PORT or http://HOST:PORT")

	printCons := func(st node.ConsortiumStatus) error {
		if a.format == "json" {
			return a.printJSON(st)
		}
		for _, m := range st.Members {
			role := "non-voter"
			for _, v := range st.Voters {
				if v == m.Name {
					role = "voter"
				}
			}
			fmt.Fprintf(a.stdout, "%-16s %-9s %s  %s\n", m.Name, role, m.PeerID, strings.Join(m.Addrs, ", "))
		}
		return nil
	}
	// request sends one consortium request to the node and returns the
	// membership it answers with.
	request := func(cmd *cobra.Command, method, path string, body []byte) (node.ConsortiumStatus, error) {
		var st node.ConsortiumStatus
		c, err := a.newClient(config, apiAddr)
		if err != nil {
			return st, err
		}
		_, err = c.do(cmd.Context(), method, path, body, &st)
		return st, err
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "List the members as the Raft log has them, and which vote",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := request(cmd, "GET", "/v1/consortium", nil)
			if err != nil {
				return err
			}
			return printCons(st)
		},
	}
	var name, peerID string
	var addrs []string
	add := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			var m node.Member
			switch {
			case len(args) == 1:
				b, err := os.ReadFile(args[0])
				if err != nil {
					return err
				}
				if err := json.Unmarshal(b, &m); err != nil {
					return fmt.Errorf("%s: want the JSON of 'cohort node init --format json': %w", args[0], err)
				}
			case name != "" && peerID != "":
				m = node.Member{Name: name, PeerID: peerID, Addrs: addrs}
			default:
				return fmt.Errorf("give MEMBER.json or --name and --peer-id (and --addr)")
			}
			body, _ := json.Marshal(m)
			st, err := request(cmd, "POST", "/v1/consortium/members", body)
			if err != nil {
				return err
			}
			if a.format == "text" {
				fmt.Fprintf(a.stderr, "added %s; deal a new threshold key for the %d members before jobs that decrypt\n", m.Name, len(st.Members))
			}
			return printCons(st)
		},
	}
	add.Flags().StringVar(&name, "name", "", "the new member's party name")
	add.Flags().StringVar(&peerID, "peer-id", "", "the new member's peer id")
	add.Flags().StringSliceVar(&addrs, "addr", nil, "the new member's libp2p multiaddrs")
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a member through a Raft configuration change (refused while a job runs)",
		Long: `remove commits the member's removal to the Raft log: every node drops it from its
consortium file and refuses its connections from then on, and the leader removes it
from Raft (promoting the next member by name if it voted). Stop the removed node.
Deal a new threshold key for the remaining members: the removed member still holds a
share of the old one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := request(cmd, "DELETE", "/v1/consortium/members/"+url.PathEscape(args[0]), nil)
			if err != nil {
				return err
			}
			if a.format == "text" {
				fmt.Fprintf(a.stderr, "removed %s; deal a new threshold key for the %d remaining members\n", args[0], len(st.Members))
			}
			return printCons(st)
		},
	}
	reload := &cobra.Command{
		Use:   "reload",
		Short: "Re-read the node's consortium file for new member addresses and redial them",
		Long: `reload makes the running node re-read its consortium file: each member's addresses
become the file's and every member is redialled at once, so a member that moved is
found again without a restart. Members themselves change only through add and remove;
a file that lists other members or peer ids is refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := request(cmd, "POST", "/v1/consortium/reload", nil)
			if err != nil {
				return err
			}
			return printCons(st)
		},
	}
	cmd.AddCommand(show, add, remove, reload)
	return cmd
}
