package sjc

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Propagate runs the in-process class propagation: the private set
// intersection of every edge (Intersect), then ClassSchedule. It returns
// every table's Part at the root, DB(root) of the thesis.
func Propagate(g *Graph, locals []*Local) ([]Part, error) {
	ip, err := newInproc(g, locals)
	if err != nil {
		return nil, err
	}
	return ip.propagate()
}

// SplitPropagate splits every table's Part for the children of a node won
// by table winner with split s: the winner splits locally, then split
// summaries flow outwards (SplitSchedule).
func SplitPropagate(g *Graph, locals []*Local, parts []Part, winner int, s tree.Split) (left, right []Part, err error) {
	ip, err := newInproc(g, locals)
	if err != nil {
		return nil, nil, err
	}
	return ip.split(parts, winner, s)
}

// inproc runs the rounds of every table in one process, passing each
// summary as it would travel (EdgeSummary: join values by position in the
// edge's shared values), so that the in-process builder and the job share
// one code path and compare no join value as text after the intersection.
type inproc struct {
	g      *Graph
	locals []*Local
	shared [][]string // by edge
	al     aligns
}

func newInproc(g *Graph, locals []*Local) (*inproc, error) {
	ip := &inproc{g: g, locals: locals, shared: make([][]string, len(g.Edges)), al: aligns{}}
	for e, ed := range g.Edges {
		p := g.Index(ed.Parent)
		ip.shared[e] = Intersect(locals[p].JoinValues(e), locals[e+1].JoinValues(e))
		if len(ip.shared[e]) == 0 {
			return nil, fmt.Errorf("%w: edge %s: the tables have no join value in common", ErrEmptyJoin, g.EdgeName(e))
		}
	}
	return ip, nil
}

// aligned returns the alignments of tables from and to on edge e.
func (ip *inproc) aligned(e, from, to int) (*edgeAlign, *edgeAlign, error) {
	af, err := ip.al.of(ip.locals[from], e, ip.shared[e])
	if err != nil {
		return nil, nil, err
	}
	at, err := ip.al.of(ip.locals[to], e, ip.shared[e])
	return af, at, err
}

func (ip *inproc) propagate() ([]Part, error) {
	parts := make([]Part, len(ip.locals))
	for i, l := range ip.locals {
		parts[i] = l.Initial()
	}
	for _, tr := range ClassSchedule(ip.g) {
		af, at, err := ip.aligned(tr.Edge, tr.From, tr.To)
		if err != nil {
			return nil, err
		}
		es, err := ip.locals[tr.From].wireClass(parts[tr.From], af)
		if err != nil {
			return nil, err
		}
		if parts[tr.To], err = ip.locals[tr.To].applyWireClass(parts[tr.To], &es, at, tr.Forward); err != nil {
			return nil, err
		}
	}
	if parts[0].Len() == 0 {
		return nil, fmt.Errorf("%w: no row of target table %q joins rows of every other table", ErrEmptyJoin, ip.g.Target())
	}
	return parts, nil
}

func (ip *inproc) split(parts []Part, winner int, s tree.Split) (left, right []Part, err error) {
	left = make([]Part, len(parts))
	right = make([]Part, len(parts))
	if left[winner], right[winner], err = ip.locals[winner].SplitOwn(parts[winner], s); err != nil {
		return nil, nil, err
	}
	for _, tr := range SplitSchedule(ip.g, winner) {
		af, at, err := ip.aligned(tr.Edge, tr.From, tr.To)
		if err != nil {
			return nil, nil, err
		}
		es, err := ip.locals[tr.From].wireSplit(left[tr.From], right[tr.From], af)
		if err != nil {
			return nil, nil, err
		}
		if left[tr.To], right[tr.To], err = ip.locals[tr.To].applyWireSplit(parts[tr.To], &es, at); err != nil {
			return nil, nil, err
		}
	}
	return left, right, nil
}

// Prepare loads every table of g from data into a Local, with the class
// labels of the target table.
func Prepare(g *Graph, data map[string]*table.Table, labels []string, p Params) ([]*Local, error) {
	locals := make([]*Local, len(g.Tables))
	for i, ti := range g.Tables {
		t, ok := data[ti.Name]
		if !ok {
			return nil, fmt.Errorf("%w: no data for table %q", ErrData, ti.Name)
		}
		l, err := NewLocal(g, ti.Name, t, labels, p)
		if err != nil {
			return nil, err
		}
		locals[i] = l
	}
	return locals, nil
}

