package sjc

import (
	"errors"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

// The join graph is package joinprop's, shared with the other kinds that
// learn over a join; sjc names its types and keeps its error texts.

// Edge is one edge of the rooted join tree: Parent is nearer the target
// table. ParentCols[i] = ChildCols[i] for every i.
type Edge = joinprop.Edge

// TableInfo is one table of the join graph.
type TableInfo = joinprop.TableInfo

// ColumnInfo is a column's name and kind from the spec's schema.
type ColumnInfo = joinprop.ColumnInfo

// Graph is a validated join graph rooted at the target table: connected,
// acyclic, every join column a key column of its table, exactly one class
// column. It is public (every party derives the same graph from the spec).
type Graph = joinprop.Graph

// NewGraph builds and validates the join graph of an sjc spec: its schema
// (tables and column kinds), the owner of each table (from parties) and its
// join list.
func NewGraph(spec *job.Spec) (*Graph, error) {
	g, err := joinprop.NewGraph(spec)
	return g, joinErr(err)
}

// BuildGraph builds and validates a join graph. owners maps each table to
// the party holding it, schema each table to its column kinds, join is the
// spec's join list (see ParsePredicate). Several entries for the same pair
// of tables are one composite predicate, their columns in the order written.
func BuildGraph(owners map[string]string, schema map[string]map[string]table.Kind, join []string) (*Graph, error) {
	g, err := joinprop.BuildGraph(owners, schema, join)
	return g, joinErr(err)
}

// joinError is a joinprop.ErrJoin error worded as sjc's ErrJoin: it is
// both, and whatever the original wraps.
type joinError struct{ err error }

func (e *joinError) Error() string {
	return ErrJoin.Error() + strings.TrimPrefix(e.err.Error(), joinprop.ErrJoin.Error())
}

func (e *joinError) Unwrap() []error { return []error{ErrJoin, e.err} }

func joinErr(err error) error {
	if err == nil || !errors.Is(err, joinprop.ErrJoin) {
		return err
	}
	return &joinError{err: err}
}
