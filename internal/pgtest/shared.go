//go:build unix

package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Shared is one server that the tests of a test binary share, each test in
// a database of its own: an initdb and a start cost about two seconds per
// server, a CREATE DATABASE tens of milliseconds. A test that needs a
// server to itself (one it stops, or whose settings it changes) calls
// Start instead.
//
// The zero value is ready. The server starts at the first Start or Try
// and runs until Close, which TestMain calls after m.Run; a test binary
// that never asks for a database starts none. Safe for concurrent use.
type Shared struct {
	mu      sync.Mutex
	started bool
	srv     *Server
	stop    func() error
	err     error // why no server could be started, for every caller
	n       int   // databases created
}

// Start returns a fresh, empty database on the shared server for t, as
// the package's Start does a fresh server: t is skipped when no server can
// be started, or fails under COHORT_REQUIRE_POSTGRES=1. The database is
// left behind when t ends; Close deletes it with the server.
func (p *Shared) Start(t testing.TB) *Server {
	t.Helper()
	s, err := p.database(t.Context())
	if err != nil {
		unavailable(t, err)
	}
	return s
}

// Try is Start for tests that have other work to do without a server: it
// returns nil (and logs why) instead of skipping, unless
// COHORT_REQUIRE_POSTGRES=1.
func (p *Shared) Try(t testing.TB) *Server {
	t.Helper()
	s, err := p.database(t.Context())
	if err != nil {
		notTesting(t, err)
		return nil
	}
	return s
}

// Close stops the server, if one was started, and deletes its directory.
// Later calls of Start and Try start a new one.
func (p *Shared) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	stop := p.stop
	p.started, p.srv, p.stop, p.err = false, nil, nil, nil
	if stop == nil {
		return nil
	}
	return stop()
}

// database starts the server on the first call and creates a database on
// it. A server that could not be started is not tried again: every
// caller gets the first error.
func (p *Shared) database(ctx context.Context) (*Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.started = true
		p.srv, p.stop, p.err = start()
	}
	if p.err != nil {
		return nil, p.err
	}
	p.n++
	s := *p.srv
	s.Database = fmt.Sprintf("test%03d", p.n)
	conn, err := pgx.Connect(ctx, p.srv.ConnString(p.srv.Password))
	if err != nil {
		return nil, fmt.Errorf("connect to the shared server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+s.Database); err != nil {
		return nil, fmt.Errorf("create database %s: %w", s.Database, err)
	}
	return &s, nil
}
