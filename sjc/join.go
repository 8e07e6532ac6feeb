package sjc

import (
	"errors"

	"github.com/cohortdm/cohort/joinprop"
)

// ErrJoin wraps every problem with the join graph or the schema it is built
// over: syntax, unknown tables or columns, cycles, unreachable tables, the
// class column.
var ErrJoin = errors.New("sjc: invalid join")

// Predicate is one equality join between two tables, possibly on composite
// keys (joinprop.Predicate).
type Predicate = joinprop.Predicate

// ParsePredicate parses one entry of a spec's join list (see
// joinprop.ParsePredicate for the syntax).
func ParsePredicate(s string) (Predicate, error) {
	p, err := joinprop.ParsePredicate(s)
	return p, joinErr(err)
}

// KeyEncode is joinprop.KeyEncode, for callers outside the package (the reference
// builder and the PSI).
func KeyEncode(parts []string) string { return joinprop.KeyEncode(parts) }

// Intersect is the result every edge's private set intersection must give:
// the sorted values in both sorted lists. The in-process Build uses it in
// place of the PSI.
func Intersect(a, b []string) []string { return joinprop.Intersect(a, b) }
