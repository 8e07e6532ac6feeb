package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/chtest"
)

func TestRoundTripClickHouse(t *testing.T) {
	srv := chShared.Start(t)
	t.Setenv("COHORT_TEST_CH", srv.DSN("admin", srv.AdminPassword))
	roundTrip(t, func(i int) Source { return Source{ClickHouseEnv: "COHORT_TEST_CH", Table: "t" + strconv.Itoa(i)} })
}

// TestClickHouseDistributed: a table spread over two shards (two server
// processes) through a Distributed table is aggregated by the cluster:
// each shard reads its own rows and sends the initiating server its
// partial aggregates, and the node gets one row. Rows are loaded through
// it too. The node reads as a readonly = 1 user.
func TestClickHouseDistributed(t *testing.T) {
	t.Parallel()
	shards := chtest.StartCluster(t, 2)
	const perShard = 5000
	for i, s := range shards {
		s.Exec(t,
			"CREATE TABLE pts_local (ward String, v Float64, n Int64) ENGINE = MergeTree ORDER BY tuple()",
			fmt.Sprintf("INSERT INTO pts_local SELECT ['cardio', 'neuro', 'onco'][number %% 3 + 1], (number %% 1000) / 4 - 100, number * %d FROM system.numbers LIMIT %d", i+1, perShard),
			"CREATE TABLE pts AS pts_local ENGINE = Distributed("+chtest.Cluster+", default, pts_local, rand())")
	}
	env := dsnEnv(t, shards[0].ReadOnlyDSN())
	ctx := context.Background()
	schema := map[string]Kind{"ward": Categorical, "v": Numeric, "n": Numeric}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, src := range []Source{
		{ClickHouseEnv: env, Table: "pts"},
		{ClickHouseEnv: env, Query: "SELECT v, n, ward FROM pts WHERE ward != 'onco'"},
	} {
		wsum, wrows, wcounts, err := loadedFolds(src, schema, "v", &[2]float64{-50, 80}, []float64{-100, 0, 24.75, 150})
		if err != nil {
			t.Fatal(err)
		}
		if src.Table != "" && wrows != 2*perShard {
			t.Fatalf("Open read %d rows through the Distributed table, want %d", wrows, 2*perShard)
		}
		agg, err := NewAggregator(src, schema, ReadOptions{Log: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agg.Close() })
		sum, rows, err := agg.ColumnSum(ctx, "v", &[2]float64{-50, 80})
		if err != nil || sum != wsum || rows != wrows {
			t.Fatalf("%s: sum %v over %d rows (%v), want %v over %d", src, sum, rows, err, wsum, wrows)
		}
		total, counts, err := agg.CountsAtMost(ctx, "v", []float64{-100, 0, 24.75, 150})
		if err != nil || total != wrows || fmt.Sprint(counts) != fmt.Sprint(wcounts) {
			t.Fatalf("%s: counts %d %v (%v), want %d %v", src, total, counts, err, wrows, wcounts)
		}
		nsum, _, err := agg.ColumnSum(ctx, "n", nil)
		if _, _, _, werr := loadedFolds(src, schema, "n", nil, nil); err != nil || werr != nil {
			t.Fatalf("%s: sum of n: %v, Open: %v", src, err, werr)
		}
		if src.Table != "" && nsum != 3*perShard*(perShard-1)/2 {
			t.Fatalf("sum of n %v, want %v", nsum, 3*perShard*(perShard-1)/2)
		}
	}
	// The other shard ran the aggregate over its own rows and returned its
	// partial result, not its rows: its query log has the pushed-down
	// query as a secondary query that read perShard rows and returned one
	// (the initiating server runs its own shard's part in process), and
	// the node got one row.
	got := queryLogRows(t, shards[0], 6, "SELECT result_rows FROM system.query_log WHERE type = 2 AND is_initial_query = 1 AND user = 'cohort' AND query LIKE '%countIf%'")
	if len(got) != 6 {
		t.Fatalf("the initiating server logged %d pushed-down queries, want 6 (three per source)", len(got))
	}
	for _, r := range got {
		if r[0] != "1" {
			t.Fatalf("a pushed-down query returned %s rows to the node, want 1", r[0])
		}
	}
	for i, s := range shards[1:] {
		got := queryLogRows(t, s, 1, "SELECT read_rows, result_rows FROM system.query_log WHERE type = 2 AND is_initial_query = 0 AND query LIKE '%countIf%' AND query LIKE '%pts_local%'")
		if len(got) == 0 {
			t.Fatalf("shard %d ran no part of the pushed-down aggregates", i)
		}
		for _, r := range got {
			if r[0] != strconv.Itoa(perShard) || r[1] != "1" {
				t.Fatalf("shard %d: a pushed-down query read %s rows and returned %s, want %d and 1", i, r[0], r[1], perShard)
			}
		}
	}
	if !strings.Contains(logged.String(), "level=DEBUG msg=\"table: query pushed down\"") || !strings.Contains(logged.String(), `FROM \"pts\"`) {
		t.Fatalf("the pushed-down query is not in the debug log:\n%s", logged.String())
	}
}

