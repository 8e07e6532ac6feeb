package querylog

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// The figures of docs/querylog.md: the three methods on a generated log
// of the paper's shape, with the comparison §6.4 reports checked.
//
//	COHORT_QUERYLOG_QUERIES=50000 go test ./querylog -run TestFigures -v -count=1
func TestFigures(t *testing.T) {
	n := 4000
	if s := os.Getenv("COHORT_QUERYLOG_QUERIES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	log := Generate(PaperShape(n, 1))
	g := NewGraph(log, nil)
	comps := g.Components()
	t.Logf("%d records, %d queries, %d edges, density %.6f, giant component %.1f %%",
		len(log), len(g.Queries), g.Edges(), Density(g.Edges(), len(g.Queries)), 100*float64(comps[0])/float64(len(g.Queries)))
	t.Logf("| method | nodes removed | nodes kept | query volume kept | clicked documents kept |")
	last := map[Method]Step{}
	for _, m := range Methods() {
		d, err := Disconnect(context.Background(), g, m)
		if err != nil {
			t.Fatal(err)
		}
		s := d.Steps[len(d.Steps)-1]
		last[m] = s
		t.Logf("| %s | %d (%.1f %%) | %d | %d of %d (%.1f %%) | %d of %d (%.1f %%) |", m, len(d.Steps),
			pct(len(d.Steps), d.Start.Nodes), s.Nodes, s.Volume, d.Start.Volume, pct(s.Volume, d.Start.Volume),
			s.Clicks, d.Start.Clicks, pct(s.Clicks, d.Start.Clicks))
		for _, p := range []int{10, 20, 30, 40, 50} { // Figs. 5–7: the curves
			i := p*d.Start.Nodes/100 - 1
			if i < len(d.Steps) {
				c := d.Steps[i]
				t.Logf("    %s at %d %% removed: edges %.1f %%, volume %.1f %%, clicks %.1f %%, density %.6f", m, p,
					pct(c.Edges, d.Start.Edges), pct(c.Volume, d.Start.Volume), pct(c.Clicks, d.Start.Clicks), c.Density)
			}
		}
	}
	// §6.4: Method 2 keeps the most volume; Method 1 removes the fewest
	// nodes but the most volume and clicks; Method 3 removes more nodes
	// than Method 2.
	m1, m2, m3 := last[ByDegree], last[ByDegreeFreq], last[ByDegreeClick]
	if m2.Volume <= m1.Volume || m2.Volume < m3.Volume || m1.Clicks >= m2.Clicks || m1.Clicks >= m3.Clicks {
		t.Errorf("volume and clicks kept do not rank the methods as §6.4: %+v %+v %+v", m1, m2, m3)
	}
	if m1.Nodes <= m2.Nodes || m3.Nodes > m2.Nodes {
		t.Errorf("nodes kept do not rank the methods as §6.4: %d %d %d", m1.Nodes, m2.Nodes, m3.Nodes)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
