package node_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sum"
)

// node init writes a 64-hex-digit token that only the owner can read.
func TestInitWritesToken(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "n")
	if _, _, err := node.Init("org1", dir, nil); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, node.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	tok, err := node.LoadToken(dir)
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q: %v", tok, err)
	}
	other := filepath.Join(t.TempDir(), "m")
	if _, _, err := node.Init("org2", other, nil); err != nil {
		t.Fatal(err)
	}
	if tok2, _ := node.LoadToken(other); tok2 == tok {
		t.Error("two nodes got the same token")
	}
	if err := os.WriteFile(filepath.Join(other, node.TokenFile), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := node.LoadToken(other); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("a malformed token file: %v", err)
	}
}

// The HTTP listener and the control socket refuse every request without the
// right bearer token, with 401 and a message naming the token file, except
// GET /metrics; with the token they answer.
func TestAPIRequiresToken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := freePort(t)
	dir := filepath.Join(t.TempDir(), "org1")
	start := func() *node.Node {
		t.Helper()
		if _, err := os.Stat(filepath.Join(dir, "identity.key")); err != nil {
			if _, _, err := node.Init("org1", dir, nil); err != nil {
				t.Fatal(err)
			}
		}
		cfg := &node.Config{Name: "org1", DataDir: dir, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, HTTP: "127.0.0.1:" + port}
		n, err := node.New(node.Options{Config: cfg, Kinds: job.Registry{"sum": sum.Kind{}}})
		if err != nil {
			t.Fatal(err)
		}
		cons := &node.Consortium{Members: []node.Member{{Name: "org1", PeerID: n.PeerID().String(), Addrs: n.Addrs()}}}
		if err := n.Start(cons); err != nil {
			n.Close()
			t.Fatal(err)
		}
		return n
	}
	n := start()
	defer func() { n.Close() }()
	tok, err := node.LoadToken(dir)
	if err != nil || tok != n.APIToken() {
		t.Fatalf("token on disk %q (%v), node uses %q", tok, err, n.APIToken())
	}
	sock := filepath.Join(dir, node.SocketName)
	viaSocket := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	clients := map[string]struct {
		c    *http.Client
		base string
	}{"http": {http.DefaultClient, "http://127.0.0.1:" + port}, "socket": {viaSocket, "http://node"}}
	spec := "kind: sum\nparties: [{name: org1, table: t}]\nparams: {column: v}\n"
	for via, cl := range clients {
		do := func(method, path, auth, body string) (int, string) {
			t.Helper()
			req, err := http.NewRequestWithContext(ctx, method, cl.base+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := cl.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		for _, auth := range []string{"", "Bearer " + strings.Repeat("0", 64), "Bearer", tok, "Basic " + tok, "Bearer " + tok + "x"} {
			for _, r := range []struct{ method, path, body string }{
				{"GET", "/status", ""}, {"GET", "/v1/jobs", ""}, {"POST", "/v1/jobs", spec},
				{"GET", "/v1/jobs/x", ""}, {"POST", "/v1/jobs/x/cancel", ""}, {"GET", "/v1/jobs/x/result", ""}, {"GET", "/nope", ""},
			} {
				code, body := do(r.method, r.path, auth, r.body)
				if code != http.StatusUnauthorized || !strings.Contains(body, node.TokenFile) {
					t.Errorf("%s: %s %s with Authorization %q: %d %s, want 401 naming %s", via, r.method, r.path, auth, code, body, node.TokenFile)
				}
			}
		}
		if n.Status().Jobs != 0 {
			t.Fatalf("%s: a refused submission reached the log: %d jobs", via, n.Status().Jobs)
		}
		if code, body := do("GET", "/metrics", "", ""); code != http.StatusOK || !strings.Contains(body, "cohort_") {
			t.Errorf("%s: GET /metrics without a token: %d, want 200 with metrics", via, code)
		}
		good := "Bearer " + tok
		if code, body := do("GET", "/status", good, ""); code != http.StatusOK || !strings.Contains(body, `"org1"`) {
			t.Errorf("%s: GET /status with the token: %d %s", via, code, body)
		}
		if code, body := do("GET", "/v1/jobs/x", good, ""); code != http.StatusNotFound {
			t.Errorf("%s: GET /v1/jobs/x with the token: %d %s, want 404", via, code, body)
		}
	}
	// A restarted node keeps its token.
	n.Close()
	n = start()
	if n.APIToken() != tok {
		t.Error("the token changed across a restart")
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