// queryLogRows runs query over s's query log until it returns at least
// want rows, or a minute has passed: a server logs a query once it has
// finished it, which on a loaded machine can come after the client has
// its answer, so one SYSTEM FLUSH LOGS right after may miss it.
func queryLogRows(t *testing.T, s *chtest.Server, want int, query string) [][]string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s.Exec(t, "SYSTEM FLUSH LOGS")
		got := s.Query(t, query)
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClickHouseBadInput: each failure names the source, never the DSN,
// password, server or user; the read-only user cannot write; Write never
// replaces a table.
func TestClickHouseBadInput(t *testing.T) {
	srv := chShared.Start(t)
	ctx := context.Background()
	srv.Exec(t,
		"CREATE TABLE ok (ward String, v Float64, secret String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO ok SELECT ['a', 'b'][number + 1], number / 2 + 1.5, 's' FROM system.numbers LIMIT 2",
		"CREATE TABLE texty (ward String, v String) ENGINE = Memory",
		"INSERT INTO texty SELECT 'a', '1'",
		"CREATE TABLE nully (ward String, v Nullable(Float64)) ENGINE = Memory",
		"INSERT INTO nully SELECT ['a', 'b'][number + 1], if(number = 0, toFloat64(1), NULL) FROM system.numbers LIMIT 2",
		"CREATE TABLE nan (ward String, v Float32) ENGINE = Memory",
		"INSERT INTO nan SELECT ['a', 'b'][number + 1], if(number = 0, toFloat32(1), toFloat32(nan)) FROM system.numbers LIMIT 2")
	t.Setenv("COHORT_TEST_CH", srv.ReadOnlyDSN())
	t.Setenv("COHORT_TEST_CH_BAD", srv.DSN("cohort", "not-the-password"))
	t.Setenv("COHORT_TEST_CH_JUNK", "clickhouse://cohort:"+srv.Password+"@127.0.0.1:notaport/x")
	t.Setenv("COHORT_TEST_CH_ADMIN", srv.DSN("admin", srv.AdminPassword))
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	src := func(env, tb string) Source { return Source{ClickHouseEnv: env, Table: tb} }
	secrets := []string{srv.Password, srv.AdminPassword, "not-the-password", "127.0.0.1", strconv.Itoa(srv.Port), "cohort:"}
	for _, c := range []struct {
		src    Source
		target error
		want   []string
	}{
		{src("COHORT_TEST_CH_UNSET", "ok"), ErrSource, []string{"COHORT_TEST_CH_UNSET is not set"}},
		{src("COHORT_TEST_CH_BAD", "ok"), ErrSource, []string{"clickhouse (connection from $COHORT_TEST_CH_BAD) table ok"}},
		{src("COHORT_TEST_CH_JUNK", "ok"), ErrSource, []string{"clickhouse (connection from $COHORT_TEST_CH_JUNK) table ok"}},
		{src("COHORT_TEST_CH", "missing"), ErrSource, []string{"table missing", "doesn't exist"}},
		{src("COHORT_TEST_CH", "texty"), ErrSource, []string{`column "v" has the non-numeric ClickHouse type String`}},
		{src("COHORT_TEST_CH", "nully"), ErrFormat, []string{`table nully: row 2: column "v": NULL value`}},
		{src("COHORT_TEST_CH", "nan"), ErrFormat, []string{`table nan: row 2: column "v"`, "not a finite number"}},
		{Source{ClickHouseEnv: "COHORT_TEST_CH", Query: "SELECT nope FROM ok"}, ErrSource, []string{"query"}},
	} {
		_, err := Open(ctx, c.src, "t", schema, ReadOptions{})
		mustErr(t, err, c.target, c.want...)
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q carries %q", c.src, err, s)
			}
		}
		// The Aggregator fails where Open does, with its text.
		agg, aerr := NewAggregator(c.src, schema, ReadOptions{})
		if aerr == nil {
			_, _, aerr = agg.ColumnSum(ctx, "v", nil)
			agg.Close()
		}
		if aerr == nil || aerr.Error() != err.Error() {
			t.Errorf("%s: Aggregator error %v, want Open's %v", c.src, aerr, err)
		}
	}
	// Only the schema's columns are read; a query must be one SELECT.
	tb, err := Open(ctx, src("COHORT_TEST_CH", "ok"), "t", schema, ReadOptions{})
	if err != nil || len(tb.Columns) != 2 || tb.NumRows() != 2 {
		t.Fatalf("read ok: %v %v", tb, err)
	}
	for _, q := range []string{"SELECT 1; DROP TABLE ok", "DROP TABLE ok", "INSERT INTO ok VALUES ('c', 3, 's')"} {
		if _, err := Open(ctx, Source{ClickHouseEnv: "COHORT_TEST_CH", Query: q}, "t", nil, ReadOptions{}); !errors.Is(err, ErrSource) {
			t.Errorf("query %q: %v, want ErrSource", q, err)
		}
	}
	// The read-only user cannot create a table, and a refused write
	// leaves nothing behind.
	want, _ := Open(ctx, src("COHORT_TEST_CH", "ok"), "t", nil, ReadOptions{})
	if err := Write(ctx, src("COHORT_TEST_CH", "copy"), want); !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("write as the read-only user: %v", err)
	}
	if err := Write(ctx, src("COHORT_TEST_CH_ADMIN", "ok"), want); !errors.Is(err, ErrExists) {
		t.Fatalf("write over an existing table: %v, want ErrExists", err)
	}
	if left := srv.Query(t, "SELECT name FROM system.tables WHERE database = '"+srv.Database+"' AND name LIKE '%cohort_tmp%'"); len(left) != 0 {
		t.Fatalf("a failed write left %v", left)
	}
}

