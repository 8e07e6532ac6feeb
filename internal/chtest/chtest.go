// Package chtest starts throwaway ClickHouse servers for tests: each a
// plain clickhouse-server process (not the system service) with its own
// configuration, data and logs in a temporary directory, listening on
// 127.0.0.1 at free ports, stopped and deleted when the test ends.
// StartCluster starts several that form one cluster, "cohort", with one
// shard per server, for Distributed tables.
//
// Every server has two users: "admin" (password Server.AdminPassword),
// which creates and fills tables, and "cohort" (Server.Password), whose
// profile is readonly = 1, as an organisation should give its node.
//
// Where no server can be started (no clickhouse-server binary) the test
// is skipped with the reason, unless COHORT_REQUIRE_CLICKHOUSE=1 (CI sets
// it after installing Debian's clickhouse-server), which makes it fail.
package chtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Cluster is the name of the cluster StartCluster's servers form.
const Cluster = "cohort"

// Server is a running throwaway server.
type Server struct {
	Dir  string
	Port int // native protocol, on 127.0.0.1
	// Database is the database that DSN, Exec and Query use: "default",
	// or the test's own on a Shared server.
	Database string
	// Password is the read-only "cohort" user's; AdminPassword the
	// "admin" user's.
	Password, AdminPassword string
}

// DSN is a connection string for user with password.
func (s *Server) DSN(user, password string) string {
	return fmt.Sprintf("clickhouse://%s:%s@127.0.0.1:%d/%s", user, password, s.Port, s.Database)
}

// ReadOnlyDSN is the read-only user's connection string.
func (s *Server) ReadOnlyDSN() string { return s.DSN("cohort", s.Password) }

// Exec runs statements as the admin user, failing tb on an error. Fill
// tables with INSERT ... SELECT: the driver's INSERT ... VALUES waits for
// a header servers before 19.x do not send.
func (s *Server) Exec(tb testing.TB, stmts ...string) {
	tb.Helper()
	db := s.open("admin", s.AdminPassword)
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			tb.Fatalf("clickhouse %s: %v", q, err)
		}
	}
}

// Query runs q as the admin user and returns its rows as text.
func (s *Server) Query(tb testing.TB, q string) [][]string {
	tb.Helper()
	db := s.open("admin", s.AdminPassword)
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		tb.Fatalf("clickhouse %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func (s *Server) open(user, password string) *sql.DB {
	return clickhouse.OpenDB(&clickhouse.Options{
		Addr: []string{"127.0.0.1:" + strconv.Itoa(s.Port)},
		Auth: clickhouse.Auth{Database: s.Database, Username: user, Password: password},
	})
}

// Start starts one server for tb and stops it when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartCluster(tb, 1)[0]
}

// Try is Start for tests that have other work to do without a server: it
// returns nil (and logs why) instead of skipping, unless
// COHORT_REQUIRE_CLICKHOUSE=1.
func Try(tb testing.TB) *Server {
	tb.Helper()
	s, stop, err := start(1)
	if err != nil {
		notTesting(tb, err)
		return nil
	}
	tb.Cleanup(stop)
	return s[0]
}

// StartCluster starts n servers forming the cluster Cluster, one shard
// each, and stops them when tb ends.
func StartCluster(tb testing.TB, n int) []*Server {
	tb.Helper()
	s, stop, err := start(n)
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(stop)
	return s
}

// unavailable skips tb because no server could be started, or fails it
// under COHORT_REQUIRE_CLICKHOUSE=1.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("COHORT_REQUIRE_CLICKHOUSE") == "1" {
		tb.Fatalf("ClickHouse test server: %v (COHORT_REQUIRE_CLICKHOUSE=1)", err)
	}
	tb.Skipf("skipping: cannot start a ClickHouse test server: %v (install Debian's clickhouse-server package, or set COHORT_REQUIRE_CLICKHOUSE=1 to make this a failure)", err)
}

// notTesting is unavailable for Try: it logs instead of skipping.
func notTesting(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("COHORT_REQUIRE_CLICKHOUSE") == "1" {
		tb.Fatalf("ClickHouse test server: %v (COHORT_REQUIRE_CLICKHOUSE=1)", err)
	}
	tb.Logf("not testing ClickHouse: cannot start a test server: %v", err)
}

// command is how to run the server: clickhouse-server, or the single
// clickhouse binary of newer packages.
func command() ([]string, error) {
	for _, p := range []string{"clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if path, err := exec.LookPath(p); err == nil {
			return []string{path}, nil
		}
	}
	if path, err := exec.LookPath("clickhouse"); err == nil {
		return []string{path, "server"}, nil
	}
	return nil, errors.New("clickhouse-server not found on PATH or in /usr/sbin")
}

