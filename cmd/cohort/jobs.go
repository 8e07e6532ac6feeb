package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/node"
)

// client talks to a running node's job API over its control socket (or
// HTTP listener, with --api).
type client struct {
	http  *http.Client
	base  string
	token string // the node's API bearer token; "" sends none
}

func (a *app) newClient(config, api string) (*client, error) {
	if api != "" {
		base, err := apiBase(api)
		if err != nil {
			return nil, err
		}
		tok, err := a.apiToken(config)
		if err != nil {
			return nil, err
		}
		return &client{http: &http.Client{Timeout: time.Minute}, base: base, token: tok}, nil
	}
	cfg, err := node.LoadConfig(config)
	if err != nil {
		return nil, configHint(err, config, true)
	}
	tok, err := node.LoadToken(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("%w (the node's HTTP API needs it; a node writes one when it starts)", err)
	}
	sock := filepath.Join(cfg.DataDir, node.SocketName)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	return &client{http: &http.Client{Transport: tr, Timeout: time.Minute}, base: "http://node", token: tok}, nil
}

// apiBase turns --api (HOST:PORT, or an http:// or https:// URL) into the
// base URL of the node's HTTP listener.
func apiBase(api string) (string, error) {
	raw := api
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--api %q: want HOST:PORT or http://HOST:PORT, the node's http: listener", api)
	}
	return strings.TrimRight(u.String(), "/"), nil
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

// do sends a request and decodes a JSON answer; API errors come back as
// {"error": ...} and become Go errors.
func (c *client) do(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach the node (is 'cohort node run' running?): %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode == http.StatusUnauthorized && c.token == "" {
		return resp.StatusCode, fmt.Errorf("the node refused the request without its API token: set $%s "+
			"or pass --config with the node's node.yaml (the token is DATA_DIR/%s)", tokenEnv, node.TokenFile)
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return resp.StatusCode, fmt.Errorf("%s", e.Error)
		}
		return resp.StatusCode, fmt.Errorf("node answered %s", resp.Status)
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = b
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.Unmarshal(b, out)
}

func (a *app) jobCmd() *cobra.Command {
	var config, api string
	cmd := groupCmd("job", "Submit and follow jobs on a running node")
	a.configFlag(cmd, true, &config, "node.yaml of the node to talk to (via its control socket)")
	cmd.PersistentFlags().StringVar(&api, "api", "", "talk to the node's HTTP listener instead: HOST:PORT or http://HOST:PORT, e.g. 127.0.0.1:7480")

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
			c, err := a.newClient(config, api)
			if err != nil {
				return err
			}
			var resp struct{ ID string }
			if _, err := c.do(cmd.Context(), "POST", "/v1/jobs", spec, &resp); err != nil {
				return fmt.Errorf("submit %s: %w", args[0], err)
			}
			if !wait {
				if a.format == "json" {
					return a.printJSON(map[string]string{"id": resp.ID})
				}
				fmt.Fprintln(a.stdout, resp.ID)
				return nil
			}
			return a.follow(cmd.Context(), c, resp.ID)
		},
	}
	submit.Flags().BoolVar(&wait, "wait", false, "follow the job with a progress display and print its result")

	status := &cobra.Command{
		Use: "status ID", Short: "Show a job's status and steps", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(config, api)
			if err != nil {
				return err
			}
			var js jobStatus
			if _, err := c.do(cmd.Context(), "GET", "/v1/jobs/"+args[0], nil, &js); err != nil {
				return err
			}
			if a.format == "json" {
				return a.printJSON(js)
			}
			a.printStatus(js)
			return nil
		},
	}
	result := &cobra.Command{
		Use: "result ID", Short: "Print a finished job's result.json", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(config, api)
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if _, err := c.do(cmd.Context(), "GET", "/v1/jobs/"+args[0]+"/result", nil, &raw); err != nil {
				return err
			}
			return a.writeResult(raw)
		},
	}
	list := &cobra.Command{
		Use: "list", Short: "List jobs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(config, api)
			if err != nil {
				return err
			}
			var jobs []jobStatus
			if _, err := c.do(cmd.Context(), "GET", "/v1/jobs", nil, &jobs); err != nil {
				return err
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, j.Kind, st, j.Submitted.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a running or queued job: it fails everywhere with \"cancelled\" and every node stops its work for it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient(config, api)
			if err != nil {
				return err
			}
			var js jobStatus
			if _, err := c.do(cmd.Context(), "POST", "/v1/jobs/"+args[0]+"/cancel", nil, &js); err != nil {
				return err
			}
			if a.format == "json" {
				return a.printJSON(js)
			}
			a.printStatus(js)
			return nil
		},
	}
	cmd.AddCommand(submit, status, result, list, cancel)
	return cmd
}

type jobStatus struct {
	ID        string            `json:"id"`
	Kind      string            `json:"kind"`
	Status    string            `json:"status"`
	Submitted time.Time         `json:"submitted"`
	Finished  time.Time         `json:"finished"`
	Error     string            `json:"error,omitempty"`
	Failures  map[string]string `json:"failures,omitempty"`
	Queue     int               `json:"queue,omitempty"`
	Steps     []struct {
		Phase    string    `json:"phase"`
		Round    int       `json:"round"`
		Attempt  int       `json:"attempt"`
		Started  time.Time `json:"started"`
		Finished time.Time `json:"finished"`
		Failed   []string  `json:"failed,omitempty"`
	} `json:"steps"`
	Progress *node.Progress `json:"progress,omitempty"`
}

func (a *app) printStatus(js jobStatus) {
	fmt.Fprintf(a.stdout, "job %s (%s): %s", js.ID, js.Kind, js.Status)
	if js.Queue > 0 {
		fmt.Fprintf(a.stdout, " (place %d in the queue)", js.Queue)
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
	fmt.Fprint(a.stdout, describeFailures(js.Failures))
}

// describeFailures lists each failing party of a failed job with its error,
// one indented line each.
func describeFailures(f map[string]string) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(f)) {
		fmt.Fprintf(&b, "  %s: %s\n", p, f[p])
	}
	return b.String()
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
		var js jobStatus
		if _, err := c.do(ctx, "GET", "/v1/jobs/"+id, nil, &js); err != nil {
			return err
		}
		if a.format == "text" {
			state := fmt.Sprintf("%s  steps done %d/%d", js.Status, doneSteps(js), len(js.Steps))
			if js.Queue > 0 {
				state = fmt.Sprintf("queued, place %d", js.Queue)
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
			var raw json.RawMessage
			if _, err := c.do(ctx, "GET", "/v1/jobs/"+id+"/result", nil, &raw); err != nil {
				return err
			}
			return a.writeResult(raw)
		case node.StatusFailed:
			if a.format == "text" && a.terminal() {
				fmt.Fprintln(a.stderr)
			}
			if len(js.Failures) > 0 {
				return fmt.Errorf("job %s failed: %s\n%s", id, js.Error, strings.TrimRight(describeFailures(js.Failures), "\n"))
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

func doneSteps(js jobStatus) int {
	n := 0
	for _, s := range js.Steps {
		if !s.Finished.IsZero() {
			n++
		}
	}
	return n
}
