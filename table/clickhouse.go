package table

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ClickHouse is read through clickhouse-go's native protocol (TCP, port
// 9000 by default), which every server version still speaks, down to
// Debian's 18.16; its HTTP protocol sends a setting (client_protocol_version)
// that servers before 2020 refuse. ClickHouse has no read-only
// transaction: reads rely on the statement being one SELECT (the native
// protocol runs one statement per query, and readOnlyQuery refuses
// anything else) and on the user the DSN names, which the organisation
// should give `readonly = 1` in its profile (the tests read as such a
// user). The driver is not asked to set `readonly` itself: a user that
// already has it may not change it.

// chOpen opens the source's ClickHouse server (one connection, opened by
// the first query) and returns what a failure's text must not carry: the
// DSN and, from it, the password, the servers' addresses, user and
// database. Errors name the source as desc.
func chOpen(src Source, desc string) (*sql.DB, []string, error) {
	v, ok := os.LookupEnv(src.ClickHouseEnv)
	dsn := strings.TrimSpace(v)
	if !ok || dsn == "" {
		return nil, nil, fmt.Errorf("%w: %s: environment variable %s is not set", ErrSource, desc, src.ClickHouseEnv)
	}
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: the DSN does not parse (want clickhouse://user:password@host:9000/database)", ErrSource, desc)
	}
	if opts.Protocol != clickhouse.Native {
		return nil, nil, fmt.Errorf("%w: %s: only the native protocol (clickhouse://, port 9000) is supported", ErrSource, desc)
	}
	secrets := []string{dsn, opts.Auth.Password, opts.Auth.Username, opts.Auth.Database}
	for _, a := range opts.Addr {
		secrets = append(secrets, a)
		if h, _, err := net.SplitHostPort(a); err == nil {
			secrets = append(secrets, h)
		}
	}
	db := clickhouse.OpenDB(opts)
	db.SetMaxOpenConns(1)
	return db, secrets, nil
}

// chNumber says whether a ClickHouse column type holds numbers Open takes
// as numeric, and whether it may hold NaN or infinities.
func chNumber(typ string) (numeric, float bool) {
	for _, w := range []string{"Nullable(", "LowCardinality("} {
		if strings.HasPrefix(typ, w) && strings.HasSuffix(typ, ")") {
			typ = typ[len(w) : len(typ)-1]
		}
	}
	switch typ {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64":
		return true, false
	case "Float32", "Float64":
		return true, true
	}
	return strings.HasPrefix(typ, "Decimal"), false
}

// chBuilder checks a result's columns and their types.
func chBuilder(desc string, types []*sql.ColumnType, schema map[string]Kind, opts ReadOptions) (*builder, []bool, []bool, error) {
	names := make([]string, len(types))
	numeric, float := make([]bool, len(types)), make([]bool, len(types))
	for i, t := range types {
		names[i] = t.Name()
		numeric[i], float[i] = chNumber(t.DatabaseTypeName())
	}
	b, err := newBuilder(desc, names, schema, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	for j, c := range b.cols {
		if c.Kind == Numeric && !numeric[b.idx[j]] {
			return nil, nil, nil, fmt.Errorf("%w: %s: column %q has the non-numeric ClickHouse type %s, but the schema says numeric",
				ErrSource, desc, c.Name, types[b.idx[j]].DatabaseTypeName())
		}
	}
	return b, numeric, float, nil
}

// chCell converts a value the driver scanned; numbers stay numbers.
func chCell(v any) cell {
	switch x := v.(type) {
	case int8:
		return chInt(int64(x))
	case int16:
		return chInt(int64(x))
	case int32:
		return chInt(int64(x))
	case uint8:
		return chInt(int64(x))
	case uint16:
		return chInt(int64(x))
	case uint32:
		return chInt(int64(x))
	case uint64:
		return cell{isNum: true, num: float64(x), text: strconv.FormatUint(x, 10)}
	case float32:
		return cell{isNum: true, num: float64(x)}
	case fmt.Stringer: // decimal.Decimal
		return cell{text: strings.TrimSpace(x.String())}
	}
	return sqlCell(v)
}

func chInt(x int64) cell {
	return cell{isNum: true, num: float64(x), text: strconv.FormatInt(x, 10)}
}

// selectQuery is the statement a database reader runs: the source's
// query, or the schema's columns of its table.
func selectQuery(src Source, schema map[string]Kind) (string, error) {
	if src.Query == "" {
		return "SELECT " + selectColumns(schema) + " FROM " + quoteTable(src.Table), nil
	}
	return readOnlyQuery(src.Query)
}

// readClickHouse streams a table or query: the native protocol sends the
// result in blocks (65,536 rows by default), so the client holds one
// block at a time.
func readClickHouse(ctx context.Context, src Source, name string, schema map[string]Kind, opts ReadOptions) (*Table, error) {
	desc := opts.describe(src)
	q, err := selectQuery(src, schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, err)
	}
	db, secrets, err := chOpen(src, desc)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, sourceError(desc, err, secrets)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, sourceError(desc, err, secrets)
	}
	b, _, _, err := chBuilder(desc, types, schema, opts)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, desc, chCell, b); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, sourceError(desc, err, secrets)
	}
	return b.finish(name), nil
}

