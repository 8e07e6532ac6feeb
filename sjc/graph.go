package sjc

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// ErrJoin wraps every problem with the join graph or the schema it is built
// over: syntax, unknown tables or columns, cycles, unreachable tables, the
// class column.
var ErrJoin = errors.New("sjc: invalid join")

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

// Edge is one edge of the rooted join tree: Parent is nearer the target
// table. ParentCols[i] = ChildCols[i] for every i.
type Edge struct {
	Parent, Child         string
	ParentCols, ChildCols []string
}

// TableInfo is one table of the join graph.
type TableInfo struct {
	Name  string
	Party string
	// Columns lists the table's columns (name and kind), sorted by name.
	Columns []ColumnInfo
	// Parent is the index in Graph.Edges of the edge to the parent table,
	// -1 for the target table.
	Parent int
	// Children are the indexes in Graph.Edges of the edges to the child
	// tables, in Graph.Edges order.
	Children []int
}

// ColumnInfo is a column's name and kind from the spec's schema.
type ColumnInfo struct {
	Name string
	Kind table.Kind
}

// Graph is a validated join graph rooted at the target table: connected,
// acyclic, every join column a key column of its table, exactly one class
// column. It is public (every party derives the same graph from the spec).
type Graph struct {
	// Tables in pre-order from the target table (children in name order);
	// Tables[0] is the target table.
	Tables []TableInfo
	// Edges, Edges[i] leading to Tables[i+1] (pre-order of the child).
	Edges []Edge
	// Class is the class column of Tables[0].
	Class string
}

// Target returns the name of the table holding the class column.
func (g *Graph) Target() string { return g.Tables[0].Name }

