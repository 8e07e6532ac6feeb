package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pbnjay/memory"
)

// Source says where a table's rows live. Exactly one of Path, SQLite,
// PostgresEnv, PostgresFile and ClickHouseEnv is set:
//
//   - Path: a CSV file, or a Parquet file when the name ends in .parquet;
//   - SQLite: an SQLite database file, read-only, with Table or Query;
//   - PostgresEnv: the name of an environment variable holding a PostgreSQL
//     connection string, with Table or Query;
//   - PostgresFile: a file of mode 0600 holding that connection string;
//   - ClickHouseEnv: the name of an environment variable holding a
//     ClickHouse DSN (clickhouse://user:password@host:9000/database), with
//     Table or Query; a Distributed table is aggregated by its cluster.
//
// Query is a single read-only SELECT. Connection strings are read when the
// table is opened and never appear in errors (String describes a source
// without them).
type Source struct {
	Path         string `yaml:"path,omitempty" msgpack:"path,omitempty" json:"path,omitempty"`
	SQLite       string `yaml:"sqlite,omitempty" msgpack:"sqlite,omitempty" json:"sqlite,omitempty"`
	PostgresEnv  string `yaml:"postgres_env,omitempty" msgpack:"postgres_env,omitempty" json:"postgres_env,omitempty"`
	PostgresFile string `yaml:"postgres_file,omitempty" msgpack:"postgres_file,omitempty" json:"postgres_file,omitempty"`
	// ClickHouseEnv names the environment variable holding a ClickHouse DSN.
	ClickHouseEnv string `yaml:"clickhouse_env,omitempty" msgpack:"clickhouse_env,omitempty" json:"clickhouse_env,omitempty"`
	Table         string `yaml:"table,omitempty" msgpack:"table,omitempty" json:"table,omitempty"`
	Query         string `yaml:"query,omitempty" msgpack:"query,omitempty" json:"query,omitempty"`
	// MaxRows, when positive, refuses to load more rows of this source
	// into memory (Open), with ErrTooLarge. A node sets it from its
	// max_table_rows unless its catalogue gives the table its own. What
	// the Aggregator pushes down or streams is bounded by its result, not
	// by the table, so MaxRows does not apply there.
	MaxRows int64 `yaml:"max_rows,omitempty" msgpack:"max_rows,omitempty" json:"max_rows,omitempty"`
}

// SourceType is the kind of store a Source reads.
type SourceType string

// Source types.
const (
	CSV      SourceType = "csv"
	Parquet  SourceType = "parquet"
	SQLite   SourceType = "sqlite"
	Postgres SourceType = "postgres"
	// ClickHouse is a ClickHouse server, or a cluster through one of its
	// servers (native protocol).
	ClickHouse SourceType = "clickhouse"
)

// ErrSource marks an invalid or unreadable source: a missing file or
// database, a refused connection, a failing query, a type mismatch.
var ErrSource = errors.New("table: bad source")

// identifier is a plain SQL table name, optionally schema-qualified.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// Type returns the source's type; Validate must have accepted it.
func (s Source) Type() SourceType {
	switch {
	case s.SQLite != "":
		return SQLite
	case s.PostgresEnv != "" || s.PostgresFile != "":
		return Postgres
	case s.ClickHouseEnv != "":
		return ClickHouse
	case strings.EqualFold(filepath.Ext(s.Path), ".parquet"):
		return Parquet
	default:
		return CSV
	}
}

// Validate checks that exactly one store is named and that a database
// source has a plain table name or a single read-only SELECT.
func (s Source) Validate() error {
	n := 0
	for _, v := range []string{s.Path, s.SQLite, s.PostgresEnv, s.PostgresFile, s.ClickHouseEnv} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: give exactly one of path, sqlite, postgres_env, postgres_file and clickhouse_env", ErrSource)
	}
	if s.MaxRows < 0 {
		return fmt.Errorf("%w: max_rows must not be negative", ErrSource)
	}
	if s.Path != "" {
		if s.Table != "" || s.Query != "" {
			return fmt.Errorf("%w: a file source (path) takes no table or query", ErrSource)
		}
		return nil
	}
	if (s.Table == "") == (s.Query == "") {
		return fmt.Errorf("%w: %s: give exactly one of table and query", ErrSource, s)
	}
	if s.Table != "" && !identifier.MatchString(s.Table) {
		return fmt.Errorf("%w: %s: table name must be letters, digits and _ (optionally schema.table)", ErrSource, s)
	}
	if s.Query != "" {
		if _, err := readOnlyQuery(s.Query); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSource, s, err)
		}
	}
	if s.PostgresEnv != "" && !identifier.MatchString(s.PostgresEnv) {
		return fmt.Errorf("%w: postgres_env %q is not an environment variable name", ErrSource, s.PostgresEnv)
	}
	if s.ClickHouseEnv != "" && !identifier.MatchString(s.ClickHouseEnv) {
		return fmt.Errorf("%w: clickhouse_env %q is not an environment variable name", ErrSource, s.ClickHouseEnv)
	}
	return nil
}

