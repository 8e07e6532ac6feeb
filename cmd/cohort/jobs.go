package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/node"
)

// newClient returns a client of the node's API: over its control socket
// (from --config), or over its HTTP listener with --api.
func (a *app) newClient(config, addr string) (*client, error) {
	if addr != "" {
		tok, err := a.apiToken(config)
		if err != nil {
			return nil, err
		}
		c, err := api.NewHTTPClient(addr, tok)
		if err != nil {
			return nil, fmt.Errorf("--api %w", err)
		}
		return &client{c, tok != ""}, nil
	}
	cfg, err := node.LoadConfig(config)
	if err != nil {
		return nil, configHint(err, config, true)
	}
	tok, err := node.LoadToken(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("%w (the node's HTTP API needs it; a node writes one when it starts)", err)
	}
	return &client{api.NewSocketClient(filepath.Join(cfg.DataDir, node.SocketName), tok), true}, nil
}

// client is the API client with the CLI's hints on its errors.
type client struct {
	*api.Client
	hasToken bool
}

// do is Client.Do with what to do when the node cannot be reached or
// refuses the token.
func (c *client) do(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	code, err := c.Do(ctx, method, path, body, out)
	return code, c.hint(err)
}

func (c *client) hint(err error) error {
	switch {
	case errors.Is(err, api.ErrUnreachable):
		return fmt.Errorf("%w (is 'cohort node run' running?)", err)
	case errors.Is(err, api.ErrUnauthorized) && !c.hasToken:
		return fmt.Errorf("the node refused the request without its API token: set $%s "+
			"or pass --config with the node's node.yaml (the token is DATA_DIR/%s)", tokenEnv, node.TokenFile)
	}
	return err
}

// configHint adds what to do when node.yaml is missing: the commands that
// take --config are often run from a directory without one.
func configHint(err error, config string, apiToo bool) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	hint := "pass --config DIR/node.yaml or set " + configEnv
	if apiToo {
		hint += ", or use --api HOST:PORT to reach a node's HTTP listener"
	}
	return fmt.Errorf("no node config at %s (%s): %w", config, hint, err)
}

func (a *app) jobCmd() *cobra.Command {
	t := &target{}
	cmd := groupCmd("job", "Submit and follow jobs on a running node")
	a.configFlag(cmd, true, &t.config, "node.yaml of the node to talk to (via its control socket)")
	cmd.PersistentFlags().StringVar(&t.api, "api", "", "talk to the node's HTTP listener instead: HOST:PORT or http://HOST:PORT, e.g. 127.0.0.1:7480")
	status := a.jobAction(t, "status ID", "Show a job's status and steps",
		func(ctx context.Context, c *client, id string) (*api.JobStatus, error) { return c.Job(ctx, id) })
	cancel := a.jobAction(t, "cancel ID",
		"Cancel a running or queued job: it fails everywhere with \"cancelled\" and every node stops its work for it",
		func(ctx context.Context, c *client, id string) (*api.JobStatus, error) { return c.Cancel(ctx, id) })
	approve := a.jobAction(t, "approve ID",
		"Approve, on this node, a job that awaits this organisation's approval (policy approval: manual)",
		func(ctx context.Context, c *client, id string) (*api.JobStatus, error) { return c.Approve(ctx, id) })
	var reason string
	reject := a.jobAction(t, "reject ID --reason TEXT",
		"Reject, on this node, a job that awaits its approval; the job fails with the reason, which every member reads",
		func(ctx context.Context, c *client, id string) (*api.JobStatus, error) {
			if strings.TrimSpace(reason) == "" {
				return nil, fmt.Errorf("--reason is required: the job's failure names it")
			}
			return c.Reject(ctx, id, reason)
		})
	reject.Flags().StringVar(&reason, "reason", "", "why this organisation rejects the job (every member reads it)")
	cmd.AddCommand(a.jobSubmitCmd(t), status, a.jobResultCmd(t), a.jobListCmd(t), cancel, approve, reject)
	return cmd
}

// target is the node a command talks to: --config, or --api.
type target struct{ config, api string }

// jobAction is a job command that acts on one job and prints its status.
func (a *app) jobAction(t *target, use, short string, act func(ctx context.Context, c *client, id string) (*api.JobStatus, error)) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(t.config, t.api)
			if err != nil {
				return err
			}
			js, err := act(cmd.Context(), c, args[0])
			if err != nil {
				return c.hint(err)
			}
			return a.showStatus(js)
		},
	}
}

func (a *app) jobSubmitCmd(t *target) *cobra.Command {
	var wait bool
	submit := &cobra.Command{
		Use:   "submit SPEC.yaml",
		Short: "Submit a job spec; table paths resolve against each node's tables_dir",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("read job spec: %w", err)
			}
			c, err := a.newClient(t.config, t.api)
			if err != nil {
				return err
			}
			id, err := c.Submit(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("submit %s: %w", args[0], c.hint(err))
			}
			if !wait {
				if a.format == "json" {
					return a.printJSON(map[string]string{"id": id})
				}
				fmt.Fprintln(a.stdout, id)
				return nil
			}
			return a.follow(cmd.Context(), c, id)
		},
	}
	submit.Flags().BoolVar(&wait, "wait", false, "follow the job with a progress display and print its result")
	return submit
}

