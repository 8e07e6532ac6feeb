package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/node"
)

func (a *app) nodeCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "Create and run this organisation's node"}
	var name, dir string
	var listen []string
	initCmd := &cobra.Command{
		Use:   "init --name NAME --dir DIR",
		Short: "Create a node: an Ed25519 identity and DIR/node.yaml",
		Long: `init writes DIR/identity.key (the node's libp2p identity, mode 0600) and DIR/node.yaml.
Send the printed peer id and addresses to the consortium; every member lists all members
in DIR/consortium.yaml.`,
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
				return err
			}
			fmt.Fprintf(a.stdout, "created node %s in %s\npeer id: %s\n", name, dir, id)
			fmt.Fprintf(a.stdout, "add this member under 'members:' in every node's consortium.yaml (replace 0.0.0.0 with a reachable address):\n%s", entry)
			return nil
		},
	}
	initCmd.Flags().StringVar(&name, "name", "", "the organisation's party name")
	initCmd.Flags().StringVar(&dir, "dir", "", "data directory to create")
	initCmd.Flags().StringSliceVar(&listen, "listen", nil, "libp2p listen multiaddrs (default TCP and QUIC on port 7400)")

	var config string
	runCmd := &cobra.Command{
		Use:   "run --config DIR/node.yaml",
		Short: "Run the node until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := node.LoadConfig(config)
			if err != nil {
				return err
			}
			cons, err := node.LoadConsortium(cfg.Consortium)
			if err != nil {
				return err
			}
			if cfg.TablesDir != "" {
				if _, err := os.Stat(cfg.TablesDir); err != nil {
					return fmt.Errorf("%w: %s: tables_dir: %v", node.ErrConfig, config, err)
				}
			}
			n, err := node.New(node.Options{Config: cfg, Kinds: kinds(), Logger: a.logger()})
			if err != nil {
				return err
			}
			if err := n.Start(cons); err != nil {
				n.Close()
				return err
			}
			fmt.Fprintf(a.stderr, "node %s running (peer id %s)\n  listening on %v\n  control socket %s\n",
				cfg.Name, n.PeerID(), n.Addrs(), filepath.Join(cfg.DataDir, node.SocketName))
			if cfg.HTTP != "" {
				fmt.Fprintf(a.stderr, "  status and metrics on http://%s/status and /metrics\n", cfg.HTTP)
			}
			<-cmd.Context().Done()
			fmt.Fprintln(a.stderr, "stopping")
			return n.Close()
		},
	}
	runCmd.Flags().StringVar(&config, "config", "node.yaml", "path of the node's node.yaml")
	cmd.AddCommand(initCmd, runCmd)
	return cmd
}
