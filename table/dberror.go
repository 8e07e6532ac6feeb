package table

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// The errors of database sources travel in a job's failure text to the
// coordinator and into every member's Raft log, so none may carry a value
// of a table, the query's text, nor where and as whom the organisation's
// database runs. dbError is the one place that tells a driver's error so.

// sourceError is err of the database source named desc, told as dbError
// tells it.
func sourceError(desc string, err error, secrets []string) error {
	return fmt.Errorf("%w: %s: %w", ErrSource, desc, dbError(err, secrets))
}

// dbError is err of a database source with secrets (a connection string,
// a password, a host, a user, a database file's path) and the addresses
// network and file errors carry left out of its text, and a server's
// error told by its code and the first words of its message: the rest
// may quote the data (PostgreSQL's `invalid input syntax for type double
// precision: "x"`, ClickHouse's "Cannot parse string 'x' as Float64",
// SQLite's "bad JSON path: 'x'") or the query. A server keeps the whole
// message in its log (SQLite, a library, has none); errors.As still finds
// the driver's error.
func dbError(err error, secrets []string) error {
	var (
		pe *pgconn.PgError
		ce *clickhouse.Exception
		se *sqlite.Error
	)
	switch {
	case errors.As(err, &pe):
		err = &retold{fmt.Sprintf("%s (SQLSTATE %s; the rest of the server's message is in its log)", firstWords(pe.Message), pe.Code), pe}
	case errors.As(err, &ce):
		err = &retold{fmt.Sprintf("code: %d, message: %s (the rest of the server's message is in its log)", ce.Code, firstWords(ce.Message)), ce}
	case errors.As(err, &se):
		err = &retold{sqliteText(se), se}
	}
	return &redacted{err, secrets}
}

// sqliteText tells an SQLite error by its result code's meaning, the
// first words of the database's message ("no such table", "bad JSON
// path") and the code. The driver writes "errstr: errmsg (code)", or
// "errstr (code)" when the two are one; errstr has no colon.
func sqliteText(e *sqlite.Error) string {
	str, detail, _ := strings.Cut(e.Error(), ": ")
	text := firstWords(str)
	if d := firstWords(detail); d != "" {
		text += ": " + d
	}
	return fmt.Sprintf("%s (SQLite result code %d)", text, e.Code())
}

// scanNumbers scans a result's one row into dest through scan (a Row's or
// Rows' Scan), converting as database/sql does, but its error names the
// column and the value's type, never the value: database/sql's quotes it
// (`converting driver.Value type string ("x") to a float64`).
func scanNumbers(scan func(...any) error, dest []*float64) error {
	vals := make([]any, len(dest))
	ptrs := make([]any, len(dest))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := scan(ptrs...); err != nil {
		return err
	}
	for i, v := range vals {
		var n sql.NullFloat64
		switch err := n.Scan(v); {
		case v == nil:
			return fmt.Errorf("result column %d: NULL where a number was expected", i+1)
		case err != nil:
			// Not wrapped: its text is the one that quotes the value.
			return fmt.Errorf("result column %d: a %T value where a number was expected", i+1, v)
		}
		*dest[i] = n.Float64
	}
	return nil
}

// redacted hides a source's secrets (a connection string, the password
// in it, a database file's path) and the addresses that network and file
// errors carry from an error's text,
// while keeping the error chain for errors.Is and As.
type redacted struct {
	err     error
	secrets []string
}

func (r *redacted) Error() string {
	s := r.err.Error()
	for _, e := range addressed(r.err, nil) {
		s = strings.ReplaceAll(s, e.Error(), addressFree(e))
	}
	for _, sec := range r.secrets {
		if len(sec) > 1 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

func (r *redacted) Unwrap() error { return r.err }

// addressed appends to found the errors in err's chain whose text names
// an address: a socket's path, a peer's or the node's host and port, a
// looked-up name, a file's path. A resolved address (db.example's IP)
// is in none of a connection string's parts, so the parts alone would
// not hide it.
func addressed(err error, found []error) []error {
	switch e := err.(type) {
	case nil:
		return found
	case *net.OpError, *net.DNSError, *net.AddrError, *fs.PathError:
		return append(found, e)
	case interface{ Unwrap() []error }:
		for _, u := range e.Unwrap() {
			found = addressed(u, found)
		}
		return found
	}
	return addressed(errors.Unwrap(err), found)
}

// addressFree is the text of an error addressed found, without the
// address: "write unix: write: broken pipe" for "write unix
// @->/run/postgresql/.s.PGSQL.5432: write: broken pipe".
func addressFree(err error) string {
	switch e := err.(type) {
	case *net.OpError:
		if e.Err == nil {
			return e.Op + " " + e.Net
		}
		return e.Op + " " + e.Net + ": " + addressFree(e.Err)
	case *net.DNSError:
		return "lookup: " + e.Err
	case *net.AddrError:
		return e.Err
	case *fs.PathError:
		return e.Op + ": " + addressFree(e.Err)
	}
	return err.Error()
}

// retold is an error told in a text of ours, because its own may quote
// data; Unwrap gives the original, for errors.Is and As.
type retold struct {
	text string
	err  error
}

func (e *retold) Error() string { return e.text }
func (e *retold) Unwrap() error { return e.err }

// firstWords is a server message up to its first colon or parenthesis
// (after which servers quote query text and values), with every quoted
// span that opens after a space masked (`relation "…" does not exist`;
// "doesn't" stays whole).
func firstWords(msg string) string {
	if i := strings.IndexAny(msg, ":("); i >= 0 {
		msg = msg[:i]
	}
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if (c == '\'' || c == '"' || c == '`') && (i == 0 || msg[i-1] == ' ') {
			end := strings.IndexByte(msg[i+1:], c)
			if end < 0 {
				break // an unclosed quote: drop the rest
			}
			b.WriteByte(c)
			b.WriteString("…")
			b.WriteByte(c)
			i += end + 1
			continue
		}
		b.WriteByte(c)
	}
	return strings.TrimSpace(b.String())
}