func (a *app) jobResultCmd(t *target) *cobra.Command {
	return &cobra.Command{
		Use: "result ID", Short: "Print a finished job's result.json", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(t.config, t.api)
			if err != nil {
				return err
			}
			raw, err := c.Result(cmd.Context(), args[0])
			if err != nil {
				return c.hint(err)
			}
			return a.writeResult(raw)
		},
	}
}

func (a *app) jobListCmd(t *target) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List jobs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(t.config, t.api)
			if err != nil {
				return err
			}
			jobs, err := c.Jobs(cmd.Context())
			if err != nil {
				return c.hint(err)
			}
			if a.format == "json" {
				return a.printJSON(jobs)
			}
			if len(jobs) == 0 {
				fmt.Fprintln(a.stderr, "no jobs yet")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tSUBMITTED")
			for _, j := range jobs {
				st := j.Status
				if j.Queue > 0 {
					st = fmt.Sprintf("%s (%d)", st, j.Queue)
				}
				if len(j.Waiting) > 0 {
					st = fmt.Sprintf("%s (%s)", st, strings.Join(j.Waiting, ", "))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, j.Kind, st, j.Submitted.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
}

// showStatus prints a job's status as --format says.
func (a *app) showStatus(js *api.JobStatus) error {
	if a.format == "json" {
		return a.printJSON(js)
	}
	a.printStatus(js)
	return nil
}

func (a *app) printStatus(js *api.JobStatus) {
	fmt.Fprintf(a.stdout, "job %s (%s): %s", js.ID, js.Kind, js.Status)
	if js.Queue > 0 {
		fmt.Fprintf(a.stdout, " (place %d in the queue)", js.Queue)
	}
	if len(js.Waiting) > 0 {
		fmt.Fprintf(a.stdout, " (waiting for %s)", strings.Join(js.Waiting, ", "))
	}
	fmt.Fprintln(a.stdout)
	for _, s := range js.Steps {
		state := "running"
		if !s.Finished.IsZero() {
			state = fmt.Sprintf("done in %.2fs", s.Finished.Sub(s.Started).Seconds())
		}
		fmt.Fprintf(a.stdout, "  %-12s round %-3d attempt %d  %s", s.Phase, s.Round, s.Attempt, state)
		if len(s.Failed) > 0 {
			fmt.Fprintf(a.stdout, "  failed: %s", strings.Join(s.Failed, ", "))
		}
		fmt.Fprintln(a.stdout)
	}
	if js.Error != "" {
		fmt.Fprintf(a.stdout, "  error: %s\n", js.Error)
	}
	fmt.Fprint(a.stdout, api.DescribeFailures(js.Failures))
}

// writeResult prints a result.json as the node sent it, ending in exactly
// one newline.
func (a *app) writeResult(raw []byte) error {
	_, err := a.stdout.Write(append(bytes.TrimRight(raw, "\n"), '\n'))
	return err
}

// followPoll is how often follow asks the node for the job's state.
const followPoll = 250 * time.Millisecond

// follow polls the job until it ends and shows its progress on stderr: on a
// terminal one line redrawn in place, elsewhere (a log file, a pipe) a line
// each time the state changes, never a line per poll.
func (a *app) follow(ctx context.Context, c *client, id string) error {
	start := time.Now()
	last := ""
	for {
		js, err := c.Job(ctx, id)
		if err != nil {
			return c.hint(err)
		}
		if a.format == "text" {
			state := fmt.Sprintf("%s  steps done %d/%d", js.Status, doneSteps(js), len(js.Steps))
			if js.Queue > 0 {
				state = fmt.Sprintf("queued, place %d", js.Queue)
			}
			if len(js.Waiting) > 0 {
				state = "awaiting approval by " + strings.Join(js.Waiting, ", ")
			}
			if p := js.Progress; p != nil {
				state += fmt.Sprintf("  %s: %d/%d parties", p.Phase, p.Done, p.Total)
			}
			line := fmt.Sprintf("%s %6.1fs  %s", js.ID, time.Since(start).Seconds(), state)
			switch {
			case a.terminal():
				fmt.Fprintf(a.stderr, "\r%-100s", line) // redraw one line
			case state != last:
				fmt.Fprintln(a.stderr, line)
			}
			last = state
		}
		switch js.Status {
		case node.StatusDone:
			if a.format == "text" && a.terminal() {
				fmt.Fprintln(a.stderr)
			}
			raw, err := c.Result(ctx, id)
			if err != nil {
				return c.hint(err)
			}
			return a.writeResult(raw)
		case node.StatusFailed:
			if a.format == "text" && a.terminal() {
				fmt.Fprintln(a.stderr)
			}
			if len(js.Failures) > 0 {
				return fmt.Errorf("job %s failed: %s\n%s", id, js.Error, strings.TrimRight(api.DescribeFailures(js.Failures), "\n"))
			}
			return fmt.Errorf("job %s failed: %s", id, js.Error)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followPoll):
		}
	}
}

func doneSteps(js *api.JobStatus) int {
	n := 0
	for _, s := range js.Steps {
		if !s.Finished.IsZero() {
			n++
		}
	}
	return n
}