// chDB pushes aggregates to ClickHouse. Servers before 19.x have no query
// parameters, so a bound or threshold is written into the query as the
// shortest decimal that reads back as the same double (strconv 'g', -1,
// which ClickHouse parses exactly; zero and subnormals as their bits),
// never as text a job supplied.
type chDB struct{}

func (chDB) countIf(pred string) string { return "toFloat64(countIf(" + pred + "))" }
func (chDB) sum(expr string) string     { return "sum(" + expr + ")" }
func (chDB) clamp(col, lo, hi string) string {
	return "least(greatest(" + col + ", " + lo + "), " + hi + ")"
}
func (chDB) param(_ int, v float64) string {
	if math.Abs(v) >= 0x1p-1022 {
		return "toFloat64(" + strconv.FormatFloat(v, 'g', -1, 64) + ")"
	}
	// The parser refuses a subnormal literal (strtod's underflow) and
	// reads -0 as the integer 0: those are written as their bits.
	b := binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
	return "reinterpretAsFloat64(unhex('" + hex.EncodeToString(b) + "'))"
}
func (chDB) value(col string) string { return "toFloat64(" + col + ")" }

// plainValue: as PostgreSQL's (pgDB.plainValue), the text by toString.
func (chDB) plainValue(col string, numeric, float bool) string {
	switch {
	case numeric && float:
		return ""
	case numeric:
		return "1 = 1"
	}
	return "match(toString(" + col + "), '" + graphicEnds + "')"
}
func (chDB) mixed(string) string             { return "toFloat64(0)" }
func (chDB) countDistinct(col string) string { return "toFloat64(uniqExact(" + col + "))" }
func (chDB) text(col string) string          { return "toString(" + col + ")" }

// notNumber: integers and decimals are always finite.
func (chDB) notNumber(col string, float bool) string {
	if !float {
		return "0 = 1"
	}
	return "NOT isFinite(" + col + ")"
}

func (chDB) connect(_ context.Context, src Source, desc string) (sqlConn, error) {
	db, secrets, err := chOpen(src, desc)
	if err != nil {
		return nil, err
	}
	return &chConn{db: db, desc: desc, secrets: secrets}, nil
}

type chConn struct {
	db      *sql.DB
	desc    string
	secrets []string
}

// begin and end: ClickHouse has no transactions (reads rely on the
// statement and the user, above); database/sql drops a connection the
// driver finds broken and opens another.
func (c *chConn) begin(context.Context) error { return nil }
func (c *chConn) end(context.Context) bool    { return true }

func (c *chConn) header(ctx context.Context, q, desc string, schema map[string]Kind) (*builder, []bool, []bool, error) {
	rows, err := c.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, nil, sourceError(desc, err, c.secrets)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, nil, nil, sourceError(desc, err, c.secrets)
	}
	if err := chDrain(rows); err != nil {
		return nil, nil, nil, sourceError(desc, err, c.secrets)
	}
	return chBuilder(desc, types, schema, ReadOptions{})
}

// chDrain reads a result to its end and closes it, so that the query
// ends at the server's end of stream (with its errors) rather than by the
// driver cancelling it when the result is closed early.
func chDrain(rows *sql.Rows) error {
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// row runs q; its parameters are already in its text (chDB.param).
func (c *chConn) row(ctx context.Context, q string, _ []any, dest []*float64) error {
	rows, err := c.db.QueryContext(ctx, q)
	if err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	defer rows.Close()
	if !rows.Next() {
		err = rows.Err()
		if err == nil {
			err = sql.ErrNoRows
		}
		return sourceError(c.desc, err, c.secrets)
	}
	if err := scanNumbers(rows.Scan, dest); err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	if err := chDrain(rows); err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	return nil
}

// scan: ClickHouse's parameters are written into q (chDB.param).
func (c *chConn) scan(ctx context.Context, q string, each func([]cell) error, _ ...any) error {
	rows, err := c.db.QueryContext(ctx, q)
	if err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	defer rows.Close()
	if err := scanCells(rows, c.desc, chCell, each); err != nil {
		return err
	}
	if err := chDrain(rows); err != nil {
		return sourceError(c.desc, err, c.secrets)
	}
	return nil
}

func (c *chConn) close(context.Context) { c.db.Close() }
