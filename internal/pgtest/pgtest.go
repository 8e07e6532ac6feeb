//go:build unix

// Package pgtest starts a throwaway PostgreSQL server for tests: a fresh
// cluster (initdb) listening only on a Unix socket in a temporary
// directory, with password authentication, stopped and deleted when the
// test ends. initdb and pg_ctl refuse to run as root, so as root the server
// runs as the "postgres" user (Debian's postgresql package creates it).
//
// Where no server can be started (no PostgreSQL binaries, no postgres user)
// the test is skipped with the reason, unless COHORT_REQUIRE_POSTGRES=1
// (CI sets it after installing PostgreSQL), which makes it fail instead.
package pgtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
)

// Server is a running throwaway server.
type Server struct {
	// Dir holds the socket; Password is the user's password.
	Dir, User, Password, Database string
}

// ConnString returns a connection string with the given password.
func (s *Server) ConnString(password string) string {
	return fmt.Sprintf("host=%s user=%s password=%s dbname=%s sslmode=disable", s.Dir, s.User, password, s.Database)
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, stop, err := start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Logf("stop PostgreSQL test server: %v", err)
		}
	})
	return s
}

// Try is Start for tests that have other work to do without a server: it
// returns nil (and logs why) instead of skipping, unless
// COHORT_REQUIRE_POSTGRES=1.
func Try(t testing.TB) *Server {
	t.Helper()
	s, stop, err := start()
	if err != nil {
		notTesting(t, err)
		return nil
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Logf("stop PostgreSQL test server: %v", err)
		}
	})
	return s
}

// unavailable skips t because no server could be started, or fails it
// under COHORT_REQUIRE_POSTGRES=1.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("COHORT_REQUIRE_POSTGRES") == "1" {
		t.Fatalf("PostgreSQL test server: %v (COHORT_REQUIRE_POSTGRES=1)", err)
	}
	t.Skipf("skipping: cannot start a PostgreSQL test server: %v (install Debian's postgresql package, or set COHORT_REQUIRE_POSTGRES=1 to make this a failure)", err)
}

// notTesting is unavailable for Try: it logs instead of skipping.
func notTesting(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("COHORT_REQUIRE_POSTGRES") == "1" {
		t.Fatalf("PostgreSQL test server: %v (COHORT_REQUIRE_POSTGRES=1)", err)
	}
	t.Logf("not testing PostgreSQL: cannot start a test server: %v", err)
}

// binDir finds initdb and pg_ctl: on PATH, else the newest
// /usr/lib/postgresql/VERSION/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("initdb not found on PATH or in /usr/lib/postgresql/*/bin")
}

// start initialises and starts a server; stop stops it and deletes its
// directory. On an error nothing is left running or on disk.
func start() (_ *Server, stop func() error, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, nil, err
	}
	var cred *syscall.Credential
	var uid, gid int = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, nil, fmt.Errorf("running as root and there is no postgres user to run the server as: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not t.TempDir: its parents are private to the test's user, and the
	// server may run as another; the socket path must also stay short.
	dir, err := os.MkdirTemp("", "cohort-pg-")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, nil, err
		}
	}
	s := &Server{Dir: dir, User: "cohort", Password: "test-secret-" + strconv.Itoa(os.Getpid()), Database: "postgres"}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(s.Password+"\n"), 0o600); err != nil {
		return nil, nil, err
	}
	if uid >= 0 {
		if err := os.Chown(pw, uid, gid); err != nil {
			return nil, nil, err
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w: %s", name, err, bytes.TrimSpace(out.Bytes()))
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-U", s.User, "--auth=scram-sha-256", "--pwfile="+pw, "-E", "UTF8", "--no-sync"); err != nil {
		return nil, nil, err
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c full_page_writes=off", dir)
	if err := run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		return nil, nil, err
	}
	return s, func() error {
		defer os.RemoveAll(dir)
		return run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
	}, nil
}
