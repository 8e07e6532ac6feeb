package joinprop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
)

// IntersectEdges intersects, on every edge of g that touches one of the
// party's own tables, its join values with the other end's: locally when
// the party holds both ends, else by one private set intersection with
// the other end's party, all edges at once, on sub-channels PREFIX/EDGE
// of step (PREFIX also names the purpose: "psi" for training or
// prediction rows, "test-psi" for a test set). values(t, e) are the join
// values of the party's table t on edge e. By edge, the shared values,
// sorted; nil for an edge the party takes no part in.
//
// Each PSI runs psi's mode (Auto picks per exchange) with the party's
// psi.TableStore for its end, so that psi's unbalanced mode, for very
// unequal ends, keeps its key by the data the table resolves to, not by
// a spec's name. sjc and boost both intersect this way; no kind imports
// another, so it is written here, beside the graph.
func IntersectEdges(ctx context.Context, p job.Participant, g *Graph, step job.Step, prefix string, mode psi.Mode, values func(t, e int) []string) ([][]string, error) {
	owns := func(t int) bool { return g.Tables[t].Party == p.Self() }
	shared := make([][]string, len(g.Edges))
	errs := make([]error, len(g.Edges))
	var wg sync.WaitGroup
	for e, ed := range g.Edges {
		pi, ci := g.Index(ed.Parent), e+1
		po, co := owns(pi), owns(ci)
		switch {
		case po && co:
			shared[e] = Intersect(values(pi, e), values(ci, e))
		case po || co:
			mine, peer, role := pi, ci, psi.Sender
			if co {
				mine, peer, role = ci, pi, psi.Receiver
			}
			wg.Go(func() {
				shared[e], errs[e] = intersectEdge(ctx, p, g, step.Sub(fmt.Sprintf("%s/%d", prefix, e)), prefix, mode, e, mine, values(mine, e), g.Tables[peer].Party, role)
			})
		}
	}
	wg.Wait()
	return shared, errors.Join(errs...)
}

// intersectEdge runs edge e's PSI with the party peer: the values of
// vals (the join values of the party's table t) that peer's table holds
// too, sorted.
func intersectEdge(ctx context.Context, p job.Participant, g *Graph, step job.Step, prefix string, mode psi.Mode, e, t int, vals []string, peer string, role psi.Role) ([]string, error) {
	store, err := psi.TableStore(p, g.Tables[t].Name, prefix == "test-psi", prefix, g.EdgeCols(Incident{Edge: e, ParentSide: t != e+1}))
	if err != nil {
		return nil, fmt.Errorf("edge %s: %w", g.EdgeName(e), err)
	}
	cfg := psi.Config{Edge: g.EdgeName(e), MaxElements: max(psi.DefaultMaxElements, 2*len(vals)), Mode: mode, Store: store}
	out, err := psi.IntersectValues(ctx, cfg.Intersector(), p, step, peer, role, vals)
	if err != nil {
		return nil, fmt.Errorf("edge %s with party %s: %w", g.EdgeName(e), peer, err)
	}
	slices.Sort(out)
	return out, nil
}
