package sjc

import "errors"

// Errors of the package. A text that can reach the coordinator (a party's
// failure, which every member's log keeps) names tables, columns of the
// schema, edges, nodes and counts, never a cell value, a join value, a
// gain or a predicate.
var (
	// ErrData: a party's table does not match the spec's schema (or a
	// model's split).
	ErrData = errors.New("sjc: table does not match the schema")
	// ErrEmptyJoin: the join of the tables has no row.
	ErrEmptyJoin = errors.New("sjc: the join is empty")
	// ErrOverflow: a class count (a number of join rows) does not fit in
	// 64 bits. Counts are never wrapped.
	ErrOverflow = errors.New("sjc: class count overflows 64 bits")
	// ErrSummary: a class or split summary does not fit the receiving
	// table (a join value it does not hold, a missing value, wrong length):
	// the parties disagree about the join graph or a peer misbehaves.
	ErrSummary = errors.New("sjc: summary does not match the table")
	// ErrInexact: a propagation division left a remainder. Class and split
	// propagation divide exactly (Xu, thesis §3.3: every rescaling is a
	// ratio of counts of the same join rows); a remainder means the
	// summaries are inconsistent.
	ErrInexact = errors.New("sjc: inexact class-count division")
)

// reworded is an error whose text says its cause in other words: a cause
// whose text may quote a party's private file (a kept predicate, a cell),
// or that repeats what the runtime adds (the party's name). errors.Is and
// errors.As still find the cause; the coordinator never reads its text.
type reworded struct {
	msg   string
	cause error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.cause }
