package node_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
)

// The console's node page shows the release the binary was linked as
// (Options.Version, `-X main.version` in cmd/cohort), as `cohort version` does.
func TestConsoleShowsLinkedVersion(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "org1")
	if _, _, err := node.Init("org1", dir, nil); err != nil {
		t.Fatal(err)
	}
	cfg := &node.Config{Name: "org1", DataDir: dir, Listen: []string{"/ip4/127.0.0.1/tcp/0"}}
	n, err := node.New(node.Options{Config: cfg, Kinds: job.Registry{}, Version: "v9.9.9-linked"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	cl := &http.Client{Jar: jar}
	res, err := cl.PostForm(srv.URL+"/console/login", url.Values{"token": {n.APIToken()}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = cl.Get(srv.URL + "/console/node")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "v9.9.9-linked") {
		t.Fatalf("node page (%s) does not show the linked version:\n%s", res.Status, body)
	}
}
