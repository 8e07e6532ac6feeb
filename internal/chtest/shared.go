package chtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Shared is one server that the tests of a test binary share, each test in
// a database of its own: a server takes a second or more to start, a
// CREATE DATABASE milliseconds. A test that needs servers to itself (a
// cluster of shards, one it stops, or one whose system tables it reads)
// calls Start or StartCluster instead.
//
// The zero value is ready. The server starts at the first Start or Try
// and runs until Close, which TestMain calls after m.Run; a test binary
// that never asks for a database starts none. Safe for concurrent use.
type Shared struct {
	mu      sync.Mutex
	started bool
	srv     *Server
	stop    func()
	err     error // why no server could be started, for every caller
	n       int   // databases created
}

// Start returns a fresh, empty database on the shared server for tb (the
// Server's Database, which its DSN, Exec and Query use), as the package's
// Start does a fresh server: tb is skipped when no server can be started,
// or fails under COHORT_REQUIRE_CLICKHOUSE=1. The database is left behind
// when tb ends; Close deletes it with the server.
func (p *Shared) Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := p.database(tb.Context())
	if err != nil {
		unavailable(tb, err)
	}
	return s
}

// Try is Start for tests that have other work to do without a server: it
// returns nil (and logs why) instead of skipping, unless
// COHORT_REQUIRE_CLICKHOUSE=1.
func (p *Shared) Try(tb testing.TB) *Server {
	tb.Helper()
	s, err := p.database(tb.Context())
	if err != nil {
		notTesting(tb, err)
		return nil
	}
	return s
}

// Close stops the server, if one was started, and deletes its directory.
// Later calls of Start and Try start a new one.
func (p *Shared) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		p.stop()
	}
	p.started, p.srv, p.stop, p.err = false, nil, nil, nil
}

// database starts the server on the first call and creates a database on
// it. A server that could not be started is not tried again: every caller
// gets the first error.
func (p *Shared) database(ctx context.Context) (*Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.started = true
		var all []*Server
		all, p.stop, p.err = start(1)
		if p.err == nil {
			p.srv = all[0]
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	p.n++
	s := *p.srv
	s.Database = fmt.Sprintf("test%03d", p.n)
	db := p.srv.open("admin", p.srv.AdminPassword)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+s.Database); err != nil {
		return nil, fmt.Errorf("create database %s: %w", s.Database, err)
	}
	return &s, nil
}
