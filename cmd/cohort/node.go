package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sjc"
)

func (a *app) nodeCmd() *cobra.Command {
	cmd := groupCmd("node", "Create, run and inspect this organisation's node")
	cmd.AddCommand(a.nodeInitCmd(), a.nodeRunCmd(), a.nodeStatusCmd(), a.tokenCmd(), a.policyCmd())
	return cmd
}

func (a *app) nodeInitCmd() *cobra.Command {
	var name, dir string
	var listen []string
	initCmd := &cobra.Command{
		Use:   "init --name NAME --dir DIR",
		Short: "Create a node: an Ed25519 identity, DIR/node.yaml and DIR/tables/",
		Long: `init writes DIR/identity.key (the node's libp2p identity, mode 0600), DIR/api.token (the
bearer token of the node's HTTP API, mode 0600), DIR/node.yaml, DIR/policy.yaml (this
organisation's policy: the conservative default, every field commented; no other member
sees it) and an empty DIR/tables/ (the node's tables_dir). Send the printed peer id and addresses to the
consortium; every member lists all members in DIR/consortium.yaml.

NAME is the party name used in job specs: ASCII letters, digits, '.', '_' and '-'.
--listen takes libp2p multiaddrs such as /ip4/0.0.0.0/tcp/7400 and
/ip4/0.0.0.0/udp/7400/quic-v1, not host:port.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required")
			}
			cfg, id, err := node.Init(name, dir, listen)
			if err != nil {
				return err
			}
			member := node.Member{Name: name, PeerID: id.String(), Addrs: cfg.Listen}
			if a.format == "json" {
				return a.printJSON(member)
			}
			entry, err := yaml.Marshal([]node.Member{member})
			if err != nil {
				return fmt.Errorf("member entry: %w", err)
			}
			fmt.Fprintf(a.stdout, "created node %s in %s\npeer id: %s\n", name, dir, id)
			fmt.Fprintf(a.stdout, "put this organisation's tables under %s\n", filepath.Join(dir, cfg.TablesDir))
			fmt.Fprintf(a.stdout, "add this member under 'members:' in every node's consortium.yaml (replace 0.0.0.0 with a reachable address):\n%s", entry)
			return nil
		},
	}
	initCmd.Flags().StringVar(&name, "name", "", "the organisation's party name")
	initCmd.Flags().StringVar(&dir, "dir", "", "data directory to create")
	initCmd.Flags().StringSliceVar(&listen, "listen", nil, "libp2p listen multiaddrs (default TCP and QUIC on port 7400)")

	return initCmd
}

func (a *app) nodeRunCmd() *cobra.Command {
	var runConfig string
	var join bool
	runCmd := &cobra.Command{
		Use:   "run --config DIR/node.yaml",
		Short: "Run the node until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := node.LoadConfig(runConfig)
			if err != nil {
				return configHint(err, runConfig, false)
			}
			cons, err := node.LoadConsortium(cfg.Consortium)
			if err != nil {
				return err
			}
			if cfg.TablesDir != "" {
				if _, err := os.Stat(cfg.TablesDir); err != nil {
					return fmt.Errorf("%w: %s: tables_dir: %w", node.ErrConfig, runConfig, err)
				}
			}
			if warning := keyWarning(cfg); warning != "" {
				fmt.Fprintf(a.stderr, "warning: %s\n", warning)
			}
			ks := kinds()
			group, err := job.ParseGroupMode("sjc_group_rows", cfg.SJCGroupRows) // node.Load checked it
			if err != nil {
				return fmt.Errorf("%w: %s: %w", node.ErrConfig, runConfig, err)
			}
			ks["sjc"] = sjc.Kind{MemoryBudget: cfg.SJCMemoryBudget, GroupRows: group} // node settings: node.yaml sjc_memory_budget, sjc_group_rows
			bgroup, err := job.ParseGroupMode("boost_group_rows", cfg.BoostGroupRows) // node.Load checked it
			if err != nil {
				return fmt.Errorf("%w: %s: %w", node.ErrConfig, runConfig, err)
			}
			ks["boost"] = boost.Kind{GroupRows: bgroup, LatticeCacheBytes: cfg.BoostLatticeCacheBytes} // node settings: node.yaml boost_group_rows, boost_lattice_cache_bytes
			n, err := node.New(node.Options{Config: cfg, Kinds: ks, Logger: a.logger(), Join: join, Version: version})
			if err != nil {
				return err
			}
			if err := n.Start(cons); err != nil {
				n.Close()
				return err
			}
			fmt.Fprintf(a.stderr, "node %s running (peer id %s)\n  listening on %s\n  control socket %s\n",
				cfg.Name, n.PeerID(), strings.Join(n.Addrs(), ", "), filepath.Join(cfg.DataDir, node.SocketName))
			if cfg.HTTP != "" {
				fmt.Fprintf(a.stderr, "  status and metrics on http://%s/status and /metrics (bearer token: 'cohort node token')\n", cfg.HTTP)
			}
			<-cmd.Context().Done()
			fmt.Fprintln(a.stderr, "stopping")
			return n.Close()
		},
	}
	a.configFlag(runCmd, false, &runConfig, "path of the node's node.yaml")
	runCmd.Flags().BoolVar(&join, "join", false, "first start of a member added with 'cohort consortium add': wait for the leader instead of bootstrapping Raft")

	return runCmd
}

func (a *app) nodeStatusCmd() *cobra.Command {
	var statusConfig, statusAPI string
	statusCmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running node's state: peer id, addresses, Raft state, leader, members, jobs",
		Long: `status asks a running node for its /status page, over the control socket DATA_DIR/cohort.sock
found through --config (or with --api, over the node's HTTP listener).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(statusConfig, statusAPI)
			if err != nil {
				return err
			}
			st, err := c.Status(cmd.Context())
			if err != nil {
				return c.hint(err)
			}
			if a.format == "json" {
				return a.printJSON(st)
			}
			leader := st.Leader
			if leader == "" {
				leader = "(none elected)"
			}
			fmt.Fprintf(a.stdout, "node:     %s\npeer id:  %s\naddrs:    %s\nraft:     %s\nleader:   %s\nmembers:  %s\njobs:     %d (%d running)\n",
				st.Name, st.PeerID, strings.Join(st.Addrs, ", "), st.RaftState, leader, strings.Join(st.Members, ", "), st.Jobs, st.Running)
			if m := st.Memory; m != nil {
				fmt.Fprintf(a.stdout, "memory:   %s resident, %s at most since start\n", mebibytes(m.RSS), mebibytes(m.PeakRSS))
				for _, k := range slices.Sorted(maps.Keys(m.PeakJobs)) {
					fmt.Fprintf(a.stdout, "          %s at most while %s ran\n", mebibytes(m.PeakJobs[k]), k)
				}
			}
			if r := st.Randomizers; r != nil {
				fmt.Fprintf(a.stdout, "pool:     %d of %d Paillier randomisers ready (%d KiB); %d encryptions took one, %d found none\n",
					r.Ready, r.Size, r.Bytes/1024, r.Taken, r.Computed)
			}
			if z := st.LatticeZeros; z != nil {
				fmt.Fprintf(a.stdout, "pool:     %d of %d lattice encryptions of zero ready (%d KiB); %d encryptions took one, %d found none\n",
					z.Ready, z.Size, z.Bytes/1024, z.Taken, z.Computed)
			}
			return nil
		},
	}
	a.configFlag(statusCmd, false, &statusConfig, "node.yaml of the node to ask (via its control socket)")
	statusCmd.Flags().StringVar(&statusAPI, "api", "", "ask the node's HTTP listener instead: HOST:PORT or http://HOST:PORT")

	return statusCmd
}

func mebibytes(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// keyWarning says why this node cannot take part in decryption, or "" when
// its threshold key share is in place. A node runs without one (it can still
// elect a leader and relay), but every job that decrypts fails while it is a
// party, so `node run` says so up front rather than at the first job.
func keyWarning(cfg *node.Config) string {
	share := filepath.Join(cfg.DataDir, filepath.FromSlash(keyring.PaillierShareFile))
	keys, err := keyring.LoadPaillier(cfg.DataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("no threshold key (%s and threshold.pub are missing): jobs that decrypt, such as sum, "+
			"will fail while this node is a party. Deal the key with 'cohort keys deal' and copy this member's keys/ directory into %s",
			share, cfg.DataDir)
	case err != nil:
		return fmt.Sprintf("the threshold key under %s cannot be read (%v): jobs that decrypt, such as sum, will fail while this node is a party",
			filepath.Dir(share), err)
	case !slices.Contains(keys.Members, cfg.Name):
		return fmt.Sprintf("the threshold key under %s was dealt for %s, not for %s: jobs that decrypt will fail while this node is a party",
			filepath.Dir(share), strings.Join(keys.Members, ", "), cfg.Name)
	}
	return ""
}
