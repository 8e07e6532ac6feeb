package querylog

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The generated log has the shape §6.1 reports of the Yahoo! sample.
func TestGeneratedShape(t *testing.T) {
	log := Generate(PaperShape(4000, 1))
	g := NewGraph(log, nil)
	n := len(g.Queries)
	giant := float64(g.Components()[0]) / float64(n)
	if giant < 0.4 || giant > 0.65 {
		t.Errorf("giant component holds %.2f of the nodes, not about half", giant)
	}
	degs := make([]int, n)
	for i := range degs {
		degs[i] = g.Degree(i)
	}
	slices.Sort(degs)
	median, high := degs[n/2], 0
	for _, d := range degs {
		if d >= 10*max(1, median) {
			high++
		}
	}
	if share := float64(high) / float64(n); share < 0.06 || share > 0.12 {
		t.Errorf("%.3f of the nodes have very high degree, not about 9 %%", share)
	}
	if d := Density(g.Edges(), n); d <= 0 || d > 0.01 {
		t.Errorf("density %g is not low", d)
	}
	rare := 0
	for _, f := range g.Freq {
		if f <= 2 {
			rare++
		}
	}
	if float64(rare) < 0.5*float64(n) {
		t.Errorf("%d of %d queries are rare: frequencies have no heavy tail", rare, n)
	}
	st := stats(log)
	nav, few := 0, 0
	for _, s := range st {
		if s.nav {
			nav++
		} else if s.results < 5 {
			few++
		}
	}
	if nav == 0 || few == 0 {
		t.Errorf("%d navigational queries and %d with fewer than 5 results: the filters have no work", nav, few)
	}
}

// The attack maps URLs on the raw log and finds nothing on the
// publication; every measure of §4 holds on the rows.
func TestSanitiseDefeatsAttack(t *testing.T) {
	log := Generate(PaperShape(2000, 7))
	raw := Attack(RawClicks(log))
	exact := 0
	for _, p := range raw {
		if len(p.URLs) == 1 {
			exact++
		}
	}
	if len(raw) == 0 || exact == 0 {
		t.Fatalf("the attack found %d pairs (%d exact mappings) on the raw log", len(raw), exact)
	}
	st := stats(log)
	for _, m := range Methods() {
		rows, rep, err := Sanitise(context.Background(), log, 5, m, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if pairs := Attack(PublishedClicks(rows)); len(pairs) != 0 {
			t.Errorf("%s: the attack finds %d pairs on the publication, first %+v", m, len(pairs), pairs[0])
		}
		last := rep.Graph.Steps[len(rep.Graph.Steps)-1]
		if last.Density != 0 || last.Edges != 0 || rep.Navigational == 0 || rep.FewResults == 0 {
			t.Errorf("%s: report %+v, last step %+v", m, rep, last)
		}
		checkRows(t, m, log, st, rows)
	}
}

// checkRows checks the publication against the raw log: only kept
// queries, no raw user or URL, one suffix per site and one id per URL.
func checkRows(t *testing.T, m Method, log []Record, st map[string]*queryStats, rows []Row) {
	t.Helper()
	users, urls := map[string]bool{}, map[string]bool{}
	for _, r := range log {
		users[r.User], urls[r.Click] = true, true
	}
	siteOf := map[string]string{}
	for _, r := range rows {
		s := st[r.Query]
		if s == nil || s.nav || s.results < 5 {
			t.Fatalf("%s: published query %q is navigational or has fewer than k results", m, r.Query)
		}
		if users[r.User] || (r.Click != "" && urls[r.Click]) || strings.Contains(r.Click, "site") {
			t.Fatalf("%s: row %+v shows a raw user or URL", m, r)
		}
		if r.Click == "" {
			continue
		}
		if s, ok := siteOf[r.Click]; ok && s != SiteOf(r.Click) {
			t.Fatalf("%s: id %s has two sites", m, r.Click)
		}
		siteOf[r.Click] = SiteOf(r.Click)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: nothing published", m)
	}
}

func TestSanitiseBadK(t *testing.T) {
	if _, _, err := Sanitise(context.Background(), handLog(), 0, ByDegree, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("k = 0 ran")
	}
}

// Ids keep the site structure (§4.1 option 2): two pages of one site share
// a suffix, pages of two sites do not.
func TestIDsPerSite(t *testing.T) {
	log := []Record{
		{User: "x", Query: "q1", Time: "1", Click: "a.org/1", Results: 9},
		{User: "x", Query: "q1", Time: "1", Click: "a.org/2", Results: 9},
		{User: "y", Query: "q2", Time: "2", Click: "b.org/1", Results: 9},
	}
	rows, _, err := Sanitise(context.Background(), log, 5, ByDegree, rand.New(rand.NewPCG(3, 4)))
	if err != nil || len(rows) != 3 {
		t.Fatalf("%v %+v", err, rows)
	}
	if rows[0].Click == rows[1].Click || SiteOf(rows[0].Click) != SiteOf(rows[1].Click) || SiteOf(rows[2].Click) == SiteOf(rows[0].Click) {
		t.Errorf("ids %s %s %s", rows[0].Click, rows[1].Click, rows[2].Click)
	}
	if rows[0].User != rows[1].User || rows[0].User == rows[2].User {
		t.Errorf("pseudonyms %s %s %s", rows[0].User, rows[1].User, rows[2].User)
	}
}
