package table

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// sqlDialect is what differs between the databases in a pushed-down
// aggregate: connecting, reading a result's columns, and the SQL of a
// count, a sum, a clamp, a parameter and a value that is not a number.
type sqlDialect interface {
	// connect opens a connection, with no transaction begun (sqlConn.begin).
	connect(ctx context.Context, src Source, desc string) (sqlConn, error)
	// countIf counts the rows where pred holds.
	countIf(pred string) string
	// sum sums expr, 0 over no rows, as a double.
	sum(expr string) string
	// clamp clamps col between parameters lo and hi.
	clamp(col, lo, hi string) string
	// param is the n-th (1-based) parameter, a double of value v.
	param(n int, v float64) string
	// value is a numeric column's value as the fold over the loaded
	// column sees it (ClickHouse compares integers with doubles exactly,
	// where Open converts them to doubles first).
	value(col string) string
	// notNumber holds for a value a numeric column may not hold; float
	// says the column's stored type can hold NaN or infinities.
	notNumber(col string, float bool) string
	// text is col's value as the server writes it as text, by which a
	// group is split where values equal to the server read differently.
	text(col string) string
	// plainValue holds for a value of col whose text Open reads tells it
	// apart from the column's other values exactly as the server's
	// equality does (no spaces Open trims, one storage class), given the
	// column's stored type; "" when no value of that type is sure to.
	plainValue(col string, numeric, float bool) string
	// mixed is an aggregate, above 0 when col's values are stored in
	// classes the server tells apart and Open may read as one text.
	mixed(col string) string
	// countDistinct counts col's distinct values, as a double.
	countDistinct(col string) string
	// valuesAtRanks is a query of one column whose rows are v's values at
	// the 0-based ranks (strictly ascending) among from's n rows,
	// in that order; parameters are appended to args.
	valuesAtRanks(v, from string, ranks []int, n int, args *[]any) string
}

// sqlConn is one read-only connection to the source's database, which
// an Aggregator keeps between its aggregates (sqlAgg.conn).
type sqlConn interface {
	// begin starts an aggregate's read-only transaction, where the
	// database has them.
	begin(ctx context.Context) error
	// end ends it, and says whether the connection may serve another
	// aggregate: false when it is gone or its state is unknown.
	end(ctx context.Context) bool
	// header checks the columns of the (empty) result of q as the
	// source's reader does, and says which are stored as numbers (and
	// which of those as floating point).
	header(ctx context.Context, q, desc string, schema map[string]Kind) (b *builder, numeric, float []bool, err error)
	// row runs q and scans its one row of numbers.
	row(ctx context.Context, q string, args []any, dest []*float64) error
	// scan runs q with the parameters args (dialect.param's) and hands
	// each row to each as the source's reader converts its values.
	scan(ctx context.Context, q string, each func(row []cell) error, args ...any) error
	close(ctx context.Context)
}

// sqlAgg pushes each aggregate down as one query, which also counts the
// rows Open would refuse (a NULL, a non-number in a numeric column); when
// there are any, or the column is not stored as numbers, the table is
// streamed instead, so errors and inferred kinds are Open's.
type sqlAgg struct {
	streamAgg
	db sqlDialect

	mu     sync.Mutex
	idle   sqlConn // the connection kept between aggregates (aggregate_conn.go), or nil
	closed bool    // Close was called: keep no connection
}

// from is the FROM item and the SELECT list of the table Open reads.
func (a *sqlAgg) from() (from, cols string) {
	if a.src.Query != "" {
		q, _ := readOnlyQuery(a.src.Query) // Validate accepted it
		return "(" + q + ") AS cohort_q", "*"
	}
	return quoteTable(a.src.Table), selectColumns(a.schema)
}

// aggregate runs SELECT COUNT(*), <rows Open refuses>, aggs(column) and returns
// the row count and the aggregates; ok is false when the table must be
// streamed instead.
func (a *sqlAgg) aggregate(ctx context.Context, column string, aggs func(col string, next func(v float64) string) []string) (rows int, vals []float64, ok bool, err error) {
	return a.aggregateColumns(ctx, []string{column}, aggs)
}