// Index returns the position of the named table in g.Tables, or -1.
func (g *Graph) Index(name string) int {
	for i, t := range g.Tables {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// partiesBut returns the parties holding tables of g, sorted, but self.
func (g *Graph) partiesBut(self string) []string {
	var out []string
	for _, t := range g.Tables {
		if t.Party != self && !slices.Contains(out, t.Party) {
			out = append(out, t.Party)
		}
	}
	slices.Sort(out)
	return out
}

// neighbours returns, for table i, the edges incident to it with the index
// of the table at the other end.
func (g *Graph) neighbours(i int) []incident {
	var out []incident
	t := g.Tables[i]
	if t.Parent >= 0 {
		out = append(out, incident{edge: t.Parent, other: g.Index(g.Edges[t.Parent].Parent), parentSide: false})
	}
	for _, e := range t.Children {
		out = append(out, incident{edge: e, other: e + 1, parentSide: true})
	}
	return out
}

type incident struct {
	edge       int
	other      int
	parentSide bool // this table is the edge's parent
}

// NewGraph builds and validates the join graph of an sjc spec: its schema
// (tables and column kinds), the owner of each table (from parties) and its
// join list.
func NewGraph(spec *job.Spec) (*Graph, error) {
	owners := map[string]string{}
	for _, p := range spec.Parties {
		for _, t := range p.Tables {
			if o, dup := owners[t.Name]; dup {
				return nil, fmt.Errorf("%w: table %q is held by both %q and %q", ErrJoin, t.Name, o, p.Name)
			}
			owners[t.Name] = p.Name
		}
	}
	schema := map[string]map[string]table.Kind{}
	for _, tn := range sortedKeys(spec.Schema) {
		cols := spec.Schema[tn]
		schema[tn] = map[string]table.Kind{}
		for _, cn := range sortedKeys(cols) {
			k, err := table.ParseKind(cols[cn])
			if err != nil {
				return nil, fmt.Errorf("%w: table %q column %q: %w", ErrJoin, tn, cn, err)
			}
			schema[tn][cn] = k
		}
	}
	return BuildGraph(owners, schema, spec.Join)
}

// BuildGraph builds and validates a join graph. owners maps each table to
// the party holding it, schema each table to its column kinds, join is the
// spec's join list (see ParsePredicate). Several entries for the same pair
// of tables are one composite predicate, their columns in the order written.
func BuildGraph(owners map[string]string, schema map[string]map[string]table.Kind, join []string) (*Graph, error) {
	names := sortedKeys(schema)
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: the schema lists no tables", ErrJoin)
	}
	for _, tn := range names {
		if _, ok := owners[tn]; !ok {
			return nil, fmt.Errorf("%w: table %q is in the schema but no party holds it", ErrJoin, tn)
		}
	}
	for _, tn := range sortedKeys(owners) {
		if _, ok := schema[tn]; !ok {
			return nil, fmt.Errorf("%w: table %q (party %q) has no schema", ErrJoin, tn, owners[tn])
		}
	}

	// The class column: exactly one over all tables.
	var target, class string
	for _, tn := range names {
		for _, cn := range sortedKeys(schema[tn]) {
			if schema[tn][cn] != table.Class {
				continue
			}
			if target != "" {
				return nil, fmt.Errorf("%w: two class columns, table %q column %q and table %q column %q (the target table holds the only one)", ErrJoin, target, class, tn, cn)
			}
			target, class = tn, cn
		}
	}
	if target == "" {
		return nil, fmt.Errorf("%w: no class column in tables %s (mark one column of the target table `class`)", ErrJoin, strings.Join(names, ", "))
	}
	if len(names) > 1 && len(join) == 0 {
		return nil, fmt.Errorf("%w: join is empty, but there are %d tables (%s): give one predicate per edge of the join tree", ErrJoin, len(names), strings.Join(names, ", "))
	}

	// Parse, check columns, merge entries on the same pair.
	type pairKey struct{ a, b string }
	var preds []Predicate
	pairAt := map[pairKey]int{}
	for _, s := range join {
		p, err := ParsePredicate(s)
		if err != nil {
			return nil, err
		}
		for side, tn := range []string{p.Left, p.Right} {
			cols := p.LeftCols
			if side == 1 {
				cols = p.RightCols
			}
			if _, ok := schema[tn]; !ok {
				return nil, fmt.Errorf("%w: predicate %q: unknown table %q (tables: %s)", ErrJoin, s, tn, strings.Join(names, ", "))
			}
			for _, cn := range cols {
				k, ok := schema[tn][cn]
				if !ok {
					return nil, fmt.Errorf("%w: predicate %q: table %q has no column %q", ErrJoin, s, tn, cn)
				}
				if k != table.Key {
					return nil, fmt.Errorf("%w: predicate %q: table %q column %q is %s, a join column must be of kind key", ErrJoin, s, tn, cn, k)
				}
			}
		}
		k := pairKey{p.Left, p.Right}
		if p.Left > p.Right {
			k = pairKey{p.Right, p.Left}
			p = Predicate{Left: p.Right, Right: p.Left, LeftCols: p.RightCols, RightCols: p.LeftCols}
		}
		if i, ok := pairAt[k]; ok {
			preds[i].LeftCols = append(preds[i].LeftCols, p.LeftCols...)
			preds[i].RightCols = append(preds[i].RightCols, p.RightCols...)
			continue
		}
		pairAt[k] = len(preds)
		preds = append(preds, p)
	}

	// Acyclic: adding an edge between two tables already connected closes
	// a cycle, which the error spells out.
	adj := map[string][]int{}
	for i, p := range preds {
		if path := findPath(preds[:i], adj, p.Left, p.Right); path != nil {
			cyc := append(path, p.Left)
			return nil, fmt.Errorf("%w: the join graph has a cycle %s (predicate %q closes it): the join must be a tree", ErrJoin, strings.Join(cyc, " - "), join[predSource(join, p)])
		}
		adj[p.Left] = append(adj[p.Left], i)
		adj[p.Right] = append(adj[p.Right], i)
	}

	// Root at the target; pre-order, children in name order.
	g := &Graph{Class: class}
	seen := map[string]bool{}
	var visit func(tn string, parentEdge int)
	visit = func(tn string, parentEdge int) {
		seen[tn] = true
		idx := len(g.Tables)
		ti := TableInfo{Name: tn, Party: owners[tn], Parent: parentEdge}
		for _, cn := range sortedKeys(schema[tn]) {
			ti.Columns = append(ti.Columns, ColumnInfo{Name: cn, Kind: schema[tn][cn]})
		}
		g.Tables = append(g.Tables, ti)
		type child struct {
			name string
			e    Edge
		}
		var kids []child
		for _, pi := range adj[tn] {
			p := preds[pi]
			if p.Left == tn && !seen[p.Right] {
				kids = append(kids, child{p.Right, Edge{Parent: tn, Child: p.Right, ParentCols: p.LeftCols, ChildCols: p.RightCols}})
			} else if p.Right == tn && !seen[p.Left] {
				kids = append(kids, child{p.Left, Edge{Parent: tn, Child: p.Left, ParentCols: p.RightCols, ChildCols: p.LeftCols}})
			}
		}
		slices.SortFunc(kids, func(a, b child) int { return strings.Compare(a.name, b.name) })
		for _, k := range kids {
			e := len(g.Edges)
			g.Edges = append(g.Edges, k.e)
			g.Tables[idx].Children = append(g.Tables[idx].Children, e)
			visit(k.name, e)
		}
	}
	visit(target, -1)
	for _, tn := range names {
		if !seen[tn] {
			return nil, fmt.Errorf("%w: table %q is not connected to the target table %q (no join path): every table must be reachable", ErrJoin, tn, target)
		}
	}
	return g, nil
}

// findPath returns the tables on the path from a to b over preds, or nil.
func findPath(preds []Predicate, adj map[string][]int, a, b string) []string {
	prev := map[string]string{a: ""}
	queue := []string{a}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if x == b {
			var path []string
			for y := b; y != ""; y = prev[y] {
				path = append(path, y)
			}
			slices.Reverse(path)
			return path
		}
		for _, pi := range adj[x] {
			if pi >= len(preds) {
				continue
			}
			y := preds[pi].Left
			if y == x {
				y = preds[pi].Right
			}
			if _, ok := prev[y]; !ok {
				prev[y] = x
				queue = append(queue, y)
			}
		}
	}
	return nil
}

// predSource finds the join entry that names p's pair last (for errors).
func predSource(join []string, p Predicate) int {
	last := 0
	for i, s := range join {
		q, err := ParsePredicate(s)
		if err == nil && ((q.Left == p.Left && q.Right == p.Right) || (q.Left == p.Right && q.Right == p.Left)) {
			last = i
		}
	}
	return last
}

// keyEncode is the canonical encoding of a (possibly composite) join value:
// each component's length in decimal, a colon, then its text. Two join
// values are equal exactly when their encodings are; the PSI of the next
// slice hashes this encoding. Join values compare as text, as written in
// the files (so "1" and "1.0" differ).
func keyEncode(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// KeyEncode is keyEncode for callers outside the package (the reference
// builder and the PSI).
func KeyEncode(parts []string) string { return keyEncode(parts) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
