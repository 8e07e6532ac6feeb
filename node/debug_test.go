package node

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The profiling listener binds the loopback interface only: node.yaml's
// pprof naming any other address is a config error naming the field.
func TestPprofAddressIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for addr, ok := range map[string]bool{
		"127.0.0.1:6060": true, "localhost:6060": true, "[::1]:6060": true, "127.0.0.2:0": true,
		"0.0.0.0:6060": false, ":6060": false, "[::]:6060": false, "10.0.0.1:6060": false,
		"example.org:6060": false, "127.0.0.1": false,
	} {
		cfg, err := LoadConfig(writeConfig(t, dir, "pprof: \""+addr+"\"\n"))
		switch {
		case ok && (err != nil || cfg.Pprof != addr):
			t.Errorf("pprof %q: %v", addr, err)
		case !ok && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "pprof")):
			t.Errorf("pprof %q: %v, want a config error naming pprof", addr, err)
		}
	}
}

// The profiling handler serves the heap profile and the goroutine dump;
// the listener has no control socket, and an address it cannot take is a
// config error naming pprof.
func TestPprofServesProfiles(t *testing.T) {
	t.Parallel()
	h := pprofHandler()
	for _, path := range []string{"/debug/pprof/heap?gc=1", "/debug/pprof/goroutine?debug=1"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://node"+path, nil))
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Fatalf("GET %s: %d, %d bytes", path, rec.Code, rec.Body.Len())
		}
	}
	_, err := newAPIServer(t.Context(), "", "256.0.0.1:0", "node.yaml", "pprof", h, discard())
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "pprof") {
		t.Fatalf("err = %v, want a config error naming pprof", err)
	}
}