// aggregateColumns is aggregate over several columns in one query:
// aggs(column) of each column in order, the first missing one named.
func (a *sqlAgg) aggregateColumns(ctx context.Context, columns []string, aggs func(col string, next func(v float64) string) []string) (rows int, vals []float64, ok bool, err error) {
	desc := a.opts.describe(a.src)
	from, cols := a.from()
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return 0, nil, false, err
	}
	defer a.release(ctx, conn)
	b, numeric, float, err := conn.header(ctx, "SELECT "+cols+" FROM "+from+" LIMIT 0", desc, a.schema)
	if err != nil {
		return 0, nil, false, err
	}
	target := make([]int, len(columns))
	for i := range target {
		target[i] = -1
	}
	var bad []string
	for j, c := range b.cols {
		q := quoteIdent(c.Name)
		bad = append(bad, q+" IS NULL")
		at := slices.Index(columns, c.Name)
		for i, name := range columns {
			if name == c.Name {
				target[i] = j
			}
		}
		if c.Kind == Numeric || at >= 0 {
			bad = append(bad, a.db.notNumber(q, float[b.idx[j]]))
		}
		if at >= 0 && (c.Kind != Numeric && c.Kind != "" || !numeric[b.idx[j]]) {
			return 0, nil, false, nil
		}
	}
	var args []any
	next := func(v float64) string {
		args = append(args, v)
		return a.db.param(len(args), v)
	}
	list := []string{a.db.countIf("1 = 1"), a.db.countIf(strings.Join(bad, " OR "))}
	missing := slices.Index(target, -1)
	if missing < 0 {
		for _, column := range columns {
			list = append(list, aggs(a.db.value(quoteIdent(column)), next)...)
		}
	}
	out := make([]float64, len(list))
	dest := make([]*float64, len(list))
	for i := range out {
		dest[i] = &out[i]
	}
	q := "SELECT " + strings.Join(list, ", ") + " FROM " + from
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q, "args", args)
	}
	if err := conn.row(ctx, q, args, dest); err != nil {
		return 0, nil, false, err
	}
	switch {
	case out[1] > 0:
		return 0, nil, false, nil // Open would refuse a row: the stream says which
	case missing >= 0:
		return 0, nil, false, a.noColumn(columns[missing])
	}
	return int(out[0]), out[2:], true, nil
}

// clamped is col clamped to clamp's bounds; an infinite bound is left
// out (no value Open loads is beyond it), so that no dialect is asked to
// write an infinity.
func (a *sqlAgg) clamped(col string, clamp *[2]float64, next func(float64) string) string {
	switch {
	case clamp == nil:
		return col
	case !math.IsInf(clamp[0], 0) && !math.IsInf(clamp[1], 0):
		return a.db.clamp(col, next(clamp[0]), next(clamp[1]))
	}
	// Each use is a parameter of its own: SQLite's are positional.
	if !math.IsInf(clamp[0], 0) {
		col = "CASE WHEN " + col + " < " + next(clamp[0]) + " THEN " + next(clamp[0]) + " ELSE " + col + " END"
	}
	if !math.IsInf(clamp[1], 0) {
		col = "CASE WHEN " + col + " > " + next(clamp[1]) + " THEN " + next(clamp[1]) + " ELSE " + col + " END"
	}
	return col
}

func (a *sqlAgg) ColumnSum(ctx context.Context, column string, clamp *[2]float64) (float64, int, error) {
	return firstSum(a.ColumnSums(ctx, []string{column}, clamp))
}

// ColumnSums is one query of every column's sum; the table is streamed
// where the query cannot answer as Open would.
func (a *sqlAgg) ColumnSums(ctx context.Context, columns []string, clamp *[2]float64) ([]float64, int, error) {
	rows, vals, ok, err := a.aggregateColumns(ctx, columns, func(col string, next func(float64) string) []string {
		return []string{a.db.sum(a.clamped(col, clamp, next))}
	})
	if err != nil || !ok {
		if err == nil {
			return a.streamAgg.ColumnSums(ctx, columns, clamp)
		}
		return nil, 0, err
	}
	return vals, rows, nil
}

func (a *sqlAgg) CountsAtMost(ctx context.Context, column string, thresholds []float64) (int, []int, error) {
	rows, vals, ok, err := a.aggregate(ctx, column, func(col string, next func(float64) string) []string {
		out := make([]string, len(thresholds))
		for i, t := range thresholds {
			out[i] = a.db.countIf(col + " <= " + next(t))
		}
		return out
	})
	if err != nil || !ok {
		if err == nil {
			return a.streamAgg.CountsAtMost(ctx, column, thresholds)
		}
		return 0, nil, err
	}
	counts := make([]int, len(vals))
	for i, v := range vals {
		counts[i] = int(v)
	}
	return rows, counts, nil
}

// pgDB pushes aggregates to PostgreSQL.
type pgDB struct{}

