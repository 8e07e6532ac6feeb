package joinprop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/internal/sorted"
)

// The spec's join list: its predicates, and the canonical encoding of a
// join value.

// ErrJoin wraps every problem with the join graph or the schema it is built
// over: syntax, unknown tables or columns, cycles, unreachable tables, the
// class column.
var ErrJoin = errors.New("invalid join")

// Predicate is one equality join between two tables, possibly on composite
// keys: Left.LeftCols[i] = Right.RightCols[i] for every i. Left and Right
// are as written in the spec (the first table named is Left).
type Predicate struct {
	Left, Right         string
	LeftCols, RightCols []string
}

// ParsePredicate parses one entry of a spec's join list.
//
// Syntax: one or more equalities "T.c = U.d" joined by AND (any case), all
// between the same two tables, for example
//
//	"L.ssn = S.dealer"
//	"A.x = B.y AND A.z = B.w"      (composite key (x, z) = (y, w))
//	"A.x = B.y and B.w = A.z"      (the same key; sides may be swapped)
//
// Table and column names are identifiers without dots or spaces. The
// composite key's components are kept in the order written.
func ParsePredicate(s string) (Predicate, error) {
	var p Predicate
	terms := splitAnd(s)
	if len(terms) == 0 {
		return p, fmt.Errorf("%w: predicate %q is empty", ErrJoin, s)
	}
	for _, term := range terms {
		lhs, rhs, ok := strings.Cut(term, "=")
		if !ok || strings.Contains(rhs, "=") {
			return p, fmt.Errorf("%w: predicate %q: %q is not of the form T.c = U.d", ErrJoin, s, term)
		}
		lt, lc, err := parseRef(s, lhs)
		if err != nil {
			return p, err
		}
		rt, rc, err := parseRef(s, rhs)
		if err != nil {
			return p, err
		}
		if lt == rt {
			return p, fmt.Errorf("%w: predicate %q: table %q joined with itself", ErrJoin, s, lt)
		}
		if p.Left == "" {
			p.Left, p.Right = lt, rt
		}
		switch {
		case lt == p.Left && rt == p.Right:
		case lt == p.Right && rt == p.Left:
			lt, rt, lc, rc = rt, lt, rc, lc
		default:
			return p, fmt.Errorf("%w: predicate %q: %q does not join tables %q and %q (one predicate per pair of tables; write another entry for another pair)", ErrJoin, s, strings.TrimSpace(term), p.Left, p.Right)
		}
		p.LeftCols = append(p.LeftCols, lc)
		p.RightCols = append(p.RightCols, rc)
	}
	return p, nil
}

// splitAnd splits s at the word AND (any case), trimming the parts; empty
// parts are kept so that "A.x = B.y AND" is an error.
func splitAnd(s string) []string {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil
	}
	var out []string
	var cur []string
	for _, f := range fields {
		if strings.EqualFold(f, "and") {
			out = append(out, strings.Join(cur, " "))
			cur = nil
			continue
		}
		cur = append(cur, f)
	}
	return append(out, strings.Join(cur, " "))
}

func parseRef(pred, ref string) (tbl, col string, err error) {
	ref = strings.TrimSpace(ref)
	t, c, ok := strings.Cut(ref, ".")
	if !ok || t == "" || c == "" || strings.ContainsAny(ref, " \t") || strings.Contains(c, ".") {
		return "", "", fmt.Errorf("%w: predicate %q: %q is not a column reference TABLE.COLUMN", ErrJoin, pred, ref)
	}
	return t, c, nil
}

// KeyEncode is the canonical encoding of a (possibly composite) join value:
// each component's length in decimal, a colon, then its text. Two join
// values are equal exactly when their encodings are; the PSI of the next
// slice hashes this encoding. Join values compare as text, as written in
// the files (so "1" and "1.0" differ).
func KeyEncode(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// Intersect is the result every edge's private set intersection must give:
// the sorted values in both sorted lists. The in-process Build uses it in
// place of the PSI.
func Intersect(a, b []string) []string { return sorted.AppendIntersect(nil, a, b) }
