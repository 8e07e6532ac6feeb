package table

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A connection that fails names neither the database's host or socket
// directory, nor its user, database name or password: the text reaches
// every member's log.
func TestPostgresConnectErrorRedacted(t *testing.T) {
	dir := t.TempDir() // no server listens here
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs := "host=" + dir + " user=clinicadmin dbname=patients_2026 password=hunter22 connect_timeout=2"
	t.Setenv("COHORT_TEST_PG_REDACT", cs)
	_, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG_REDACT", Table: "visits"}, "table visits")
	if err == nil {
		t.Fatal("connected to nothing")
	}
	for _, secret := range []string{dir, "clinicadmin", "patients_2026", "hunter22"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("connect error names %q: %v", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "table visits") {
		t.Errorf("connect error does not name the source: %v", err)
	}
}

// pgAdmin starts the shared server for t and returns its connection
// environment and a connection of the test's own (closed with the test),
// from which a test sets up tables or ends other connections.
func pgAdmin(t *testing.T) (srv *pgtest.Server, env string, admin *pgx.Conn) {
	t.Helper()
	srv = pgShared.Start(t)
	env = dsnEnv(t, srv.ConnString(srv.Password))
	admin, err := pgConnect(context.Background(), Source{PostgresEnv: env, Table: "x"}, "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgClose(context.Background(), admin) })
	return srv, env, admin
}

// A connection the server ends between statements (an administrator, a
// restart, a network fault) fails the next statement with a network
// error, whose text named the socket's path until pgError redacted it as
// a connect error is; the error keeps its kind for errors.As.
func TestPostgresQueryErrorRedacted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, env, admin := pgAdmin(t)
	src := Source{PostgresEnv: env, Query: "SELECT 1 AS v"}
	for _, inTx := range []bool{false, true} {
		sc, err := pgDB{}.connect(ctx, src, "table visits")
		if err != nil {
			t.Fatal(err)
		}
		c := sc.(*pgConn)
		if inTx {
			if err := c.begin(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var ended bool
		if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1, 10000)", c.conn.PgConn().PID()).Scan(&ended); err != nil || !ended {
			t.Fatalf("terminate the connection: %v %v", ended, err)
		}
		if inTx {
			err = c.scan(ctx, src.Query, func([]cell) error { return nil })
		} else {
			err = c.begin(ctx)
		}
		c.close(ctx)
		if err == nil {
			t.Fatalf("in a transaction %v: a statement on an ended connection succeeded", inTx)
		}
		for _, secret := range []string{srv.Dir, ".s.PGSQL", srv.User, srv.Database, srv.Password} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("in a transaction %v: query error names %q: %v", inTx, secret, err)
			}
		}
		if !strings.Contains(err.Error(), "table visits") || !errors.Is(err, ErrSource) {
			t.Errorf("in a transaction %v: query error does not name the source: %v", inTx, err)
		}
		var ne *net.OpError
		var pe *pgconn.PgError
		if !errors.As(err, &ne) && !errors.As(err, &pe) {
			t.Errorf("in a transaction %v: query error lost its kind: %v", inTx, err)
		}
	}
}

// The address of a network error is left out of its text, down the
// chain: a host name resolved to an address is in no part of the
// connection string, so hiding those parts alone would not hide it.
func TestRedactedLeavesOutAddresses(t *testing.T) {
	op := &net.OpError{Op: "read", Net: "tcp",
		Source: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 50122},
		Addr:   &net.TCPAddr{IP: net.IPv4(10, 9, 8, 7), Port: 5432},
		Err:    &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	err := &redacted{fmt.Errorf("failed to receive message: %w", op), []string{"db.clinic.internal"}}
	if got, want := err.Error(), "failed to receive message: read tcp: read: connection reset by peer"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("redacted error lost its cause: %v", err)
	}
	dns := &redacted{&net.DNSError{Err: "no such host", Name: "db.clinic.internal", Server: "10.0.0.53:53"}, nil}
	if got, want := dns.Error(), "lookup: no such host"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