// freePorts returns n ports the kernel had free.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// start starts n servers forming the cluster Cluster; stop stops them
// and deletes their directories. On an error nothing is left running or
// on disk.
func start(n int) (_ []*Server, stop func(), err error) {
	cmd, err := command()
	if err != nil {
		return nil, nil, err
	}
	ports, err := freePorts(3 * n) // native, HTTP, interserver per server
	if err != nil {
		return nil, nil, err
	}
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	secret := strconv.Itoa(os.Getpid())
	servers := make([]*Server, n)
	for i := range servers {
		dir, err := os.MkdirTemp("", "cohort-ch-")
		if err != nil {
			return nil, nil, err
		}
		stops = append(stops, func() { os.RemoveAll(dir) })
		servers[i] = &Server{Dir: dir, Port: ports[3*i], Database: "default", Password: "ro-secret-" + secret, AdminPassword: "admin-secret-" + secret}
	}
	for i, s := range servers {
		if err := s.writeConfig(servers, ports[3*i+1], ports[3*i+2]); err != nil {
			return nil, nil, err
		}
		kill, err := s.run(cmd)
		if kill != nil {
			stops = append(stops, kill)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return servers, stop, nil
}

// run starts the server process and waits until it answers or exits;
// stop, non-nil once the process started, stops it.
func (s *Server) run(cmd []string) (stop func(), err error) {
	c := exec.Command(cmd[0], append(cmd[1:], "--config-file="+filepath.Join(s.Dir, "config.xml"))...)
	c.Dir = s.Dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = sysProcAttr()
	if err := c.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	stop = func() {
		c.Process.Signal(syscall.SIGTERM)
		select {
		case werr := <-exited:
			exited <- werr
		case <-time.After(30 * time.Second):
			c.Process.Kill()
			exited <- <-exited
		}
	}
	db := s.open("admin", s.AdminPassword)
	defer db.Close()
	// Wait until it answers; a server that exits is the failure, and one
	// that neither answers nor exits in two minutes is stuck.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return stop, nil
		}
		select {
		case werr := <-exited:
			exited <- werr
			log, _ := os.ReadFile(filepath.Join(s.Dir, "err.log"))
			return stop, fmt.Errorf("clickhouse-server exited: %v: %s %s", werr, bytes.TrimSpace(out.Bytes()), lastLines(log, 5))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return stop, fmt.Errorf("clickhouse-server did not answer within 2 minutes: %w", err)
		}
	}
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writeConfig writes the server's config.xml and users.xml: its ports,
// its directories, the cluster of all servers, query logging (tests read
// system.query_log to see what each shard ran) and the two users.
func (s *Server) writeConfig(all []*Server, httpPort, interPort int) error {
	var shards strings.Builder
	for _, o := range all {
		fmt.Fprintf(&shards, "<shard><replica><host>127.0.0.1</host><port>%d</port><user>admin</user><password>%s</password></replica></shard>", o.Port, o.AdminPassword)
	}
	d := s.Dir + "/"
	config := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]sserver.log</log><errorlog>%[1]serr.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>%[2]d</tcp_port>
  <http_port>%[3]d</http_port>
  <interserver_http_port>%[4]d</interserver_http_port>
  <path>%[1]sdata/</path>
  <tmp_path>%[1]stmp/</tmp_path>
  <user_files_path>%[1]suser_files/</user_files_path>
  <format_schema_path>%[1]sformat_schemas/</format_schema_path>
  <users_config>%[1]susers.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>0</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>500</flush_interval_milliseconds></query_log>
  <remote_servers><%[5]s>%[6]s</%[5]s></remote_servers>
</yandex>
`, d, s.Port, httpPort, interPort, Cluster, shards.String())
	users := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><log_queries>1</log_queries><max_threads>2</max_threads></default>
    <readonly><readonly>1</readonly><log_queries>1</log_queries><max_threads>2</max_threads></readonly>
  </profiles>
  <users>
    <admin><password>%[1]s</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></admin>
    <cohort><password>%[2]s</password><networks><ip>127.0.0.1</ip></networks><profile>readonly</profile><quota>default</quota></cohort>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`, s.AdminPassword, s.Password)
	if err := os.WriteFile(filepath.Join(s.Dir, "config.xml"), []byte(config), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "users.xml"), []byte(users), 0o600)
}
