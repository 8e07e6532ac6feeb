package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// sortedCuts is the cuts rule written over a sorted column, as a
// histogram booster computes it on the loaded table: the reference
// RankCuts must equal.
func sortedCuts(col []float64, bins int) []float64 {
	xs := slices.Clone(col)
	slices.Sort(xs)
	if len(xs) == 0 {
		return nil
	}
	d := slices.Compact(slices.Clone(xs))
	if len(d) <= bins {
		return d[:len(d)-1]
	}
	var cuts []float64
	for k := 1; k < bins; k++ {
		c := xs[(k*len(xs)+bins-1)/bins-1]
		if c == xs[len(xs)-1] || (len(cuts) > 0 && cuts[len(cuts)-1] == c) {
			continue
		}
		cuts = append(cuts, c)
	}
	return cuts
}

// loadedBinned is what OpenBinned must give: the cuts over the loaded
// columns and the loaded rows grouped by keep's texts and numbers and
// each binned column's bin, as sorted lines.
func loadedBinned(src Source, schema map[string]Kind, keep, binned []string, bins int) ([][]float64, []string, error) {
	tb, err := Open(context.Background(), src, "t", schema, ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	cuts := make([][]float64, len(binned))
	for j, c := range binned {
		col, err := tb.Column(c)
		if err != nil {
			return nil, nil, ErrNoColumn
		}
		cuts[j] = sortedCuts(col.Num, bins)
	}
	counts := map[string]int{}
	for r := range tb.NumRows() {
		var row []string
		for _, c := range keep {
			col, _ := tb.Column(c)
			v := col.Str[r]
			if col.Num != nil {
				v += fmt.Sprintf("=%v", col.Num[r])
			}
			row = append(row, v)
		}
		for j, c := range binned {
			col, _ := tb.Column(c)
			row = append(row, fmt.Sprintf("b%d", sort.SearchFloat64s(cuts[j], col.Num[r])))
		}
		counts[strings.Join(row, "|")]++
	}
	var out []string
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	slices.Sort(out)
	return cuts, out, nil
}

func binnedRows(b *Binned, keep []string) []string {
	var out []string
	for r := range b.Counts {
		var row []string
		for _, c := range keep {
			col, _ := b.Table.Column(c)
			v := col.Str[r]
			if col.Num != nil {
				v += fmt.Sprintf("=%v", col.Num[r])
			}
			row = append(row, v)
		}
		for j := range b.Columns {
			row = append(row, fmt.Sprintf("b%d", b.Bins[j][r]))
		}
		out = append(out, fmt.Sprintf("%s x%d", strings.Join(row, "|"), b.Counts[r]))
	}
	slices.Sort(out)
	return out
}

// TestRankCutsIsTheSortedColumnsRule: RankCuts over distinct values and
// counts gives the cuts of the sorted column, ties and few distinct
// values included.
func TestRankCutsIsTheSortedColumnsRule(t *testing.T) {
	for _, n := range []int{1, 2, 7, 61, 1000} {
		for _, period := range []int{1, 3, 17, 997} {
			var col []float64
			for i := range n {
				col = append(col, float64((i*7919)%period)/4-float64(i%2)) // ties, negatives, unsorted
			}
			for _, bins := range []int{1, 2, 3, 4, 10, 32, 256} {
				xs := slices.Sorted(slices.Values(col))
				var vals []float64
				var counts []int
				for _, x := range xs {
					if len(vals) > 0 && vals[len(vals)-1] == x {
						counts[len(counts)-1]++
						continue
					}
					vals, counts = append(vals, x), append(counts, 1)
				}
				if got, want := RankCuts(vals, counts, bins), sortedCuts(col, bins); !slices.Equal(got, want) {
					t.Fatalf("n %d period %d bins %d: %v, want %v", n, period, bins, got, want)
				}
			}
		}
	}
}

// TestOpenBinnedConformance: over every source type, the cuts are those
// of the loaded columns, the groups and counts those of the loaded rows
// by kept values and bins, the errors Open's, and MaxRows bounds the
// groups.
func TestOpenBinnedConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := map[string]Kind{"ward": Categorical, "v": Numeric, "digits": Categorical}
	cases := []struct {
		name         string
		schema       map[string]Kind
		keep, binned []string
		bins         int
	}{
		{"ward by v in 4", schema, []string{"ward"}, []string{"v"}, 4},
		{"ward by v in 3", schema, []string{"ward"}, []string{"v"}, 3},
		{"ward, digits by v in 32 (distinct values)", schema, []string{"digits", "ward"}, []string{"v"}, 32},
		{"v alone in 2", schema, nil, []string{"v"}, 2},
		{"kept only", schema, []string{"ward"}, nil, 4},
		{"digits numeric, kept and binned", map[string]Kind{"v": Numeric, "digits": Numeric}, []string{"digits"}, []string{"digits", "v"}, 5},
		{"texty binned", map[string]Kind{"v": Numeric, "digits": Numeric}, nil, []string{"digits"}, 3},
		{"missing", map[string]Kind{"v": Numeric, "nope": Numeric}, nil, []string{"v"}, 3},
	}
	for _, st := range aggStores(t) {
		t.Run(st.name, func(t *testing.T) {
			for _, rows := range []int{0, 1, 61} {
				src := st.put(t, aggTable(rows))
				for _, c := range cases {
					what := fmt.Sprintf("%d rows, %s", rows, c.name)
					wcuts, want, werr := loadedBinned(src, c.schema, c.keep, c.binned, c.bins)
					b, err := OpenBinned(ctx, src, "t", c.schema, c.keep, c.binned, c.bins, ReadOptions{})
					sameErr(t, what, err, werr)
					if werr != nil {
						continue
					}
					if fmt.Sprint(b.Cuts) != fmt.Sprint(wcuts) {
						t.Fatalf("%s: cuts %v, want %v", what, b.Cuts, wcuts)
					}
					if got := binnedRows(b, c.keep); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("%s: %v\nwant %v", what, got, want)
					}
					n := int64(len(want))
					if n < 2 {
						continue
					}
					bounded := src
					bounded.MaxRows = n
					if _, err := OpenBinned(ctx, bounded, "t", c.schema, c.keep, c.binned, c.bins, ReadOptions{}); err != nil {
						t.Fatalf("%s: max_rows %d, the groups: %v", what, n, err)
					}
					bounded.MaxRows = n - 1
					if _, err := OpenBinned(ctx, bounded, "t", c.schema, c.keep, c.binned, c.bins, ReadOptions{}); !errors.Is(err, ErrTooLarge) {
						t.Fatalf("%s: max_rows below the groups: %v, want ErrTooLarge", what, err)
					}
				}
			}
		})
	}
	if _, err := OpenBinned(ctx, Source{Path: "x.csv"}, "t", schema, []string{"ward"}, []string{"ward"}, 3, ReadOptions{}); !errors.Is(err, ErrNotNumeric) {
		t.Fatalf("a categorical column binned: %v", err)
	}
}