func TestClickHouseSourceValidate(t *testing.T) {
	for _, s := range []Source{
		{ClickHouseEnv: "CH"},
		{ClickHouseEnv: "CH", PostgresEnv: "PG", Table: "t"},
		{ClickHouseEnv: "CH", Path: "a.csv"},
		{ClickHouseEnv: "C H", Table: "t"},
		{ClickHouseEnv: "CH", Table: "t; DROP"},
		{ClickHouseEnv: "CH", Query: "ALTER TABLE t DELETE WHERE 1"},
	} {
		if err := s.Validate(); !errors.Is(err, ErrSource) {
			t.Errorf("%+v: Validate = %v, want ErrSource", s, err)
		}
	}
	s := Source{ClickHouseEnv: "CH", Table: "db.loans"}
	if err := s.Validate(); err != nil || s.Type() != ClickHouse || s.String() != "clickhouse (connection from $CH) table db.loans" {
		t.Fatalf("%v %v %q", err, s.Type(), s)
	}
}

// TestClickHouseParamExact: a bound or threshold written into a query
// (chDB.param) reads back on the server as the same double, for doubles
// of every magnitude and bit pattern.
func TestClickHouseParamExact(t *testing.T) {
	srv := chShared.Start(t)
	t.Setenv("COHORT_TEST_CH", srv.ReadOnlyDSN())
	db, _, err := chOpen(Source{ClickHouseEnv: "COHORT_TEST_CH", Table: "t"}, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(7, 7))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e300, -1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2, 1e21, 123456789012345678}
	for len(vals) < 1000 {
		switch v := math.Float64frombits(r.Uint64()); {
		case math.IsNaN(v) || math.IsInf(v, 0):
		case len(vals)%2 == 0:
			vals = append(vals, v)
		default:
			vals = append(vals, math.Round(r.NormFloat64()*1e6)/1e3)
		}
	}
	for start := 0; start < len(vals); start += 100 {
		batch := vals[start:min(start+100, len(vals))]
		list := make([]string, len(batch))
		for i, v := range batch {
			list[i] = chDB{}.param(i+1, v)
		}
		got := make([]float64, len(batch))
		dest := make([]any, len(batch))
		for i := range got {
			dest[i] = &got[i]
		}
		if err := db.QueryRowContext(context.Background(), "SELECT "+strings.Join(list, ", ")).Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for i, v := range batch {
			if math.Float64bits(got[i]) != math.Float64bits(v) {
				t.Fatalf("%s reads back as %v, want %v", list[i], got[i], v)
			}
		}
	}
}

