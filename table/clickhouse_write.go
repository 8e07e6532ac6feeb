package table

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
)

// writeClickHouse creates dst as a MergeTree table (numeric columns
// Float64, the others String) and fills it. ClickHouse has no
// transactions: the rows go into a table of a fresh name, which is renamed
// to dst only when complete (RENAME fails if dst exists meanwhile), and
// dropped on any error, so a failed write leaves nothing under dst.
func writeClickHouse(ctx context.Context, dst Source, t *Table) error {
	desc := dst.String()
	db, secrets, err := chOpen(dst, desc)
	if err != nil {
		return err
	}
	defer db.Close()
	var exists uint8
	if err := db.QueryRowContext(ctx, "EXISTS TABLE "+quoteTable(dst.Table)).Scan(&exists); err != nil {
		return sourceError(desc, err, secrets)
	}
	if exists != 0 {
		return fmt.Errorf("%w: %s", ErrExists, dst)
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, desc, err)
	}
	tmp := dst.Table + "_cohort_tmp_" + hex.EncodeToString(suffix[:])
	defs := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		typ := "String"
		if c.Kind == Numeric {
			typ = "Float64"
		}
		defs[j] = quoteIdent(c.Name) + " " + typ
	}
	create := "CREATE TABLE " + quoteTable(tmp) + " (" + strings.Join(defs, ", ") + ") ENGINE = MergeTree ORDER BY tuple()"
	if _, err := db.ExecContext(ctx, create); err != nil {
		return sourceError(desc, err, secrets)
	}
	done := false
	defer func() {
		if !done {
			db.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+quoteTable(tmp))
		}
	}()
	if err := chInsert(ctx, db, tmp, t); err != nil {
		return sourceError(desc, err, secrets)
	}
	if _, err := db.ExecContext(ctx, "RENAME TABLE "+quoteTable(tmp)+" TO "+quoteTable(dst.Table)); err != nil {
		return sourceError(desc, err, secrets)
	}
	done = true
	return nil
}

// chInsertBytes bounds one INSERT statement: the server refuses a query
// longer than its max_query_size (256 KiB by default) before it parses
// it, and the rows are literals in the query.
const chInsertBytes = 4 << 10

// chInsert sends t's rows to table name by INSERT ... SELECT over an array
// of row tuples, as many rows per statement as fit chInsertBytes (a row
// longer than that goes alone, and a server with the default limit
// refuses it), the values written as
// literals: numbers as the pushed-down queries write their parameters
// (chDB.param: exact), strings quoted with backslash escapes. The native protocol's
// data blocks (the driver's batch INSERT, and INSERT ... VALUES) wait on
// a header that servers before 19.x do not send; INSERT ... SELECT sends
// no data blocks.
func chInsert(ctx context.Context, db *sql.DB, name string, t *Table) error {
	elems := make([]string, len(t.Columns))
	for j := range t.Columns {
		elems[j] = fmt.Sprintf("tupleElement(r, %d)", j+1)
	}
	head := "INSERT INTO " + quoteTable(name) + " SELECT " + strings.Join(elems, ", ") + " FROM (SELECT arrayJoin(["
	var q, row strings.Builder
	rows := 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		q.WriteString("]) AS r)")
		_, err := db.ExecContext(ctx, q.String())
		q.Reset()
		rows = 0
		return err
	}
	for i := range t.NumRows() {
		row.Reset()
		row.WriteString("tuple(")
		for j, c := range t.Columns {
			if j > 0 {
				row.WriteString(", ")
			}
			if c.Kind == Numeric {
				row.WriteString(chDB{}.param(0, c.Num[i]))
			} else {
				row.WriteString(chString(c.Str[i]))
			}
		}
		row.WriteByte(')')
		if rows > 0 && q.Len()+2+row.Len()+len("]) AS r)") > chInsertBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		if rows == 0 {
			q.WriteString(head)
		} else {
			q.WriteString(", ")
		}
		q.WriteString(row.String())
		rows++
	}
	return flush()
}

// chString is s as a ClickHouse string literal.
func chString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