// TestOpenBinnedQueryNamesOnlyItsColumns: on a database the groups are
// one GROUP BY selecting the kept columns and the bins of the binned
// ones, whose cuts are parameters, after a count and each binned
// column's ordered value counts; a column the schema does not list
// (one the organisation keeps home) is named in no query, and a schema
// column outside them (an id) only where Open's refusals are counted. A
// NULL in that id is still Open's error.
func TestOpenBinnedQueryNamesOnlyItsColumns(t *testing.T) {
	ctx := context.Background()
	schema := map[string]Kind{"k": Key, "a": Numeric, "cls": Class, "rid": ID}
	check := func(t *testing.T, src, nulls Source) {
		var log bytes.Buffer
		opts := ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		b, err := OpenBinned(ctx, src, "t", schema, []string{"cls", "k"}, []string{"a"}, 2, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(b.Cuts, binnedRows(b, []string{"cls", "k"})); got != "[[1]] [no|x|b0 x2 no|y|b1 x2 yes|x|b0 x1]" {
			t.Fatalf("groups %s", got)
		}
		text := log.String()
		// The rows and refusals counted; the binned column's ordered value
		// counts (PostgreSQL: its first distinct values, then its
		// percentiles), its cuts; the groups. Only the refusals' count
		// names a column outside them.
		queries := regexp.MustCompile(`msg="table: query pushed down".*`).FindAllString(text, -1)
		if len(queries) < 3 || len(queries) > 4 || strings.Contains(text, "secret") ||
			!regexp.MustCompile(`query="SELECT \\"a\\"(, [^"]*)? FROM \\"t\\" GROUP BY \\"a\\" ORDER BY \\"a\\"( LIMIT 3)?"`).MatchString(text) {
			t.Fatalf("log %s", text)
		}
		for _, q := range queries {
			if !strings.Contains(q, "IS NULL") && strings.Contains(q, "rid") {
				t.Fatalf("a query names the id: %s", q)
			}
		}
		m := regexp.MustCompile(`query="SELECT \\"cls\\", \\"k\\", \((?:CASE WHEN \\"a\\" > [^ ]+ THEN 1 ELSE 0 END|1 - width_bucket\(-\(\\"a\\"::float8\), ARRAY\[[^]]+\]\))\), .* GROUP BY (.*?)" args="\[(1 1|-1 -1)\]"`).FindStringSubmatch(text)
		if m == nil || strings.Contains(m[1], "rid") {
			t.Fatalf("the query selects or groups more than its columns: %s", text)
		}
		_, werr := Open(ctx, nulls, "t", schema, ReadOptions{})
		_, err = OpenBinned(ctx, nulls, "t", schema, []string{"cls", "k"}, []string{"a"}, 2, ReadOptions{})
		if werr == nil {
			t.Fatal("Open accepts a NULL id")
		}
		sameErr(t, "a NULL id", err, werr)
	}
	rows := `('x', 1, 'no', 1, 's1'), ('x', 1, 'no', 2, 's2'), ('x', 1, 'yes', 3, 's3'), ('y', 2.5, 'no', 4, 's4'), ('y', 3, 'no', 5, 's5')`
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "d.db")
		sqliteExec(t, db, `CREATE TABLE t (k TEXT, a REAL, cls TEXT, rid INTEGER, secret TEXT)`, `INSERT INTO t VALUES `+rows,
			`CREATE TABLE n (k TEXT, a REAL, cls TEXT, rid INTEGER, secret TEXT)`, `INSERT INTO n VALUES ('x', 1, 'no', NULL, 's')`)
		check(t, Source{SQLite: db, Table: "t"}, Source{SQLite: db, Table: "n"})
	})
	t.Run("postgres", func(t *testing.T) {
		srv := pgShared.Start(t)
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{`CREATE TABLE t (k text, a float8, cls text, rid int, secret text)`, `INSERT INTO t VALUES ` + rows,
			`CREATE TABLE n (k text, a float8, cls text, rid int, secret text)`, `INSERT INTO n VALUES ('x', 1, 'no', NULL, 's')`} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		pgClose(ctx, conn)
		check(t, Source{PostgresEnv: "COHORT_TEST_PG", Table: "t"}, Source{PostgresEnv: "COHORT_TEST_PG", Table: "n"})
	})
}

