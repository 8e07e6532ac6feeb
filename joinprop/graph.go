package joinprop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

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

// PartiesBut returns the parties holding tables of g, sorted, but self.
func (g *Graph) PartiesBut(self string) []string {
	var out []string
	for _, t := range g.Tables {
		if t.Party != self && !slices.Contains(out, t.Party) {
			out = append(out, t.Party)
		}
	}
	slices.Sort(out)
	return out
}

// Neighbours returns, for table i, the edges incident to it with the index
// of the table at the other end.
func (g *Graph) Neighbours(i int) []Incident {
	var out []Incident
	t := g.Tables[i]
	if t.Parent >= 0 {
		out = append(out, Incident{Edge: t.Parent, Other: g.Index(g.Edges[t.Parent].Parent), ParentSide: false})
	}
	for _, e := range t.Children {
		out = append(out, Incident{Edge: e, Other: e + 1, ParentSide: true})
	}
	return out
}

// NeighbourParties names, sorted, the other parties whose tables share a
// join edge with table i: whom table i's owner exchanges join summaries
// with, and so whom its key and join columns reach.
func (g *Graph) NeighbourParties(i int) []string {
	party := g.Tables[i].Party
	var peers []string
	for _, inc := range g.Neighbours(i) {
		if p := g.Tables[inc.Other].Party; p != party && !slices.Contains(peers, p) {
			peers = append(peers, p)
		}
	}
	slices.Sort(peers)
	return peers
}

// Incident is an edge at a table: the edge's index, the table at its other
// end, and whether this table is the edge's parent.
type Incident struct {
	Edge       int
	Other      int
	ParentSide bool
}

// NewGraph builds and validates the join graph of a spec: its schema
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
	for _, tn := range SortedKeys(spec.Schema) {
		cols := spec.Schema[tn]
		schema[tn] = map[string]table.Kind{}
		for _, cn := range SortedKeys(cols) {
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
	names := SortedKeys(schema)
	if err := checkOwners(owners, schema, names); err != nil {
		return nil, err
	}
	target, class, err := classColumn(schema, names)
	if err != nil {
		return nil, err
	}
	if len(names) > 1 && len(join) == 0 {
		return nil, fmt.Errorf("%w: join is empty, but there are %d tables (%s): give one predicate per edge of the join tree", ErrJoin, len(names), strings.Join(names, ", "))
	}
	preds, err := joinPredicates(join, schema, names)
	if err != nil {
		return nil, err
	}
	adj, err := acyclic(preds, join)
	if err != nil {
		return nil, err
	}
	g := &Graph{Class: class}
	b := &rooting{g: g, owners: owners, schema: schema, preds: preds, adj: adj, seen: map[string]bool{}}
	b.visit(target, -1)
	for _, tn := range names {
		if !b.seen[tn] {
			return nil, fmt.Errorf("%w: table %q is not connected to the target table %q (no join path): every table must be reachable", ErrJoin, tn, target)
		}
	}
	return g, nil
}

// checkOwners checks that every table of the schema has an owner and
// every owned table a schema.
func checkOwners(owners map[string]string, schema map[string]map[string]table.Kind, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("%w: the schema lists no tables", ErrJoin)
	}
	for _, tn := range names {
		if _, ok := owners[tn]; !ok {
			return fmt.Errorf("%w: table %q is in the schema but no party holds it", ErrJoin, tn)
		}
	}
	for _, tn := range SortedKeys(owners) {
		if _, ok := schema[tn]; !ok {
			return fmt.Errorf("%w: table %q (party %q) has no schema", ErrJoin, tn, owners[tn])
		}
	}
	return nil
}

// classColumn finds the one class column over all tables, and its table,
// the target.
func classColumn(schema map[string]map[string]table.Kind, names []string) (target, class string, err error) {
	for _, tn := range names {
		for _, cn := range SortedKeys(schema[tn]) {
			if schema[tn][cn] != table.Class {
				continue
			}
			if target != "" {
				return "", "", fmt.Errorf("%w: two class columns, table %q column %q and table %q column %q (the target table holds the only one)", ErrJoin, target, class, tn, cn)
			}
			target, class = tn, cn
		}
	}
	if target == "" {
		return "", "", fmt.Errorf("%w: no class column in tables %s (mark one column of the target table `class`)", ErrJoin, strings.Join(names, ", "))
	}
	return target, class, nil
}

// joinPredicates parses the join list, checks that every join column is a
// key column of its table, and merges the entries on one pair of tables
// into one composite predicate (its columns in the order written), each
// pair with its tables in name order.
func joinPredicates(join []string, schema map[string]map[string]table.Kind, names []string) ([]Predicate, error) {
	type pairKey struct{ a, b string }
	var preds []Predicate
	pairAt := map[pairKey]int{}
	for _, s := range join {
		p, err := ParsePredicate(s)
		if err != nil {
			return nil, err
		}
		if err := checkJoinColumns(s, p.Left, p.LeftCols, schema, names); err != nil {
			return nil, err
		}
		if err := checkJoinColumns(s, p.Right, p.RightCols, schema, names); err != nil {
			return nil, err
		}
		if p.Left > p.Right {
			p = Predicate{Left: p.Right, Right: p.Left, LeftCols: p.RightCols, RightCols: p.LeftCols}
		}
		k := pairKey{p.Left, p.Right}
		if i, ok := pairAt[k]; ok {
			preds[i].LeftCols = append(preds[i].LeftCols, p.LeftCols...)
			preds[i].RightCols = append(preds[i].RightCols, p.RightCols...)
			continue
		}
		pairAt[k] = len(preds)
		preds = append(preds, p)
	}
	return preds, nil
}

