package sjc_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/sjc"
)

// TestSummariesHoldSharedValuesOnly runs class propagation and the root's
// split propagation of random schemas step by step and checks what each
// summary would disclose to the neighbour: join values of the edge's
// intersection only, never a non-shared one. (Attribute values cannot
// appear: a summary's only fields are the edge, join values and counts.)
func TestSummariesHoldSharedValuesOnly(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 11))
	checked := 0
	for attempt := 0; checked < 100 && attempt < 1000; attempt++ {
		rc := newRandomCase(rng)
		g, err := sjc.NewGraph(rc.spec)
		if err != nil {
			t.Fatal(err)
		}
		data := loadTables(t, rc.spec, rc.csv)
		labels, _ := sjc.Labels(g, data[g.Target()])
		locals, err := sjc.Prepare(g, data, labels, rc.p)
		if err != nil {
			t.Fatal(err)
		}
		shared := make([][]string, len(g.Edges))
		nonShared := map[string]bool{}
		for e, ed := range g.Edges {
			a, b := locals[g.Index(ed.Parent)].JoinValues(e), locals[e+1].JoinValues(e)
			shared[e] = sjc.Intersect(a, b)
			for _, v := range append(a, b...) {
				if _, ok := slices.BinarySearch(shared[e], v); !ok {
					nonShared[v] = true
				}
			}
		}
		onlyShared := func(what string, e int, values []string) {
			t.Helper()
			for _, v := range values {
				if _, ok := slices.BinarySearch(shared[e], v); !ok {
					t.Fatalf("case %d: %s on edge %d names %q, not a shared join value (non-shared: %v)", attempt, what, e, v, nonShared[v])
				}
			}
		}
		parts := make([]sjc.Part, len(locals))
		for i, l := range locals {
			parts[i] = l.Initial()
		}
		empty := false
		for _, tr := range sjc.ClassSchedule(g) {
			cs, err := locals[tr.From].Summary(parts[tr.From], tr.Edge, shared[tr.Edge])
			if err != nil {
				t.Fatal(err)
			}
			onlyShared("class summary", tr.Edge, cs.Values)
			if tr.Forward {
				parts[tr.To], err = locals[tr.To].Forward(parts[tr.To], cs)
			} else {
				parts[tr.To], err = locals[tr.To].Backward(parts[tr.To], cs)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range parts {
			empty = empty || p.Len() == 0
		}
		if empty {
			continue
		}
		// Split summaries of each table's best split at the root.
		for w, l := range locals {
			front, err := l.BestSplits(parts[w])
			if err != nil {
				t.Fatal(err)
			}
			if len(front) == 0 {
				continue
			}
			left, right, err := l.SplitOwn(parts[w], front[len(front)-1].Split)
			if err != nil {
				t.Fatal(err)
			}
			lp, rp := make([]sjc.Part, len(parts)), make([]sjc.Part, len(parts))
			lp[w], rp[w] = left, right
			for _, tr := range sjc.SplitSchedule(g, w) {
				ss, err := locals[tr.From].SplitSummary(lp[tr.From], rp[tr.From], tr.Edge)
				if err != nil {
					t.Fatal(err)
				}
				onlyShared("split summary", tr.Edge, ss.Values)
				if lp[tr.To], rp[tr.To], err = locals[tr.To].ApplySplit(parts[tr.To], ss); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(nonShared) > 0 {
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d cases with non-shared join values and a non-empty join", checked)
	}
}