// readOnlyQuery trims a query and one trailing semicolon, and refuses
// anything but a single SELECT (WITH ... SELECT, VALUES and TABLE too).
// The readers also run it read-only, so this is for a clear message.
func readOnlyQuery(q string) (string, error) {
	q = strings.TrimSpace(q)
	q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
	if strings.Contains(q, ";") {
		return "", errors.New("query must be a single statement (no ';')")
	}
	first := strings.ToUpper(strings.Fields(q + " x")[0])
	switch first {
	case "SELECT", "WITH", "VALUES", "TABLE":
		return q, nil
	}
	return "", errors.New("query must be a read-only SELECT")
}

// String describes the source for messages: the file, database file or
// environment variable, and the table or query. It never holds a
// connection string.
func (s Source) String() string {
	var b strings.Builder
	switch {
	case s.SQLite != "":
		fmt.Fprintf(&b, "sqlite %s", s.SQLite)
	case s.PostgresEnv != "":
		fmt.Fprintf(&b, "postgres (connection from $%s)", s.PostgresEnv)
	case s.PostgresFile != "":
		fmt.Fprintf(&b, "postgres (connection from file %s)", s.PostgresFile)
	case s.ClickHouseEnv != "":
		fmt.Fprintf(&b, "clickhouse (connection from $%s)", s.ClickHouseEnv)
	default:
		return s.Path
	}
	if s.Table != "" {
		fmt.Fprintf(&b, " table %s", s.Table)
	}
	if s.Query != "" {
		q := strings.Join(strings.Fields(s.Query), " ")
		if len(q) > 200 {
			q = q[:200] + "..."
		}
		fmt.Fprintf(&b, " query %q", q)
	}
	return b.String()
}

// ReadOptions tune reading.
type ReadOptions struct {
	// MaxBytes is the memory budget for one loaded table (values and their
	// text); a larger table is refused with ErrTooLarge. Zero: half the
	// machine's memory.
	MaxBytes int64
	// BatchRows is how many rows a PostgreSQL cursor fetches at a time.
	// Zero: 10000.
	BatchRows int
	// Label is how errors name the source. Empty: by its path or
	// description (Source.String). A node passes Label, so that no error
	// a job may report carries where the organisation keeps its files.
	Label string
	// Log, when set, receives at debug level each query an Aggregator
	// pushes down to a database, with its parameters. It is the node's
	// own log (job.Participant.Log), never anything the consortium
	// sees: a query names the organisation's tables and columns.
	Log *slog.Logger

	// sink, set by the Aggregator's streaming path, receives the values
	// of the columns it reads instead of a Table keeping them.
	sink rowSink
	// maxRows is the source's MaxRows, which Open passes on.
	maxRows int64
}

// describe is how errors name src.
func (o ReadOptions) describe(src Source) string {
	if o.Label != "" {
		return o.Label
	}
	return src.String()
}

// Label names src by its files' base names, its database table and
// whether a query selects it: what the owner needs to find the fault,
// without the directories nor the query's text (both the operator's).
func Label(src Source) string {
	s := src
	for _, f := range []*string{&s.Path, &s.SQLite, &s.PostgresFile} {
		if *f != "" {
			*f = filepath.Base(*f)
		}
	}
	s.Query = ""
	if src.Query != "" {
		return s.String() + " (query)"
	}
	return s.String()
}

// fileError reports a failure to open or stat the file of the source
// named desc. The operating system's error repeats the full path; only
// its cause is kept.
func fileError(desc string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrSource, desc, WithoutPath(err))
}

// WithoutPath returns the cause of a file system error without the path
// it names (an organisation's directory layout), for failure texts that
// reach every member's log; any other error is returned as it is.
func WithoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (o ReadOptions) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return defaultMaxBytes()
}

// defaultMaxBytes is half the machine's memory, or 1 GiB when unknown.
func defaultMaxBytes() int64 {
	if m := memory.TotalMemory(); m > 0 {
		return int64(m / 2)
	}
	return 1 << 30
}

// Open loads the table from src as table name, checking it against schema
// as Read does (nil: every column, kinds inferred). File paths must already
// be resolved by the caller (see job.ResolveSource); Open reads what it is
// given. ctx bounds database connections and queries.
func Open(ctx context.Context, src Source, name string, schema map[string]Kind, opts ReadOptions) (*Table, error) {
	if err := src.Validate(); err != nil {
		return nil, err
	}
	desc := opts.describe(src)
	opts.maxRows = src.MaxRows
	if schema != nil {
		if err := checkSchema(desc, schema); err != nil {
			return nil, err
		}
	}
	switch src.Type() {
	case Parquet:
		return readParquet(ctx, src, name, schema, opts)
	case SQLite:
		return readSQLite(ctx, src, name, schema, opts)
	case Postgres:
		return readPostgres(ctx, src, name, schema, opts)
	case ClickHouse:
		return readClickHouse(ctx, src, name, schema, opts)
	default:
		f, err := os.Open(src.Path)
		if err != nil {
			return nil, fileError(desc, err)
		}
		defer f.Close()
		return read(f, desc, name, schema, opts)
	}
}

// selectColumns is the SELECT list for a table source: the schema's columns
// only (a party's other columns never leave the database), or every column.
func selectColumns(schema map[string]Kind) string {
	if schema == nil {
		return "*"
	}
	cols := sortedKeys(schema)
	for i, c := range cols {
		cols[i] = quoteIdent(c)
	}
	return strings.Join(cols, ", ")
}

// quoteIdent quotes an SQL identifier (a.b becomes "a"."b" when it is a
// qualified table name checked by identifier).
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func quoteTable(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}