// TestClickHouseWriteLarge: a table whose rows, written as literals, are
// several times the server's default max_query_size (256 KiB) is written
// whole, in statements under it. One INSERT of 10,000 rows was refused at
// 20,000.
func TestClickHouseWriteLarge(t *testing.T) {
	t.Parallel()
	srv := chShared.Start(t)
	env := dsnEnv(t, srv.DSN("admin", srv.AdminPassword))
	const n = 6000 // about 400 KB of literals
	var csv strings.Builder
	csv.WriteString("id,word,v\n")
	for i := range n {
		fmt.Fprintf(&csv, "id-%06d,%s,%d\n", i, strings.Repeat("w", 20+i%40), i)
	}
	path := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	schema := map[string]Kind{"id": Categorical, "word": Categorical, "v": Numeric}
	ctx := t.Context()
	want, err := Open(ctx, Source{Path: path}, "big", schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := Source{ClickHouseEnv: env, Table: "big"}
	if err := Write(ctx, src, want); err != nil {
		t.Fatalf("write %d rows: %v", n, err)
	}
	got, err := Open(ctx, src, "big", schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The server keeps the rows of several INSERTs in parts of its own
	// order: compare them as sets.
	rowsOf := func(tb *Table) []string {
		cols := slices.Clone(tb.Columns)
		slices.SortFunc(cols, func(a, b *Column) int { return strings.Compare(a.Name, b.Name) })
		out := make([]string, tb.NumRows())
		for i := range out {
			for _, c := range cols {
				out[i] += c.Str[i] + "\x00"
			}
		}
		slices.Sort(out)
		return out
	}
	if a, b := rowsOf(want), rowsOf(got); !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("%d rows read back differ from the %d written: %q, want %q", len(b), len(a), b[i], a[i])
			}
		}
		t.Fatalf("%d rows read back, %d written", len(b), len(a))
	}
}

// TestClickHouseExceptionQuotesNothing: a server exception whose message
// quotes the data (a value that does not parse as a number) reaches the
// caller as its code and kind only, not the value.
func TestClickHouseExceptionQuotesNothing(t *testing.T) {
	srv := chShared.Start(t)
	t.Setenv("COHORT_TEST_CH_EX", srv.DSN("admin", srv.AdminPassword))
	ctx := t.Context()
	words := &Table{Name: "words", Columns: []*Column{{Name: "word", Kind: Categorical, Str: []string{"s3cr3tvalue"}}}}
	if err := Write(ctx, Source{ClickHouseEnv: "COHORT_TEST_CH_EX", Table: "words"}, words); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, Source{ClickHouseEnv: "COHORT_TEST_CH_EX", Query: "SELECT toFloat64(word) AS v FROM words"}, "t", map[string]Kind{"v": Numeric}, ReadOptions{})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "code: ") {
		t.Fatalf("a value that does not parse: %v", err)
	}
}
