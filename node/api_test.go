package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// apiServer serves one in-process node's HTTP API.
func apiServer(t *testing.T) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := simtest.StartCluster(t, ctx, []string{"org1"}, sim.ClusterOptions{Kinds: job.Registry{"sum": sum.Kind{}}})
	srv := httptest.NewServer(withToken(c.Node("org1")))
	t.Cleanup(srv.Close)
	return srv
}

// withToken serves a node's API to a client that sends the node's bearer
// token, as the CLI does.
func withToken(n *node.Node) http.Handler {
	h := n.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+n.APIToken())
		h.ServeHTTP(w, r)
	})
}

func post(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/yaml", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Error string }
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error
}

// A spec over the limit is refused whole with 413 and a message naming the
// limit, not cut at the limit and parsed ("end of stream"); an empty spec is
// called empty, not "EOF".
func TestSubmitBodyLimits(t *testing.T) {
	t.Parallel()
	srv := apiServer(t)
	big := []byte("kind: sum\nparties: [{name: org1}]\nparams: {column: v}\n# " + strings.Repeat("x", 2<<20) + "\n")
	code, msg := post(t, srv.URL+"/v1/jobs", big)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "1 MiB") {
		t.Errorf("2 MiB spec: %d %q, want 413 naming the 1 MiB limit", code, msg)
	}
	for _, body := range []string{"", "\n  \n", "# only a comment\n"} {
		code, msg = post(t, srv.URL+"/v1/jobs", []byte(body))
		if code != http.StatusBadRequest || !strings.Contains(msg, "empty") || strings.Contains(msg, "EOF") {
			t.Errorf("spec %q: %d %q, want 400 saying the spec is empty", body, code, msg)
		}
	}
	// Just under the limit is read whole (and refused for what it says).
	ok := []byte("kind: nope\nparties: [{name: org1}]\n# ")
	ok = append(ok, bytes.Repeat([]byte("x"), node.MaxSpecBytes-len(ok)-1)...)
	ok = append(ok, '\n')
	code, msg = post(t, srv.URL+"/v1/jobs", ok)
	if code != http.StatusBadRequest || !strings.Contains(msg, "unknown job kind") {
		t.Errorf("spec of exactly the limit: %d %q", code, msg)
	}
}

// GET /v1/jobs answers one page (the running jobs, then the finished
// newest first), by kind and status, and refuses a malformed query.
func TestJobListIsPaged(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := simtest.StartCluster(t, ctx, []string{"org1"}, sim.ClusterOptions{Kinds: job.Registry{"noop": &noop{}}})
	n := c.Node("org1")
	srv := httptest.NewServer(withToken(n))
	defer srv.Close()
	var ids []string
	for range 5 {
		rec := submitAndWait(t, ctx, n, noopSpec([]string{"org1"}, 1))
		ids = append([]string{rec.ID}, ids...) // newest first
	}
	for query, want := range map[string][]string{
		"":                       ids,
		"?limit=2":               ids[:2],
		"?limit=2&offset=2":      ids[2:4],
		"?offset=4":              ids[4:],
		"?offset=5":              nil,
		"?status=done&kind=noop": ids,
		"?status=failed":         nil,
		"?status=running":        nil,
		"?kind=sum":              nil,
	} {
		var page []node.JobStatus
		if code := getJSON(t, srv.URL+"/v1/jobs"+query, &page); code != http.StatusOK {
			t.Fatalf("GET /v1/jobs%s: %d", query, code)
		}
		var got []string
		for _, j := range page {
			got = append(got, j.ID)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("GET /v1/jobs%s: %v, want %v", query, got, want)
		}
	}
	for _, query := range []string{"?status=queued", "?limit=0", "?limit=1001", "?offset=-1", "?limit=x"} {
		var e struct{ Error string }
		if code := getJSON(t, srv.URL+"/v1/jobs"+query, &e); code != http.StatusBadRequest || e.Error == "" {
			t.Errorf("GET /v1/jobs%s: %d %q, want 400 with the reason", query, code, e.Error)
		}
	}
}
