package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/node"
)

// client talks to a running node's job API over its control socket (or
// HTTP listener, with --api).
type client struct {
	http *http.Client
	base string
}

func newClient(config, api string) (*client, error) {
	if api != "" {
		return &client{http: &http.Client{Timeout: time.Minute}, base: strings.TrimRight(api, "/")}, nil
	}
	cfg, err := node.LoadConfig(config)
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(cfg.DataDir, node.SocketName)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	return &client{http: &http.Client{Transport: tr, Timeout: time.Minute}, base: "http://node"}, nil
}

// do sends a request and decodes a JSON answer; API errors come back as
// {"error": ...} and become Go errors.
func (c *client) do(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
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
	cmd := &cobra.Command{Use: "job", Short: "Submit and follow jobs on a running node"}
	cmd.PersistentFlags().StringVar(&config, "config", "node.yaml", "node.yaml of the node to talk to (via its control socket)")
	cmd.PersistentFlags().StringVar(&api, "api", "", "talk to the node's HTTP listener instead, e.g. http://127.0.0.1:7480")

	var wait bool
	submit := &cobra.Command{
		Use:   "submit SPEC.yaml",
		Short: "Submit a job spec; table paths resolve against each node's tables_dir",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			c, err := newClient(config, api)
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
			c, err := newClient(config, api)
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
			c, err := newClient(config, api)
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if _, err := c.do(cmd.Context(), "GET", "/v1/jobs/"+args[0]+"/result", nil, &raw); err != nil {
				return err
			}
			_, err = a.stdout.Write(append(raw, '\n'))
			return err
		},
	}
	list := &cobra.Command{
		Use: "list", Short: "List jobs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(config, api)
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
			for _, j := range jobs {
				fmt.Fprintf(a.stdout, "%-26s %-10s %-8s %s\n", j.ID, j.Kind, j.Status, j.Submitted.Format(time.RFC3339))
			}
			return nil
		},
	}
	cmd.AddCommand(submit, status, result, list)
	return cmd
}

type jobStatus struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Status    string    `json:"status"`
	Submitted time.Time `json:"submitted"`
	Finished  time.Time `json:"finished"`
	Error     string    `json:"error,omitempty"`
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
	fmt.Fprintf(a.stdout, "job %s (%s): %s\n", js.ID, js.Kind, js.Status)
	for _, s := range js.Steps {
		state := "running"
		if !s.Finished.IsZero() {
			state = fmt.Sprintf("done in %.2fs", s.Finished.Sub(s.Started).Seconds())
		}
		fmt.Fprintf(a.stdout, "  %-12s round %-3d attempt %d  %s", s.Phase, s.Round, s.Attempt, state)
		if len(s.Failed) > 0 {
			fmt.Fprintf(a.stdout, "  failed: %v", s.Failed)
		}
		fmt.Fprintln(a.stdout)
	}
	if js.Error != "" {
		fmt.Fprintf(a.stdout, "  error: %s\n", js.Error)
	}
}

// follow polls the job and redraws one progress line until it ends.
func (a *app) follow(ctx context.Context, c *client, id string) error {
	start := time.Now()
	last := ""
	for {
		var js jobStatus
		if _, err := c.do(ctx, "GET", "/v1/jobs/"+id, nil, &js); err != nil {
			return err
		}
		if a.format == "text" {
			line := fmt.Sprintf("%s %s %6.1fs  steps done %d/%d", js.ID, js.Status, time.Since(start).Seconds(), doneSteps(js), len(js.Steps))
			if p := js.Progress; p != nil {
				line += fmt.Sprintf("  %s: %d/%d parties", p.Phase, p.Done, p.Total)
			}
			switch {
			case a.terminal():
				fmt.Fprintf(a.stderr, "\r%-100s", line) // redraw one line
			case line[len(js.ID):] != last[min(len(js.ID), len(last)):]:
				fmt.Fprintln(a.stderr, line) // a log file gets a line per change
			}
			last = line
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
			_, err := a.stdout.Write(append(raw, '\n'))
			return err
		case node.StatusFailed:
			if a.format == "text" && a.terminal() {
				fmt.Fprintln(a.stderr)
			}
			return fmt.Errorf("job %s failed: %s", id, js.Error)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
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