// graphicEnds matches a text that is empty or begins and ends with a
// printable ASCII character other than space: nothing Open trims
// (ClickHouse's test; PostgreSQL's is the same without a regular
// expression).
const graphicEnds = `^([!-~](.*[!-~])?)?$`

// plainValue: integers are plain; a float's texts split values the server
// holds equal (0 and -0, numeric 1.5 and 1.50); any other type is plain
// when its text has nothing to trim.
func (pgDB) plainValue(col string, numeric, float bool) string {
	switch {
	case numeric && float:
		return ""
	case numeric:
		return "TRUE"
	}
	// ascii() and right() cost a quarter of the regular expression
	// graphicEnds over 10,000,000 rows (2.3 s against 8.8 s with the row
	// count); the test is the same: empty, or printable ASCII at both ends.
	t := col + "::text"
	return "(" + t + " = '' OR ascii(" + t + ") BETWEEN 33 AND 126 AND ascii(right(" + t + ", 1)) BETWEEN 33 AND 126)"
}
func (pgDB) mixed(string) string             { return "0::float8" }
func (pgDB) countDistinct(col string) string { return "(COUNT(DISTINCT " + col + "))::float8" }

func (pgDB) countIf(pred string) string { return "(COUNT(*) FILTER (WHERE " + pred + "))::float8" }
func (pgDB) sum(expr string) string     { return "COALESCE(SUM(" + expr + ")::float8, 0)" }
func (pgDB) clamp(col, lo, hi string) string {
	return "LEAST(GREATEST(" + col + ", " + lo + "), " + hi + ")"
}
func (pgDB) param(n int, _ float64) string { return fmt.Sprintf("$%d::float8", n) }
func (pgDB) value(col string) string       { return col }
func (pgDB) text(col string) string        { return col + "::text" }

// notNumber: integers are always finite; NaN equals NaN in PostgreSQL.
func (pgDB) notNumber(col string, float bool) string {
	if !float {
		return "FALSE"
	}
	return col + "::float8 IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)"
}

func (pgDB) connect(ctx context.Context, src Source, desc string) (sqlConn, error) {
	conn, err := pgConnect(ctx, src, desc)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn: conn, desc: desc}, nil
}

type pgConn struct {
	conn *pgx.Conn
	tx   pgx.Tx // the running aggregate's, or nil between aggregates
	desc string
}

func (c *pgConn) begin(ctx context.Context) error {
	tx, err := c.conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("%w: %s: begin: %w", ErrSource, c.desc, pgError(c.conn, err))
	}
	c.tx = tx
	return nil
}

// end rolls the transaction back (read-only: nothing to keep); the
// connection serves again only when that left it idle, outside any
// transaction. A cancelled query closes it (pgx's reaction to a context
// ending mid-query), which the rollback then reports.
func (c *pgConn) end(ctx context.Context) bool {
	tx := c.tx
	c.tx = nil
	if tx == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgCleanupTimeout)
	defer cancel()
	return tx.Rollback(ctx) == nil && !c.conn.IsClosed() && c.conn.PgConn().TxStatus() == 'I'
}

// header reads q's columns by the simple protocol: a statement pgx
// prepared on a kept connection would fail once the table's columns
// changed ("cached plan must not change result type").
func (c *pgConn) header(ctx context.Context, q, desc string, schema map[string]Kind) (*builder, []bool, []bool, error) {
	rows, err := c.tx.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, pgError(c.conn, err))
	}
	fds := rows.FieldDescriptions()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, pgError(c.conn, err))
	}
	b, err := pgBuilder(desc, fds, schema, ReadOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	numeric, float := make([]bool, len(fds)), make([]bool, len(fds))
	for i, fd := range fds {
		_, numeric[i] = pgNumeric[fd.DataTypeOID]
		float[i] = fd.DataTypeOID == 700 || fd.DataTypeOID == 701 || fd.DataTypeOID == 1700
	}
	return b, numeric, float, nil
}

func (c *pgConn) row(ctx context.Context, q string, args []any, dest []*float64) error {
	d := make([]any, len(dest))
	for i := range dest {
		d[i] = dest[i]
	}
	if err := c.tx.QueryRow(ctx, q, args...).Scan(d...); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, c.desc, pgError(c.conn, err))
	}
	return nil
}

