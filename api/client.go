package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to one node's API.
type Client struct {
	http  *http.Client
	base  string
	token string // the node's bearer token; "" sends none
}

// ErrUnauthorized means the node refused the request's token (or its
// absence).
var ErrUnauthorized = errors.New("the node refused the request's API token")

// ErrUnreachable means the node did not answer at all.
var ErrUnreachable = errors.New("cannot reach the node")

// NewSocketClient talks to a node over its control socket (the node's
// data dir holds it, node.SocketName), with the node's token.
func NewSocketClient(socket, token string) *Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	return &Client{http: &http.Client{Transport: tr, Timeout: time.Minute}, base: "http://node", token: token}
}

// NewHTTPClient talks to a node's HTTP listener at addr (HOST:PORT, or an
// http:// or https:// URL).
func NewHTTPClient(addr, token string) (*Client, error) {
	base, err := ParseBase(addr)
	if err != nil {
		return nil, err
	}
	return &Client{http: &http.Client{Timeout: time.Minute}, base: base, token: token}, nil
}

// ParseBase turns HOST:PORT, or an http:// or https:// URL, into the base
// URL of a node's HTTP listener.
func ParseBase(addr string) (string, error) {
	raw := addr
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: want HOST:PORT or http://HOST:PORT, the node's http: listener", addr)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Do sends a request and decodes a JSON answer into out (a
// *json.RawMessage takes it as it is); API errors ({"error": ...}) come
// back as Go errors. It returns the HTTP status.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return resp.StatusCode, ErrUnauthorized
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return resp.StatusCode, errors.New(e.Error)
		}
		return resp.StatusCode, fmt.Errorf("node answered %s", resp.Status)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = b
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.Unmarshal(b, out)
}

// Status returns the node's status.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var st Status
	_, err := c.Do(ctx, "GET", "/status", nil, &st)
	return &st, err
}

// Submit submits a job spec (YAML) and returns the job's id.
func (c *Client) Submit(ctx context.Context, spec []byte) (string, error) {
	var resp struct{ ID string }
	_, err := c.Do(ctx, "POST", "/v1/jobs", spec, &resp)
	return resp.ID, err
}

// Job returns one job's status.
func (c *Client) Job(ctx context.Context, id string) (*JobStatus, error) {
	var js JobStatus
	_, err := c.Do(ctx, "GET", "/v1/jobs/"+url.PathEscape(id), nil, &js)
	return &js, err
}

// Jobs lists the node's default page of jobs: every running one (up to
// DefaultJobPage), then the newest finished ones (JobQuery).
func (c *Client) Jobs(ctx context.Context) ([]*JobStatus, error) {
	return c.JobsPage(ctx, JobQuery{})
}

// JobsPage lists one page of jobs (JobQuery); a page shorter than its
// limit is the last.
func (c *Client) JobsPage(ctx context.Context, q JobQuery) ([]*JobStatus, error) {
	path := "/v1/jobs"
	if v := q.Values(); len(v) > 0 {
		path += "?" + v.Encode()
	}
	var jobs []*JobStatus
	_, err := c.Do(ctx, "GET", path, nil, &jobs)
	return jobs, err
}

// Result returns a finished job's result.json.
func (c *Client) Result(ctx context.Context, id string) (json.RawMessage, error) {
	var raw json.RawMessage
	_, err := c.Do(ctx, "GET", "/v1/jobs/"+url.PathEscape(id)+"/result", nil, &raw)
	return raw, err
}

// Cancel cancels a running job everywhere.
func (c *Client) Cancel(ctx context.Context, id string) (*JobStatus, error) {
	return c.jobAction(ctx, id, "cancel", nil)
}

// Approve approves, on this node, a job that awaits its approval.
func (c *Client) Approve(ctx context.Context, id string) (*JobStatus, error) {
	return c.jobAction(ctx, id, "approve", nil)
}

// Reject rejects, on this node, a job that awaits its approval; the job
// fails with the reason.
func (c *Client) Reject(ctx context.Context, id, reason string) (*JobStatus, error) {
	body, err := json.Marshal(map[string]string{"reason": reason})
	if err != nil {
		return nil, err
	}
	return c.jobAction(ctx, id, "reject", body)
}

func (c *Client) jobAction(ctx context.Context, id, action string, body []byte) (*JobStatus, error) {
	var js JobStatus
	_, err := c.Do(ctx, "POST", "/v1/jobs/"+url.PathEscape(id)+"/"+action, body, &js)
	return &js, err
}

// Policy returns the node's policy in force and its budget spent and left,
// as JSON for a policy.Show: decoding it is the caller's, so that the
// client does not build the policy package and the runtime beneath it.
func (c *Client) Policy(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	_, err := c.Do(ctx, "GET", "/v1/policy", nil, &raw)
	return raw, err
}

// Consortium returns the members as the node's log has them.
func (c *Client) Consortium(ctx context.Context) (*ConsortiumStatus, error) {
	return c.consortium(ctx, "GET", "/v1/consortium", nil)
}

// AddMember commits a new member to the consortium (see cohort consortium
// add).
func (c *Client) AddMember(ctx context.Context, m Member) (*ConsortiumStatus, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return c.consortium(ctx, "POST", "/v1/consortium/members", body)
}

// RemoveMember commits a member's removal from the consortium.
func (c *Client) RemoveMember(ctx context.Context, name string) (*ConsortiumStatus, error) {
	return c.consortium(ctx, "DELETE", "/v1/consortium/members/"+url.PathEscape(name), nil)
}

// ReloadConsortium makes the node re-read its consortium file.
func (c *Client) ReloadConsortium(ctx context.Context) (*ConsortiumStatus, error) {
	return c.consortium(ctx, "POST", "/v1/consortium/reload", nil)
}

func (c *Client) consortium(ctx context.Context, method, path string, body []byte) (*ConsortiumStatus, error) {
	var st ConsortiumStatus
	_, err := c.Do(ctx, method, path, body, &st)
	return &st, err
}
