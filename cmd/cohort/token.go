package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/node"
)

// tokenEnv names the environment variable that gives the HTTP API's bearer
// token to commands run with --api.
const tokenEnv = "COHORT_TOKEN"

// apiToken is the bearer token for a request over --api: $COHORT_TOKEN, else
// the token in the data dir of the --config node.yaml when that file exists
// (the same machine), else none (the node will refuse, and the error says
// how to give one).
func (a *app) apiToken(config string) (string, error) {
	if tok := strings.TrimSpace(a.getenv(tokenEnv)); tok != "" {
		return tok, nil
	}
	cfg, err := node.LoadConfig(config)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return node.LoadToken(cfg.DataDir)
}

// tokenCmd prints the node's API token, for curl or another machine's
// $COHORT_TOKEN.
func (a *app) tokenCmd() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the bearer token the node's HTTP API requires (DATA_DIR/api.token)",
		Long: `token prints the node's HTTP API token, written at 'cohort node init' (mode 0600). Every
request to the API except GET /metrics needs the header 'Authorization: Bearer TOKEN'. The
job and status commands send it themselves: over the control socket from --config, over
--api from $` + tokenEnv + ` or, failing that, from --config's data dir.

  curl -H "Authorization: Bearer $(cohort node token --config n/node.yaml)" http://HOST:PORT/status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := node.LoadConfig(config)
			if err != nil {
				return configHint(err, config, false)
			}
			tok, err := node.LoadToken(cfg.DataDir)
			if err != nil {
				return err
			}
			if a.format == "json" {
				return a.printJSON(map[string]string{"token": tok})
			}
			fmt.Fprintln(a.stdout, tok)
			return nil
		},
	}
	a.configFlag(cmd, false, &config, "node.yaml of the node")
	return cmd
}
