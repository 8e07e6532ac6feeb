package table

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // pure-Go driver "sqlite", no cgo
)

// sqliteDSN opens path read-only, with writes refused by the connection
// too (query_only), so a query cannot change the organisation's data.
func sqliteDSN(path string, readOnly bool) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // a relative path would read as the URI's authority
	}
	u := url.URL{Scheme: "file", Path: path}
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	}
	q.Add("_pragma", "busy_timeout(5000)")
	u.RawQuery = q.Encode()
	return u.String()
}

func readSQLite(ctx context.Context, src Source, name string, schema map[string]Kind, opts ReadOptions) (*Table, error) {
	desc := opts.describe(src)
	db, secrets, err := openSQLite(src, desc)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	q := src.Query
	if q == "" {
		q = "SELECT " + selectColumns(schema) + " FROM " + quoteTable(src.Table)
	} else if q, err = readOnlyQuery(q); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, err)
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, sourceError(desc, err, secrets)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, sourceError(desc, err, secrets)
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name()
	}
	b, err := newBuilder(desc, names, schema, opts)
	if err != nil {
		return nil, err
	}
	if err := sqliteCheckTypes(desc, b, types); err != nil {
		return nil, err
	}
	if err := scanRows(rows, desc, sqlCell, b); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, sourceError(desc, err, secrets)
	}
	return b.finish(name), nil
}

// sqliteCheckTypes refuses a column declared as text or blob, which cannot
// hold the numbers a numeric column needs, before any row is read.
func sqliteCheckTypes(desc string, b *builder, types []*sql.ColumnType) error {
	for j, c := range b.cols {
		if c.Kind != Numeric {
			continue
		}
		decl := strings.ToUpper(types[b.idx[j]].DatabaseTypeName())
		for _, t := range []string{"CHAR", "CLOB", "TEXT", "BLOB"} {
			if strings.Contains(decl, t) {
				return fmt.Errorf("%w: %s: column %q is declared %s, but the schema says numeric", ErrSource, desc, c.Name, decl)
			}
		}
	}
	return nil
}

// sqlCell converts a database/sql value; numbers stay numbers.
func sqlCell(v any) cell {
	switch x := v.(type) {
	case nil:
		return cell{null: true}
	case int64:
		return cell{isNum: true, num: float64(x), text: strconv.FormatInt(x, 10)}
	case float64:
		return cell{isNum: true, num: x}
	case string:
		return cell{text: strings.TrimSpace(x)}
	case []byte:
		return cell{text: strings.TrimSpace(string(x))}
	case bool:
		return cell{text: strconv.FormatBool(x)}
	case time.Time:
		return cell{text: x.UTC().Format(time.RFC3339Nano)}
	default:
		return cell{text: fmt.Sprint(x)}
	}
}

// openSQLite opens an SQLite source read-only, one connection, and
// returns what a failure's text must not carry: where the organisation
// keeps the database file. Opening a missing file read-only fails with a
// vague "out of memory"; it says what is wrong instead.
func openSQLite(src Source, desc string) (*sql.DB, []string, error) {
	if st, err := os.Stat(src.SQLite); err != nil {
		return nil, nil, fileError(desc, err)
	} else if st.IsDir() {
		return nil, nil, fmt.Errorf("%w: %s: is a directory, want an SQLite database file", ErrSource, desc)
	}
	dsn := sqliteDSN(src.SQLite, true)
	secrets := []string{dsn, src.SQLite}
	if abs, err := filepath.Abs(src.SQLite); err == nil {
		secrets = append(secrets, abs, filepath.Dir(abs))
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, sourceError(desc, err, secrets)
	}
	db.SetMaxOpenConns(1)
	return db, secrets, nil
}

// scanRows feeds a database/sql result's rows to b, each
// value turned into a cell by conv: the one row loop of the database/sql
// sources (SQLite, ClickHouse). The caller checks rows.Err after it, in
// its driver's terms.
func scanRows(rows *sql.Rows, desc string, conv func(any) cell, b *builder) error {
	n := 0
	where := func(int) string { return fmt.Sprintf("%s: row %d", desc, n) }
	return scanCells(rows, desc, conv, func(row []cell) error {
		n++
		return b.add(row, where)
	})
}

// scanCells hands each row of a database/sql result to each, its values
// turned into cells by conv.
func scanCells(rows *sql.Rows, desc string, conv func(any) cell, each func([]cell) error) error {
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, desc, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	row := make([]cell, len(cols))
	n := 0
	for rows.Next() {
		n++
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("%w: %s: row %d: %w", ErrSource, desc, n, err)
		}
		for i, v := range vals {
			row[i] = conv(v)
		}
		if err := each(row); err != nil {
			return err
		}
	}
	return nil
}
