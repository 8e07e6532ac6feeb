package sjc

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// wireFixture is the thesis's worked example after class propagation:
// every table's Local and Part, every edge's shared values, alignments.
type wireFixture struct {
	g      *Graph
	locals []*Local
	parts  []Part
	shared [][]string
	al     aligns
}

func newWireFixture(tb testing.TB) *wireFixture {
	tb.Helper()
	spec, err := job.LoadSpec("testdata/xu-example/spec.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	g, err := NewGraph(spec)
	if err != nil {
		tb.Fatal(err)
	}
	data := map[string]*table.Table{}
	for _, p := range spec.Parties {
		for _, ts := range p.Tables {
			schema := map[string]table.Kind{}
			for c, k := range spec.Schema[ts.Name] {
				schema[c] = table.Kind(k)
			}
			if data[ts.Name], err = table.Load(filepath.Join(spec.Dir, ts.Path), ts.Name, schema); err != nil {
				tb.Fatal(err)
			}
		}
	}
	labels, err := Labels(g, data[g.Target()])
	if err != nil {
		tb.Fatal(err)
	}
	f := &wireFixture{g: g, al: aligns{}}
	if f.locals, err = Prepare(g, data, labels, DefaultParams()); err != nil {
		tb.Fatal(err)
	}
	if f.parts, err = Propagate(g, f.locals); err != nil {
		tb.Fatal(err)
	}
	f.shared = make([][]string, len(g.Edges))
	for e, ed := range g.Edges {
		f.shared[e] = Intersect(f.locals[g.Index(ed.Parent)].JoinValues(e), f.locals[e+1].JoinValues(e))
	}
	return f
}

// TestWireSummaryMatchesText: a summary sent by position (wireClass,
// wireSplit, then applyWireClass, applyWireSplit on the receiver) gives
// the receiver exactly the Parts the text summaries (Summary,
// SplitSummary, Forward, Backward, ApplySplit) give, on every edge in both
// directions, and decodes to the same text summary.
func TestWireSummaryMatchesText(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t)
	split := tree.Split{Party: "p2", Table: "T2", Column: "Age", Op: tree.OpLE, Num: 6}
	w := f.g.Index("T2")
	left, right, err := f.locals[w].SplitOwn(f.parts[w], split)
	if err != nil {
		t.Fatal(err)
	}
	for e, ed := range f.g.Edges {
		for _, dir := range [][2]int{{f.g.Index(ed.Parent), e + 1}, {e + 1, f.g.Index(ed.Parent)}} {
			from, to := f.locals[dir[0]], f.locals[dir[1]]
			sal, err := f.al.of(from, e, f.shared[e])
			if err != nil {
				t.Fatal(err)
			}
			ral, err := f.al.of(to, e, f.shared[e])
			if err != nil {
				t.Fatal(err)
			}
			es, err := from.wireClass(f.parts[dir[0]], sal)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := from.Summary(f.parts[dir[0]], e, f.shared[e])
			if err != nil {
				t.Fatal(err)
			}
			if back, err := roundTrip(t, es).ClassSummary(f.shared[e]); err != nil || !reflect.DeepEqual(back, cs) {
				t.Fatalf("edge %d: class summary %+v decodes to %+v (%v)", e, cs, back, err)
			}
			for _, fwd := range []bool{true, false} {
				got, err1 := to.applyWireClass(f.parts[dir[1]], &es, ral, fwd)
				apply := to.Backward
				if fwd {
					apply = to.Forward
				}
				want, err2 := apply(f.parts[dir[1]], cs)
				if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("edge %d forward %v: by position %+v (%v), by text %+v (%v)", e, fwd, got, err1, want, err2)
				}
			}
			if dir[0] != w {
				continue
			}
			es, err = from.wireSplit(left, right, sal)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := from.SplitSummary(left, right, e)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := roundTrip(t, es).SplitSummary(f.shared[e]); err != nil || !reflect.DeepEqual(back, ss) {
				t.Fatalf("edge %d: split summary %+v decodes to %+v (%v)", e, ss, back, err)
			}
			gl, gr, err1 := to.applyWireSplit(f.parts[dir[1]], &es, ral)
			wl, wr, err2 := to.ApplySplit(f.parts[dir[1]], ss)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(gl, wl) || !reflect.DeepEqual(gr, wr) {
				t.Fatalf("edge %d split: by position %+v %+v (%v), by text %+v %+v (%v)", e, gl, gr, err1, wl, wr, err2)
			}
		}
	}
}

func roundTrip(t *testing.T, es EdgeSummary) *EdgeSummary {
	t.Helper()
	b, err := wire.Marshal(&es)
	if err != nil {
		t.Fatal(err)
	}
	var back EdgeSummary
	if err := wire.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// FuzzWireSummary: summary bytes from a peer, decoded as the session does
// and applied by position to every table of the worked example on their
// edge, give a Part or an error and never panic.
func FuzzWireSummary(f *testing.F) {
	fx := newWireFixture(f)
	for _, es := range []EdgeSummary{
		{Edge: 0, Pos: []byte{0, 0}, Counts: []byte{4, 0, 1, 3}},
		{Edge: 0, Pos: []byte{1}, Counts: []byte{2, 1}, Right: []byte{0, 1}},
		{Edge: 1, Pos: []byte{0x80, 0x80, 0x01}, Counts: []byte{0xff}},
		{Edge: 1, Pos: []byte{0, 0}, Counts: []byte{1, 1, 1, 1}, Right: []byte{1, 0, 0, 1}},
	} {
		b, _ := wire.Marshal(&es)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var es EdgeSummary
		if wire.Unmarshal(b, &es) != nil || es.Edge < 0 || es.Edge >= len(fx.g.Edges) {
			return
		}
		for i, l := range fx.locals {
			al, err := fx.al.of(l, es.Edge, fx.shared[es.Edge])
			if err != nil {
				continue // not on the edge
			}
			_, _ = l.applyWireClass(fx.parts[i], &es, al, true)
			_, _ = l.applyWireClass(fx.parts[i], &es, al, false)
			_, _, _ = l.applyWireSplit(fx.parts[i], &es, al)
		}
	})
}
