package table

import (
	"fmt"
	"os"
	"testing"

	"github.com/cohortdm/cohort/internal/chtest"
	"github.com/cohortdm/cohort/internal/pgtest"
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

// TestMain stops the shared servers once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgShared.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stop the shared PostgreSQL test server: %v\n", err)
	}
	chShared.Close()
	os.Exit(code)
}
