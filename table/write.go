package table

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/parquet-go/parquet-go"
)

// ErrExists means a write would overwrite an existing file or table.
var ErrExists = errors.New("table: destination exists")

// Write stores t at dst: a new CSV or Parquet file, or a new table in an
// SQLite database (created if missing), in PostgreSQL or in ClickHouse. Numeric columns
// become double precision, the others text. Write never overwrites: an
// existing file or table is ErrExists. It leaves nothing behind on error
// (files are written beside the target and renamed; database tables are
// created and filled in one transaction).
func Write(ctx context.Context, dst Source, t *Table) error {
	if err := dst.Validate(); err != nil {
		return err
	}
	if dst.Query != "" {
		return fmt.Errorf("%w: %s: cannot write to a query; name a table", ErrSource, dst)
	}
	switch dst.Type() {
	case CSV:
		return writeFile(dst.Path, func(w io.Writer) error { return writeCSV(w, t) })
	case Parquet:
		return writeFile(dst.Path, func(w io.Writer) error { return writeParquet(w, t) })
	case SQLite:
		return writeSQLite(ctx, dst, t)
	case ClickHouse:
		return writeClickHouse(ctx, dst, t)
	default:
		return writePostgres(ctx, dst, t)
	}
}

// writeFile writes path through a temporary file in its directory.
func writeFile(path string, fill func(io.Writer) error) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSource, err)
	}
	tmp := f.Name()
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		// Link, not rename: a file created meanwhile is not replaced.
		err = os.Link(tmp, path)
		if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("%w: %s", ErrExists, path)
		}
	}
	os.Remove(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeCSV(w io.Writer, t *Table) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		rec[j] = c.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for i := 0; i < t.NumRows(); i++ {
		for j, c := range t.Columns {
			rec[j] = c.Str[i]
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeParquet(w io.Writer, t *Table) error {
	group := parquet.Group{}
	for _, c := range t.Columns {
		if c.Kind == Numeric {
			group[c.Name] = parquet.Leaf(parquet.DoubleType)
		} else {
			group[c.Name] = parquet.String()
		}
	}
	schema := parquet.NewSchema(t.Name, group)
	// The schema orders columns by name; map each to the table's column.
	fields := schema.Fields()
	order := make([]*Column, len(fields))
	for i, f := range fields {
		c, err := t.Column(f.Name())
		if err != nil {
			return err
		}
		order[i] = c
	}
	pw := parquet.NewGenericWriter[any](w, schema)
	const batch = 1024
	rows := make([]parquet.Row, 0, batch)
	for i := 0; i < t.NumRows(); i++ {
		r := make(parquet.Row, len(order))
		for j, c := range order {
			var v parquet.Value
			if c.Kind == Numeric {
				v = parquet.DoubleValue(c.Num[i])
			} else {
				v = parquet.ByteArrayValue([]byte(c.Str[i]))
			}
			r[j] = v.Level(0, 0, j)
		}
		rows = append(rows, r)
		if len(rows) == batch {
			if _, err := pw.WriteRows(rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	if _, err := pw.WriteRows(rows); err != nil {
		return err
	}
	return pw.Close()
}

func sqlType(c *Column, numeric string) string {
	if c.Kind == Numeric {
		return numeric
	}
	return "TEXT"
}

func createTable(dst string, t *Table, numeric string) string {
	defs := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		defs[j] = quoteIdent(c.Name) + " " + sqlType(c, numeric) + " NOT NULL"
	}
	return "CREATE TABLE " + quoteTable(dst) + " (" + strings.Join(defs, ", ") + ")"
}

// rowValues returns row i as database values.
func rowValues(t *Table, i int, vals []any) []any {
	for j, c := range t.Columns {
		if c.Kind == Numeric {
			vals[j] = c.Num[i]
		} else {
			vals[j] = c.Str[i]
		}
	}
	return vals
}

func writeSQLite(ctx context.Context, dst Source, t *Table) (err error) {
	path := dst.SQLite
	_, statErr := os.Stat(path)
	fresh := errors.Is(statErr, os.ErrNotExist)
	target := path
	if fresh {
		// A new database is built beside the target and linked into place,
		// so a failed write leaves no file.
		f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSource, err)
		}
		f.Close()
		target = f.Name()
		defer os.Remove(target)
	} else if statErr != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, statErr)
	}
	db, err := sql.Open("sqlite", sqliteDSN(target, false))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, createTable(dst.Table, t, "REAL")); err != nil {
		if strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("%w: %s", ErrExists, dst)
		}
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ")
	ins, err := tx.PrepareContext(ctx, "INSERT INTO "+quoteTable(dst.Table)+" VALUES ("+marks+")")
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
	}
	defer ins.Close()
	vals := make([]any, len(t.Columns))
	for i := 0; i < t.NumRows(); i++ {
		if _, err := ins.ExecContext(ctx, rowValues(t, i, vals)...); err != nil {
			return fmt.Errorf("%w: %s: row %d: %w", ErrSource, dst, i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
	}
	if fresh {
		if err := os.Link(target, path); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s", ErrExists, path)
			}
			return fmt.Errorf("%w: %s: %w", ErrSource, dst, err)
		}
	}
	return nil
}

func writePostgres(ctx context.Context, dst Source, t *Table) error {
	conn, err := pgConnect(ctx, dst, dst.String())
	if err != nil {
		return err
	}
	defer pgClose(ctx, conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%w: %s: begin: %w", ErrSource, dst, pgError(conn, err))
	}
	defer pgRollback(ctx, tx) // after Commit, a no-op
	if _, err := tx.Exec(ctx, createTable(dst.Table, t, "DOUBLE PRECISION")); err != nil {
		var pe interface{ SQLState() string }
		if errors.As(err, &pe) && pe.SQLState() == "42P07" {
			return fmt.Errorf("%w: %s", ErrExists, dst)
		}
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, pgError(conn, err))
	}
	cols := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		cols[j] = c.Name
	}
	i := 0
	vals := make([]any, len(t.Columns))
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == t.NumRows() {
			return nil, nil
		}
		i++
		return rowValues(t, i-1, vals), nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier(strings.Split(dst.Table, ".")), cols, src); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, dst, pgError(conn, err))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%w: %s: commit: %w", ErrSource, dst, pgError(conn, err))
	}
	return nil
}
