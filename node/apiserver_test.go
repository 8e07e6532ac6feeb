package node

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
)

// unixClient is an HTTP client that dials sock.
func unixClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// The server answers on its socket and its HTTP address until Close, and
// no longer after.
func TestAPIServerServesUntilClose(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), SocketName)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up") })
	a, err := newAPIServer(t.Context(), sock, "127.0.0.1:0", "node.yaml", "http", h, discard())
	if err != nil {
		t.Fatal(err)
	}
	c := unixClient(sock)
	get := func() (string, error) {
		resp, err := c.Get("http://node/status")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get(); err != nil || got != "up" {
		t.Fatalf("GET: %q, %v", got, err)
	}
	a.Close()
	c.CloseIdleConnections()
	if _, err := get(); err == nil {
		t.Fatal("a closed server still answers")
	}
}

// An HTTP address that cannot be listened on is a config error, and the
// socket already opened is closed again.
func TestAPIServerRefusesBadAddress(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), SocketName)
	_, err := newAPIServer(t.Context(), sock, "256.0.0.1:0", "node.yaml", "http", http.NotFoundHandler(), discard())
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig", err)
	}
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		t.Fatal("the socket is still open")
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
