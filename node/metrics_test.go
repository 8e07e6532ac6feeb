package node_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// /metrics carries the Go runtime and process collectors dashboards expect,
// next to cohort's own, and passes the exposition-format linter.
func TestMetricsRuntimeCollectors(t *testing.T) {
	srv := apiServer(t)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes", "process_open_fds", "cohort_raft_state", "cohort_raft_term"} {
		if !bytes.Contains(b, []byte("\n"+name+" ")) && !bytes.Contains(b, []byte("\n"+name+"{")) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	problems, err := promlint.New(bytes.NewReader(b)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
