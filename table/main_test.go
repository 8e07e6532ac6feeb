package table

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/cohortdm/cohort/internal/chtest"
	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/cohortdm/cohort/internal/testkit"
)

// pgShared and chShared are the one PostgreSQL and the one ClickHouse
// server of this test binary; each test gets a database of its own on
// them (pgShared.Start, chShared.Try, ...). Starting a server per test
// cost this package about 17 server start-ups, most of its run time.
// Tests that need servers to themselves (the Distributed table over two
// shards) still start their own.
var (
	pgShared pgtest.Shared
	chShared chtest.Shared
)

// dsnEnvs numbers the variables dsnEnv sets.
var dsnEnvs atomic.Int64

// dsnEnv puts a connection string into an environment variable of its own
// for t and returns the variable's name, which a Source names as the
// product's catalogue does. t.Setenv cannot serve a parallel test, and a
// name shared between tests would point one test at another's database.
func dsnEnv(t testing.TB, dsn string) string {
	t.Helper()
	name := fmt.Sprintf("COHORT_TEST_DSN_%d", dsnEnvs.Add(1))
	if err := os.Setenv(name, dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Unsetenv(name) })
	return name
}

// TestMain runs four parallel tests at once, since the conformance suites
// wait on the database servers, which are other processes (20 s two at a
// time, 17 s four at a time, 30 Nov 2026), and stops the shared servers
// once every test has run.
func TestMain(m *testing.M) {
	testkit.WaitingParallel(4)
	code := m.Run()
	if err := pgShared.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stop the shared PostgreSQL test server: %v\n", err)
	}
	chShared.Close()
	os.Exit(code)
}
