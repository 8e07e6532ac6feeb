package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// apiServer serves the node's HTTP API on its control socket and, if
// configured, an HTTP address; it owns the listeners and their goroutines.
type apiServer struct {
	srv    *http.Server
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// apiShutdownWait bounds how long stopping waits for requests in flight.
const apiShutdownWait = 2 * time.Second

// newAPIServer listens on the unix socket sock unless it is "" (a stale
// one is replaced; a socket that cannot be made is logged, not fatal) and
// on httpAddr unless it is "", and serves h on both until ctx ends or
// Close. source and field name the config setting httpAddr came from, for
// its error.
func newAPIServer(ctx context.Context, sock, httpAddr, source, field string, h http.Handler, lg *slog.Logger) (*apiServer, error) {
	var listeners []net.Listener
	if sock != "" {
		_ = os.Remove(sock) // a stale socket from a crashed run
		if l, err := net.Listen("unix", sock); err == nil {
			listeners = append(listeners, l)
		} else {
			lg.Warn("no control socket", "path", sock, "err", err)
		}
	}
	if httpAddr != "" {
		l, err := net.Listen("tcp", httpAddr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, fmt.Errorf("%w: %s: %s: %v", ErrConfig, source, field, err)
		}
		listeners = append(listeners, l)
	}
	a := &apiServer{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, log: lg}
	for _, l := range listeners {
		a.wg.Add(1)
		go func(l net.Listener) {
			defer a.wg.Done()
			if err := a.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				lg.Error("api server stopped", "addr", l.Addr().String(), "err", err)
			}
		}(l)
	}
	ctx, a.cancel = context.WithCancel(ctx)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), apiShutdownWait)
		defer cancel()
		_ = a.srv.Shutdown(sctx)
	}()
	return a, nil
}

// Close stops the listeners, gives requests in flight apiShutdownWait to
// finish and waits for the server's goroutines.
func (a *apiServer) Close() {
	a.cancel()
	a.wg.Wait()
}
