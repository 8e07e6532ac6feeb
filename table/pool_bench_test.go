package table

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"
)

// aggsPerJob is how many aggregates the connection benchmarks ask of one
// Aggregator: about what a quantile job's rounds ask of a database table
// (one count per round, 30 to 60 rounds at the default precision).
const aggsPerJob = 50

// benchAggregates times aggsPerJob ColumnSum calls over src through one
// Aggregator, closed after them when it can be (io.Closer, so that the
// same benchmark builds before and after Aggregators kept connections).
// The table is small so that what is timed is the connection, not the sum.
func benchAggregates(b *testing.B, src Source) {
	ctx := context.Background()
	if err := Write(ctx, src, aggTable(1000)); err != nil {
		b.Fatal(err)
	}
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	start := time.Now()
	for b.Loop() {
		agg, err := NewAggregator(src, schema, ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for range aggsPerJob {
			if _, _, err := agg.ColumnSum(ctx, "v", nil); err != nil {
				b.Fatal(err)
			}
		}
		if c, ok := agg.(io.Closer); ok {
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*aggsPerJob), "ns/aggregate")
}

func BenchmarkAggregatesPostgres(b *testing.B) {
	srv := pgShared.Start(b)
	benchAggregates(b, Source{PostgresEnv: dsnEnv(b, srv.ConnString(srv.Password)), Table: "bench"})
}

func BenchmarkAggregatesSQLite(b *testing.B) {
	benchAggregates(b, Source{SQLite: filepath.Join(b.TempDir(), "bench.db"), Table: "bench"})
}

func BenchmarkAggregatesClickHouse(b *testing.B) {
	srv := chShared.Start(b)
	benchAggregates(b, Source{ClickHouseEnv: dsnEnv(b, srv.DSN("admin", srv.AdminPassword)), Table: "bench"})
}
