package table

import (
	"context"
)

// An Aggregator over a database keeps the connection its last aggregate
// used, and the next aggregate runs on it: a job asks one Aggregator for
// many aggregates (a quantile job counts once per round, 24 rounds for a
// median in docs/sources.md; a binned load asks one per binned column and
// one more), and a fresh PostgreSQL connection (a backend started, a
// password checked by SCRAM) made a small table's aggregate cost 14 ms
// instead of 1.6 (docs/sources.md, "One connection per Aggregator").
// SQLite and ClickHouse gained nothing measurable on one machine; they
// keep theirs the same way, one mechanism for all, which spares a remote
// ClickHouse a TCP (and TLS) handshake per aggregate. A kept SQLite
// connection reads a database file renamed over it as it was until
// Close, which gives a job's rounds one table.
//
// The Aggregator is the owner because it is the one value every caller
// already makes per source and keeps exactly as long as it asks for
// aggregates (a quantile session for its rounds, a load for itself):
// nothing global holds a connection, and no goroutine outlives Close
// (database/sql's, for SQLite and ClickHouse, end with the DB). Whoever
// makes an Aggregator closes it.
//
// One connection is kept, not a pool: aggregates of one Aggregator come
// one after another, and when two run at once (a step re-run while the
// last attempt's query still runs) the second opens a connection of its
// own and closes it after, as every aggregate did before. Each aggregate
// still runs in a read-only transaction of its own, rolled back at its
// end, so that nothing it did outlives it on the kept connection and no
// transaction stays open between a job's rounds.

// conn returns a connection to the source in an aggregate's transaction:
// the one kept from an earlier aggregate when there is one, else a new
// one. A kept connection that cannot begin (the server closed it, or
// restarted, while the job waited between rounds) is closed and a new one
// opened in its place: nothing ran on it yet, so nothing is lost.
func (a *sqlAgg) conn(ctx context.Context, desc string) (sqlConn, error) {
	a.mu.Lock()
	c := a.idle
	a.idle = nil
	a.mu.Unlock()
	if c != nil {
		if err := c.begin(ctx); err == nil {
			return c, nil
		}
		c.close(ctx)
	}
	c, err := a.db.connect(ctx, a.src, desc)
	if err != nil {
		return nil, err
	}
	if err := c.begin(ctx); err != nil {
		c.close(ctx)
		return nil, err
	}
	return c, nil
}

// release ends the aggregate's transaction and keeps c for the next
// aggregate, unless the transaction did not end cleanly, another
// connection is kept already, or the Aggregator is closed: then c is
// closed.
func (a *sqlAgg) release(ctx context.Context, c sqlConn) {
	if c.end(ctx) {
		a.mu.Lock()
		if a.idle == nil && !a.closed {
			a.idle, c = c, nil
		}
		a.mu.Unlock()
	}
	if c != nil {
		c.close(ctx)
	}
}

// Close closes the connection kept between aggregates. An aggregate
// asked after Close still answers, on a connection it closes at its end.
// It returns nil: a connection that does not close cleanly is gone
// already, and its error would name where the server runs.
func (a *sqlAgg) Close() error {
	a.mu.Lock()
	c := a.idle
	a.idle, a.closed = nil, true
	a.mu.Unlock()
	if c != nil {
		c.close(context.Background()) // each close bounds itself (pgCleanupTimeout)
	}
	return nil
}

// Close does nothing: a file is opened by each aggregate and closed at
// its end.
func (a *streamAgg) Close() error { return nil }