// Build runs the join-aware algorithm in one process, every table's steps
// in turn, as the distributed job will run them: class propagation, then
// at each node every table's BestSplits, the coordinator's Choose and the
// split propagation, then pruning. The tree equals the one grown on the
// materialised join (the tests hold it to the reference).
func Build(g *Graph, data map[string]*table.Table, p Params) (*tree.Tree, error) {
	target, ok := data[g.Target()]
	if !ok {
		return nil, fmt.Errorf("%w: no data for table %q", ErrData, g.Target())
	}
	labels, err := Labels(g, target)
	if err != nil {
		return nil, err
	}
	locals, err := Prepare(g, data, labels, p)
	if err != nil {
		return nil, err
	}
	ip, err := newInproc(g, locals)
	if err != nil {
		return nil, err
	}
	parts, err := ip.propagate()
	if err != nil {
		return nil, err
	}
	b := &builder{g: g, locals: locals, p: p, ip: ip}
	root, err := b.grow(parts, 0)
	if err != nil {
		return nil, err
	}
	t := &tree.Tree{Labels: labels, Root: root}
	if _, _, err := p.PruneTree(t); err != nil {
		return nil, err
	}
	return t, nil
}

type builder struct {
	g      *Graph
	locals []*Local
	p      Params
	ip     *inproc
}

func (b *builder) grow(parts []Part, depth int) (*tree.Node, error) {
	counts, err := b.locals[0].Counts(parts[0])
	if err != nil {
		return nil, err
	}
	n := &tree.Node{Counts: counts}
	if Stop(counts, depth, b.p) {
		return n, nil
	}
	offers := make([]Offer, len(parts))
	fronts := make([][]Candidate, len(parts))
	for i, l := range b.locals {
		if fronts[i], err = l.BestSplits(parts[i]); err != nil {
			return nil, err
		}
		offers[i] = OfferOf(fronts[i])
	}
	w, k, gain, ok := Choose(b.g, offers)
	if !ok || gain <= Eps {
		return n, nil
	}
	s := fronts[w][k].Split
	left, right, err := b.ip.split(parts, w, s)
	if err != nil {
		return nil, err
	}
	n.Split = &s
	if n.Left, err = b.grow(left, depth+1); err != nil {
		return nil, err
	}
	if n.Right, err = b.grow(right, depth+1); err != nil {
		return nil, err
	}
	return n, nil
}

// Evaluate classifies the join rows of test tables (same graph and schema)
// with t without materialising their join: class propagation over the test
// tables gives every row its join-row class counts, and routing them down
// the tree by split propagation leaves, at each leaf, the counts of the
// test join rows that reach it. It returns how many test join rows the
// tree labels correctly and how many there are.
func Evaluate(t *tree.Tree, g *Graph, test map[string]*table.Table) (correct, total uint64, err error) {
	target, ok := test[g.Target()]
	if !ok {
		return 0, 0, fmt.Errorf("%w: no test data for table %q", ErrData, g.Target())
	}
	labels, err := Labels(g, target)
	if err != nil {
		return 0, 0, err
	}
	labels = append(labels, t.Labels...)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	locals, err := Prepare(g, test, labels, Params{})
	if err != nil {
		return 0, 0, err
	}
	ip, err := newInproc(g, locals)
	if err != nil {
		return 0, 0, err
	}
	parts, err := ip.propagate()
	if err != nil {
		return 0, 0, err
	}
	var walk func(n *tree.Node, parts []Part) error
	walk = func(n *tree.Node, parts []Part) error {
		if n.IsLeaf() {
			counts, err := locals[0].Counts(parts[0])
			if err != nil {
				return err
			}
			k, _ := slices.BinarySearch(labels, t.Labels[n.Label()])
			correct += counts[k] // <= total, checked below
			for _, c := range counts {
				var carry uint64
				if total, carry = bits.Add64(total, c, 0); carry != 0 {
					return fmt.Errorf("%w: the test join has more than 2^64 rows", ErrOverflow)
				}
			}
			return nil
		}
		w := g.Index(n.Split.Table)
		if w < 0 {
			return fmt.Errorf("%w: the tree splits on table %q, not in the join graph", ErrData, n.Split.Table)
		}
		left, right, err := ip.split(parts, w, *n.Split)
		if err != nil {
			return err
		}
		if err := walk(n.Left, left); err != nil {
			return err
		}
		return walk(n.Right, right)
	}
	if err := walk(t.Root, parts); err != nil {
		return 0, 0, err
	}
	return correct, total, nil
}
