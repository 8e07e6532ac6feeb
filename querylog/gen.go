package querylog

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// GenParams shape a generated log.
type GenParams struct {
	Queries int     // distinct queries
	Sites   int     // ordinary sites
	Hubs    int     // portal sites that many queries reach
	HubRate float64 // the share of queries that click a hub
	Users   int
	MaxFreq int // the most submissions of one query
	Seed    uint64
}

// PaperShape is a log of the shape of the paper's Yahoo! 2005 sample (§6.1)
// at a size a test runs in a second: a giant component of about half the
// queries, a degree distribution that is no power law with about 9 % of
// the nodes of very high degree (the queries of portal sites), a low
// density, and query frequencies with a heavy tail, so most queries are
// rare (§6.4).
func PaperShape(queries int, seed uint64) GenParams {
	return GenParams{Queries: queries, Sites: queries * 5 / 4, Hubs: max(1, queries/1000), HubRate: 0.09,
		Users: max(1, queries/4), MaxFreq: min(2000, max(10, queries/2)), Seed: seed}
}

// Generate writes a log of p's shape. About 4 % of its queries are
// navigational (a site's name, clicking that site) and about 3 % have
// fewer than 5 results, so that the filters of §4.2 have work to do.
func Generate(p GenParams) []Record {
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	host := func(i int) string { return fmt.Sprintf("www.site%05d.com", i) }
	var log []Record
	clock := 0
	for q := range p.Queries {
		var text string
		var sites []string
		results := 10 + rng.IntN(100000)
		switch u := rng.Float64(); {
		case u < 0.04: // navigational
			s := rng.IntN(p.Sites)
			text, sites = fmt.Sprintf("site%05d", s), []string{host(s)}
		case u < 0.07: // fewer than 5 results
			results = 1 + rng.IntN(4)
			fallthrough
		default:
			text = fmt.Sprintf("topic%d term%05d", rng.IntN(50), q)
			for range 1 + geometric(rng, 0.35) {
				sites = append(sites, host(rng.IntN(p.Sites)))
			}
			if rng.Float64() < p.HubRate {
				sites = append(sites, fmt.Sprintf("www.portal%02d.com", rng.IntN(p.Hubs)))
			}
		}
		freq := min(max(1, p.MaxFreq), int(math.Pow(1-rng.Float64(), -1/1.1)))
		for f := range freq {
			clock++
			r := Record{User: fmt.Sprintf("u%06d", rng.IntN(p.Users)), Query: text,
				Time: fmt.Sprintf("2005-06-%02d %06d", 1+clock%30, clock), Results: results}
			// the first submission clicks every site of the query (one
			// line per click, as in AOL's log), later ones one at random
			clicked := sites
			if f > 0 {
				clicked = nil
				if rng.Float64() < 0.8 {
					clicked = []string{sites[rng.IntN(len(sites))]}
				}
			}
			if len(clicked) == 0 {
				log = append(log, r)
			}
			for _, s := range clicked {
				r.Click = fmt.Sprintf("http://%s/p%d", s, rng.IntN(4))
				r.Rank = min(results, 1+geometric(rng, 0.5))
				log = append(log, r)
			}
		}
	}
	return log
}

// geometric counts failures before the first success of probability 1−p.
func geometric(rng *rand.Rand, p float64) int {
	n := 0
	for rng.Float64() < p {
		n++
	}
	return n
}