// checkJoinColumns checks one side of predicate s: table tn exists and
// each of cols is one of its key columns.
func checkJoinColumns(s, tn string, cols []string, schema map[string]map[string]table.Kind, names []string) error {
	if _, ok := schema[tn]; !ok {
		return fmt.Errorf("%w: predicate %q: unknown table %q (tables: %s)", ErrJoin, s, tn, strings.Join(names, ", "))
	}
	for _, cn := range cols {
		k, ok := schema[tn][cn]
		if !ok {
			return fmt.Errorf("%w: predicate %q: table %q has no column %q", ErrJoin, s, tn, cn)
		}
		if k != table.Key {
			return fmt.Errorf("%w: predicate %q: table %q column %q is %s, a join column must be of kind key", ErrJoin, s, tn, cn, k)
		}
	}
	return nil
}

// acyclic returns each table's predicates, or the cycle: adding an edge
// between two tables already connected closes one, which the error
// spells out.
func acyclic(preds []Predicate, join []string) (map[string][]int, error) {
	adj := map[string][]int{}
	for i, p := range preds {
		if path := findPath(preds[:i], adj, p.Left, p.Right); path != nil {
			cyc := append(path, p.Left)
			return nil, fmt.Errorf("%w: the join graph has a cycle %s (predicate %q closes it): the join must be a tree", ErrJoin, strings.Join(cyc, " - "), join[predSource(join, p)])
		}
		adj[p.Left] = append(adj[p.Left], i)
		adj[p.Right] = append(adj[p.Right], i)
	}
	return adj, nil
}

// rooting lays the join tree out from the target: tables in pre-order,
// children in name order, each edge numbered before its child.
type rooting struct {
	g      *Graph
	owners map[string]string
	schema map[string]map[string]table.Kind
	preds  []Predicate
	adj    map[string][]int
	seen   map[string]bool
}

func (b *rooting) visit(tn string, parentEdge int) {
	b.seen[tn] = true
	g := b.g
	idx := len(g.Tables)
	ti := TableInfo{Name: tn, Party: b.owners[tn], Parent: parentEdge}
	for _, cn := range SortedKeys(b.schema[tn]) {
		ti.Columns = append(ti.Columns, ColumnInfo{Name: cn, Kind: b.schema[tn][cn]})
	}
	g.Tables = append(g.Tables, ti)
	var kids []Edge
	for _, pi := range b.adj[tn] {
		p := b.preds[pi]
		if p.Left == tn && !b.seen[p.Right] {
			kids = append(kids, Edge{Parent: tn, Child: p.Right, ParentCols: p.LeftCols, ChildCols: p.RightCols})
		} else if p.Right == tn && !b.seen[p.Left] {
			kids = append(kids, Edge{Parent: tn, Child: p.Left, ParentCols: p.RightCols, ChildCols: p.LeftCols})
		}
	}
	slices.SortFunc(kids, func(a, b Edge) int { return strings.Compare(a.Child, b.Child) })
	for _, k := range kids {
		e := len(g.Edges)
		g.Edges = append(g.Edges, k)
		g.Tables[idx].Children = append(g.Tables[idx].Children, e)
		b.visit(k.Child, e)
	}
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

// SortedKeys returns m's keys, sorted.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CheckTests checks a spec's test: tables against the graph: a test set
// names one table for every table of the join, and no other.
func (g *Graph) CheckTests(spec *job.Spec) error {
	if len(spec.Test) == 0 {
		return nil
	}
	for _, t := range g.Tables {
		if spec.Test[t.Name] == "" {
			return spec.Errorf("test", "names no test table for table %q (a test set needs every table of the join)", t.Name)
		}
	}
	for name := range spec.Test {
		if g.Index(name) < 0 {
			return spec.Errorf("test."+name, "table %q is not in the join graph", name)
		}
	}
	return nil
}

// EdgeName is "T.a = U.b" for edge e.
func (g *Graph) EdgeName(e int) string {
	if e < 0 || e >= len(g.Edges) {
		return fmt.Sprintf("#%d", e)
	}
	ed := g.Edges[e]
	var parts []string
	for i := range ed.ParentCols {
		parts = append(parts, fmt.Sprintf("%s.%s = %s.%s", ed.Parent, ed.ParentCols[i], ed.Child, ed.ChildCols[i]))
	}
	return strings.Join(parts, " AND ")
}

// TableBefore reports whether table a comes before table b in the tie
// rule's order: by party, then by table name.
func (g *Graph) TableBefore(a, b int) bool {
	if x := strings.Compare(g.Tables[a].Party, g.Tables[b].Party); x != 0 {
		return x < 0
	}
	return g.Tables[a].Name < g.Tables[b].Name
}