// TestPostgresCutsAtExactRanks: PostgreSQL's percentile_disc(7/12) over
// 1..108 is 64 (⌈(7/12)·108⌉ in floating point is 64), where the cuts'
// rank ⌈7·108/12⌉ is 63; the cuts pushed down are the loaded column's.
func TestPostgresCutsAtExactRanks(t *testing.T) {
	ctx := context.Background()
	srv := pgShared.Start(t)
	t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
	conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE r AS SELECT i::float8 AS v FROM generate_series(1, 108) AS i`); err != nil {
		t.Fatal(err)
	}
	var naive float64
	if err := conn.QueryRow(ctx, `SELECT percentile_disc(7/12.0::float8) WITHIN GROUP (ORDER BY v) FROM r`).Scan(&naive); err != nil {
		t.Fatal(err)
	}
	pgClose(ctx, conn)
	src := Source{PostgresEnv: "COHORT_TEST_PG", Table: "r"}
	schema := map[string]Kind{"v": Numeric}
	want, _, err := loadedBinned(src, schema, nil, []string{"v"}, 12)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenBinned(ctx, src, "t", schema, nil, []string{"v"}, 12, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(b.Cuts) != fmt.Sprint(want) || want[0][6] != 63 {
		t.Fatalf("cuts %v, want %v (percentile_disc(7/12) alone: %v)", b.Cuts, want, naive)
	}
	t.Logf("percentile_disc(7/12) alone: %v; the seventh cut: %v", naive, b.Cuts[0][6])
}

// TestCutsAtRanksOnEveryStore: the values at the cuts' ranks that a
// database picks itself (percentile_disc, quantilesExact, numbered rows)
// are the loaded column's cuts, over 108 distinct values, where k/bins of
// the rows in floating point lands past the rank (above), and over
// values tied three by three; the database's query was the one that
// answered.
func TestCutsAtRanksOnEveryStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := map[string]Kind{"v": Numeric}
	column := func(f func(i int) float64) *Table {
		v := &Column{Name: "v", Kind: Numeric}
		for i := range 108 {
			v.Num, v.Str = append(v.Num, f(i)), append(v.Str, fmt.Sprint(f(i)))
		}
		return &Table{Name: "t", Columns: []*Column{v}}
	}
	picks := regexp.MustCompile(`percentile_disc|quantilesExact|ROW_NUMBER`)
	for _, st := range aggStores(t) {
		t.Run(st.name, func(t *testing.T) {
			for _, tb := range []*Table{column(func(i int) float64 { return float64(i + 1) }), column(func(i int) float64 { return float64(i/3) / 4 })} {
				src := st.put(t, tb)
				want, _, err := loadedBinned(src, schema, nil, []string{"v"}, 12)
				if err != nil {
					t.Fatal(err)
				}
				var log bytes.Buffer
				opts := ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
				b, err := OpenBinned(ctx, src, "t", schema, nil, []string{"v"}, 12, opts)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(b.Cuts) != fmt.Sprint(want) || len(want[0]) != 11 {
					t.Fatalf("cuts %v, want %v", b.Cuts, want)
				}
				if sql := st.name != "csv" && st.name != "parquet"; sql != picks.MatchString(log.String()) {
					t.Fatalf("a database's picking query ran: %v, want %v:\n%s", !sql, sql, log.String())
				}
			}
		})
	}
}
