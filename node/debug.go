package node

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// checkPprofAddr accepts only a host:port on the loopback interface
// ("localhost", 127.0.0.0/8 or ::1): the profiles show the process's
// memory and stacks (a heap profile holds the call sites of every live
// allocation, a goroutine dump their arguments' addresses), so they are
// for the operator on the node's own machine, never for the network.
func checkPprofAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port on the loopback interface, such as 127.0.0.1:6060: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: the profiling listener binds the loopback interface only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

// pprofHandler serves Go's runtime profiles (net/http/pprof) under
// /debug/pprof/: heap, allocs, goroutine, profile (CPU), trace and the
// rest of the index, on its own mux (never http.DefaultServeMux). It has
// no token: the listener is on the loopback interface only, off unless
// node.yaml sets pprof.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// startPprof serves pprofHandler on the configured loopback address until
// the node's context ends (a config built in code is checked here too).
func (n *Node) startPprof() (*apiServer, error) {
	if err := checkPprofAddr(n.cfg.Pprof); err != nil {
		return nil, configErr(n.cfg.source, "pprof", "%v", err)
	}
	s, err := newAPIServer(n.ctx, "", n.cfg.Pprof, n.cfg.source, "pprof", pprofHandler(), n.log)
	if err != nil {
		return nil, err
	}
	n.log.Info("serving Go runtime profiles", "addr", n.cfg.Pprof, "path", "/debug/pprof/")
	return s, nil
}
