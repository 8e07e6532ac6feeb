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
		return chError(desc, err, secrets)
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
		return chError(desc, err, secrets)
	}
	done := false
	defer func() {
		if !done {
			db.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+quoteTable(tmp))
		}
	}()
	if err := chInsert(ctx, db, tmp, t); err != nil {
		return chError(desc, err, secrets)
	}
	if _, err := db.ExecContext(ctx, "RENAME TABLE "+quoteTable(tmp)+" TO "+quoteTable(dst.Table)); err != nil {
		return chError(desc, err, secrets)
	}
	done = true
	return nil
}

// chInsertRows is how many rows one INSERT statement carries.
const chInsertRows = 10000

// chInsert sends t's rows to table name by INSERT ... SELECT over an array
// of row tuples, chInsertRows rows per statement, the values written as
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
	var q strings.Builder
	for start := 0; start < t.NumRows(); start += chInsertRows {
		q.Reset()
		q.WriteString(head)
		for i := start; i < min(start+chInsertRows, t.NumRows()); i++ {
			if i > start {
				q.WriteString(", ")
			}
			q.WriteString("tuple(")
			for j, c := range t.Columns {
				if j > 0 {
					q.WriteString(", ")
				}
				if c.Kind == Numeric {
					q.WriteString(chDB{}.param(0, c.Num[i]))
				} else {
					q.WriteString(chString(c.Str[i]))
				}
			}
			q.WriteByte(')')
		}
		q.WriteString("]) AS r)")
		if _, err := db.ExecContext(ctx, q.String()); err != nil {
			return err
		}
	}
	return nil
}

// chString is s as a ClickHouse string literal.
func chString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
