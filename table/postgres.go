package table

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgCursor names the server-side cursor a read declares.
const pgCursor = "cohort_read"

// Numeric PostgreSQL types (type OIDs): int2, int4, int8, float4, float8,
// numeric.
var pgNumeric = map[uint32]string{21: "smallint", 23: "integer", 20: "bigint", 700: "real", 701: "double precision", 1700: "numeric"}

// pgConnString reads the connection string of a PostgreSQL source. A
// connection file must not be readable by group or others (mode 0600).
// Errors name the source as desc.
func pgConnString(src Source, desc string) (string, error) {
	if src.PostgresEnv != "" {
		v, ok := os.LookupEnv(src.PostgresEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("%w: %s: environment variable %s is not set", ErrSource, desc, src.PostgresEnv)
		}
		return strings.TrimSpace(v), nil
	}
	st, err := os.Stat(src.PostgresFile)
	if err != nil {
		return "", fileError(desc, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: %s: connection file has mode %04o; it holds a password, so make it 0600", ErrSource, desc, st.Mode().Perm())
	}
	b, err := os.ReadFile(src.PostgresFile)
	if err != nil {
		return "", fileError(desc, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// pgSecrets are the parts of a connection's configuration that no error
// text may name: besides the connection string and password, where the
// organisation's database runs (host or socket directory), as whom, and
// under which name.
func pgSecrets(cfg *pgx.ConnConfig) []string {
	secrets := []string{cfg.ConnString(), cfg.Password, cfg.Host, cfg.User, cfg.Database}
	for _, fb := range cfg.Fallbacks {
		secrets = append(secrets, fb.Host)
	}
	return secrets
}

// pgConnect connects with a connection string that must not leak: parse
// errors are replaced, other errors redacted. Errors name the source as
// desc.
func pgConnect(ctx context.Context, src Source, desc string) (*pgx.Conn, error) {
	cs, err := pgConnString(src, desc)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(cs)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the connection string does not parse", ErrSource, desc)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		// A failure reaches every member's log.
		return nil, fmt.Errorf("%w: %s: connect: %w", ErrSource, desc, dbError(err, pgSecrets(cfg)))
	}
	return conn, nil
}

// pgCleanupTimeout bounds closing a connection or rolling back after the
// caller's context has ended.
const pgCleanupTimeout = 5 * time.Second

func pgClose(ctx context.Context, conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgCleanupTimeout)
	defer cancel()
	conn.Close(ctx)
}

func pgRollback(ctx context.Context, tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgCleanupTimeout)
	defer cancel()
	tx.Rollback(ctx) // an error here means the connection is gone, taking the transaction
}

// readPostgres reads a table or query through a server-side cursor in a
// read-only transaction, BatchRows rows per round trip, so neither the
// client library nor the server materialises a large result at once.
func readPostgres(ctx context.Context, src Source, name string, schema map[string]Kind, opts ReadOptions) (*Table, error) {
	desc := opts.describe(src)
	q := src.Query
	if q == "" {
		q = "SELECT " + selectColumns(schema) + " FROM " + quoteTable(src.Table)
	} else {
		var err error
		if q, err = readOnlyQuery(q); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, err)
		}
	}
	conn, err := pgConnect(ctx, src, desc)
	if err != nil {
		return nil, err
	}
	defer pgClose(ctx, conn)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: begin: %w", ErrSource, desc, pgError(conn, err))
	}
	defer pgRollback(ctx, tx) // read-only: nothing to keep
	if _, err := tx.Exec(ctx, "DECLARE "+pgCursor+" NO SCROLL CURSOR FOR "+q); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, pgError(conn, err))
	}
	batch := opts.BatchRows
	if batch <= 0 {
		batch = 10000
	}
	fetch := fmt.Sprintf("FETCH FORWARD %d FROM %s", batch, pgCursor)
	var b *builder
	var row []cell
	n := 0
	where := func(int) string { return fmt.Sprintf("%s: row %d", desc, n) }
	for {
		// The simple protocol returns every value as text, which keeps
		// numeric (decimal) values exact until they are parsed once.
		rows, err := tx.Query(ctx, fetch, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, pgError(conn, err))
		}
		if b == nil {
			if b, err = pgBuilder(desc, rows.FieldDescriptions(), schema, opts); err != nil {
				rows.Close()
				return nil, err
			}
			row = make([]cell, len(rows.FieldDescriptions()))
		}
		got := 0
		for rows.Next() {
			got++
			n++
			for i, v := range rows.RawValues() {
				if v == nil {
					row[i] = cell{null: true}
				} else {
					row[i] = cell{text: strings.TrimSpace(string(v))}
				}
			}
			if err := b.add(row, where); err != nil {
				rows.Close()
				return nil, err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, pgError(conn, err))
		}
		if got < batch {
			break
		}
	}
	return b.finish(name), nil
}

// pgBuilder checks the result's columns and their types.
func pgBuilder(desc string, fds []pgconn.FieldDescription, schema map[string]Kind, opts ReadOptions) (*builder, error) {
	names := make([]string, len(fds))
	for i, fd := range fds {
		names[i] = fd.Name
	}
	b, err := newBuilder(desc, names, schema, opts)
	if err != nil {
		return nil, err
	}
	for j, c := range b.cols {
		if c.Kind != Numeric {
			continue
		}
		if _, ok := pgNumeric[fds[b.idx[j]].DataTypeOID]; !ok {
			return nil, fmt.Errorf("%w: %s: column %q has a non-numeric PostgreSQL type (oid %d), but the schema says numeric",
				ErrSource, desc, c.Name, fds[b.idx[j]].DataTypeOID)
		}
	}
	return b, nil
}

// pgError is the error of a statement on conn (begin, query, fetch,
// commit), told as dbError tells it: a connection lost mid-query would
// name the socket's path or the server's address, a server's message may
// quote the data or the query.
func pgError(conn *pgx.Conn, err error) error {
	return dbError(err, pgSecrets(conn.Config()))
}