// scan reads q's values as text, as the reader's cursor does.
func (c *pgConn) scan(ctx context.Context, q string, each func([]cell) error, args ...any) error {
	rows, err := c.tx.Query(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, c.desc, pgError(c.conn, err))
	}
	defer rows.Close()
	var row []cell
	for rows.Next() {
		raw := rows.RawValues()
		row = row[:0]
		for _, v := range raw {
			if v == nil {
				row = append(row, cell{null: true})
			} else {
				row = append(row, cell{text: strings.TrimSpace(string(v))})
			}
		}
		if err := each(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, c.desc, pgError(c.conn, err))
	}
	return nil
}

func (c *pgConn) close(ctx context.Context) {
	if c.tx != nil {
		pgRollback(ctx, c.tx) // read-only: nothing to keep
	}
	pgClose(ctx, c.conn)
}

// sqliteDB pushes aggregates to SQLite.
type sqliteDB struct{}

// plainValue: a value of any column is plain when it is an integer, or a
// text with nothing Open trims; a real's text may merge what the server
// tells apart.
func (sqliteDB) plainValue(col string, _, _ bool) string {
	return "(typeof(" + col + ") = 'integer' OR typeof(" + col + ") = 'text' AND (" + col + " = '' OR " +
		col + " GLOB '[!-~]*' AND " + col + " GLOB '*[!-~]'))"
}

// mixed: SQLite holds 1 and '1' apart; Open reads both as 1.
func (sqliteDB) mixed(col string) string {
	return "CAST(MAX(COUNT(DISTINCT typeof(" + col + ")), 1) - 1 AS REAL)"
}
func (sqliteDB) countDistinct(col string) string {
	return "CAST(COUNT(DISTINCT " + col + ") AS REAL)"
}

func (sqliteDB) countIf(pred string) string {
	return "CAST(COALESCE(SUM(CASE WHEN " + pred + " THEN 1 ELSE 0 END), 0) AS REAL)"
}
func (sqliteDB) sum(expr string) string { return "TOTAL(" + expr + ")" }
func (sqliteDB) clamp(col, lo, hi string) string {
	return "MIN(MAX(" + col + ", " + lo + "), " + hi + ")"
}
func (sqliteDB) param(int, float64) string { return "?" }
func (sqliteDB) value(col string) string   { return col }

// text: SQLite groups 1 and 1.0 (and '1' apart); the storage class splits
// them and the reader's conversion merges what reads the same.
func (sqliteDB) text(col string) string { return "typeof(" + col + ")" }

// notNumber: SQLite keeps any value in any column, and text that reads
// as a number is for the stream to parse; NaN is stored as NULL.
func (sqliteDB) notNumber(col string, _ bool) string {
	return "typeof(" + col + ") NOT IN ('integer', 'real') OR abs(" + col + ") > 1.7976931348623157e308"
}

func (sqliteDB) connect(ctx context.Context, src Source, desc string) (sqlConn, error) {
	db, secrets, err := openSQLite(src, desc)
	if err != nil {
		return nil, err
	}
	return &sqliteConn{db: db, desc: desc, secrets: secrets}, nil
}

type sqliteConn struct {
	db      *sql.DB
	desc    string
	secrets []string
}

// begin and end: an SQLite source is opened read-only, so an aggregate
// needs no transaction; database/sql checks the connection it keeps.
func (c *sqliteConn) begin(context.Context) error { return nil }
func (c *sqliteConn) end(context.Context) bool    { return true }

func (c *sqliteConn) header(ctx context.Context, q, desc string, schema map[string]Kind) (*builder, []bool, []bool, error) {
	rows, err := c.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, nil, sourceError(desc, err, c.secrets)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, nil, nil, sourceError(desc, err, c.secrets)
	}
	names := make([]string, len(types))
	numeric, float := make([]bool, len(types)), make([]bool, len(types))
	for i, t := range types {
		names[i] = t.Name()
		numeric[i], float[i] = true, true // checked per value (notNumber)
	}
	b, err := newBuilder(desc, names, schema, ReadOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := sqliteCheckTypes(desc, b, types); err != nil {
		return nil, nil, nil, err
	}
	return b, numeric, float, nil
}

func (c *sqliteConn) row(ctx context.Context, q string, args []any, dest []*float64) error {
	if err := scanNumbers(c.db.QueryRowContext(ctx, q, args...).Scan, dest); err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	return nil
}

func (c *sqliteConn) scan(ctx context.Context, q string, each func([]cell) error, args ...any) error {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	defer rows.Close()
	if err := scanCells(rows, c.desc, sqlCell, each); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	return nil
}

func (c *sqliteConn) close(context.Context) { c.db.Close() }
