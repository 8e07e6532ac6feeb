package querylog

import (
	"slices"
	"strings"
)

// Click is what the intersection attack reads of a log: a query and the
// URL and site it clicked (raw, or the published id and its suffix).
type Click struct{ Query, URL, Site string }

// Pair is two queries whose clicked result-sets intersect, the pair step 5
// of the attack (§4.2) issues live to map the shared ids to real URLs.
type Pair struct {
	A, B  string
	URLs  []string // the shared URLs: one is an exact mapping
	Sites []string // the shared sites (the suffix makes these visible too)
}

// Attack runs the general adversary's intersection attack (§4.2, the whole
// log scanned): every pair of distinct queries whose clicked URLs or
// sites intersect. The sanitised log must give none.
func Attack(clicks []Click) []Pair {
	bySite := map[string]map[string]bool{}
	urls := map[string]map[string]bool{}
	for _, c := range clicks {
		if c.URL == "" {
			continue
		}
		if bySite[c.Site] == nil {
			bySite[c.Site] = map[string]bool{}
		}
		bySite[c.Site][c.Query] = true
		if urls[c.Query] == nil {
			urls[c.Query] = map[string]bool{}
		}
		urls[c.Query][c.URL] = true
	}
	pairs := map[[2]string]*Pair{}
	sites := make([]string, 0, len(bySite))
	for s := range bySite {
		sites = append(sites, s)
	}
	slices.Sort(sites)
	for _, s := range sites {
		qs := make([]string, 0, len(bySite[s]))
		for q := range bySite[s] {
			qs = append(qs, q)
		}
		slices.Sort(qs)
		for i, a := range qs {
			for _, b := range qs[i+1:] {
				p := pairs[[2]string{a, b}]
				if p == nil {
					p = &Pair{A: a, B: b}
					for u := range urls[a] {
						if urls[b][u] {
							p.URLs = append(p.URLs, u)
						}
					}
					slices.Sort(p.URLs)
					pairs[[2]string{a, b}] = p
				}
				p.Sites = append(p.Sites, s)
			}
		}
	}
	out := make([]Pair, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y Pair) int {
		if x.A != y.A {
			return strings.Compare(x.A, y.A)
		}
		return strings.Compare(x.B, y.B)
	})
	return out
}

// RawClicks is the attack's view of a raw log.
func RawClicks(log []Record) []Click {
	out := make([]Click, 0, len(log))
	for _, r := range log {
		out = append(out, Click{Query: r.Query, URL: r.Click, Site: Site(r.Click)})
	}
	return out
}

// PublishedClicks is the attack's view of a publication.
func PublishedClicks(rows []Row) []Click {
	out := make([]Click, 0, len(rows))
	for _, r := range rows {
		out = append(out, Click{Query: r.Query, URL: r.Click, Site: SiteOf(r.Click)})
	}
	return out
}
