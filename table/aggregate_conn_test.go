package table

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// connID is the server's name for the connection an aggregate ran on,
// read through the Aggregator itself: the source is a query whose one row
// holds that name (a backend's pid, a client's port), so ColumnSum,
// ColumnSums and GroupCounts each return it. kth picks which of the three
// asks, so that every path that connects is seen to share the connection.
func connID(t *testing.T, agg Aggregator, col string, kth int) int64 {
	t.Helper()
	ctx := context.Background()
	var x float64
	var err error
	switch kth % 3 {
	case 0:
		x, _, err = agg.ColumnSum(ctx, col, nil)
	case 1:
		var sums []float64
		if sums, _, err = agg.ColumnSums(ctx, []string{col}, nil); err == nil {
			x = sums[0]
		}
	default:
		var groups [][]Group
		if _, groups, err = agg.GroupCounts(ctx, [][]string{{col}}); err == nil {
			x, err = strconv.ParseFloat(groups[0][0].Values[0], 64)
		}
	}
	if err != nil {
		t.Fatalf("aggregate %d: %v", kth, err)
	}
	return int64(x)
}

// sameConn asks agg n aggregates and returns the one connection they all
// ran on, failing t when they ran on more.
func sameConn(t *testing.T, agg Aggregator, col string, n int) int64 {
	t.Helper()
	seen := map[int64]bool{}
	var id int64
	for k := range n {
		id = connID(t, agg, col, k)
		seen[id] = true
	}
	if len(seen) != 1 {
		t.Fatalf("%d aggregates over one Aggregator ran on %d connections, want 1", n, len(seen))
	}
	return id
}

// closedOwnConns checks that after Close each aggregate still answers,
// on a connection of its own (none is kept), other than kept.
func closedOwnConns(t *testing.T, agg Aggregator, col string, kept int64) {
	t.Helper()
	if err := agg.Close(); err != nil {
		t.Fatal(err)
	}
	a, b := connID(t, agg, col, 0), connID(t, agg, col, 1)
	if a == b || a == kept || b == kept {
		t.Fatalf("after Close: aggregates on connections %d and %d (kept before: %d), want two new ones", a, b, kept)
	}
}

// TestAggregatorKeepsItsConnection: a job's aggregates over one
// PostgreSQL source run on one connection, not one each (they did before
// the Aggregator kept it: 10 connections for 10 aggregates), outside any
// transaction between them; a kept connection the server has ended is
// replaced without failing the aggregate; after Close none is kept.
func TestAggregatorKeepsItsConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, env, admin := pgAdmin(t)
	if _, err := admin.Exec(ctx, `CREATE TABLE one (x int); INSERT INTO one VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	src := Source{PostgresEnv: env, Query: "SELECT pg_backend_pid() AS pid FROM one"}
	agg, err := NewAggregator(src, map[string]Kind{"pid": Numeric}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	pid := sameConn(t, agg, "pid", 10)
	var state string
	if err := admin.QueryRow(ctx, "SELECT state FROM pg_stat_activity WHERE pid = $1", pid).Scan(&state); err != nil || state != "idle" {
		t.Fatalf("the kept connection's state %q (%v), want idle: no transaction open between aggregates", state, err)
	}
	// The server ends the kept connection (an administrator, an idle
	// timeout, a restart between a job's rounds); pg_terminate_backend
	// waits for the backend to exit, up to its timeout.
	var ended bool
	if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1, 10000)", pid).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate the kept connection: %v %v", ended, err)
	}
	again := sameConn(t, agg, "pid", 3)
	if again == pid {
		t.Fatalf("aggregates ran on the ended connection %d", pid)
	}
	closedOwnConns(t, agg, "pid", again)
}

// TestClickHouseAggregatorKeepsItsConnection is
// TestAggregatorKeepsItsConnection for ClickHouse, whose connections are
// told apart by the client's port in system.processes (the server has no
// connection id a query can read, down to 18.16).
func TestClickHouseAggregatorKeepsItsConnection(t *testing.T) {
	t.Parallel()
	srv := chShared.Start(t)
	env := dsnEnv(t, srv.DSN("admin", srv.AdminPassword))
	// The marker is in the query the Aggregator runs, which makes it the
	// only process the query selects (the tests share the server).
	marker := fmt.Sprintf("cohort_conn_probe_%d", dsnEnvs.Load())
	src := Source{ClickHouseEnv: env, Query: "SELECT toFloat64(port) AS port FROM system.processes WHERE query LIKE '%" + marker + "%'"}
	agg, err := NewAggregator(src, map[string]Kind{"port": Numeric}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	port := sameConn(t, agg, "port", 10)
	closedOwnConns(t, agg, "port", port)
}

// TestAggregatorConcurrentAggregates: aggregates asked of one
// Aggregator at once (a step re-run while the old attempt's count still
// runs) each answer, whichever connection serves them; run with -race,
// it checks the kept connection's hand-over.
func TestAggregatorConcurrentAggregates(t *testing.T) {
	t.Parallel()
	src := Source{SQLite: filepath.Join(t.TempDir(), "c.db"), Table: "t"}
	if err := Write(context.Background(), src, aggTable(61)); err != nil {
		t.Fatal(err)
	}
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	want, wrows, _, err := loadedFolds(src, schema, "v", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := NewAggregator(src, schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4*5)
	for range 4 {
		wg.Go(func() {
			for range 5 {
				sum, rows, err := agg.ColumnSum(context.Background(), "v", nil)
				if err == nil && (sum != want || rows != wrows) {
					err = fmt.Errorf("sum %v over %d rows, want %v over %d", sum, rows, want, wrows)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
