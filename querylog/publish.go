package querylog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// ErrParams is a bad k or method.
var ErrParams = errors.New("querylog: bad parameters")

// Row is one published record: ranks hidden, the user a pseudonym, the
// clicked URL an id "uN.sM" whose suffix sM is shared by the site's URLs.
type Row struct {
	User  string `json:"user" msgpack:"user"`
	Query string `json:"query" msgpack:"query"`
	Time  string `json:"time" msgpack:"time"`
	Click string `json:"click" msgpack:"click"`
}

// Report is what the sanitisation removed and the greedy heuristic's run.
type Report struct {
	Records      int           `json:"records"`
	Queries      int           `json:"queries"`
	Navigational int           `json:"navigational"` // queries removed as navigational
	FewResults   int           `json:"few_results"`  // queries removed with fewer than k results
	Graph        Disconnection `json:"-"`
	Published    int           `json:"published"` // rows published
}

// Sanitise publishes log under the paper's measures (see the package
// doc): k is the fewest results a published query has, m the greedy
// score. rng numbers the ids and pseudonyms, so they follow no order of
// the raw values.
func Sanitise(ctx context.Context, log []Record, k int, m Method, rng *rand.Rand) ([]Row, *Report, error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("%w: k = %d, not at least 1", ErrParams, k)
	}
	st := stats(log)
	rep := &Report{Records: len(log), Queries: len(st)}
	for _, s := range st {
		switch {
		case s.nav:
			rep.Navigational++
		case s.results < k:
			rep.FewResults++
		}
	}
	g := NewGraph(log, func(q string) bool { return !st[q].nav && st[q].results >= k })
	d, err := Disconnect(ctx, g, m)
	if err != nil {
		return nil, nil, err
	}
	rep.Graph = *d
	kept := map[string]bool{}
	for i, q := range g.Queries {
		if d.Kept[i] {
			kept[q] = true
		}
	}
	var out []Record
	for _, r := range log {
		if kept[r.Query] {
			out = append(out, r)
		}
	}
	rows := anonymise(out, rng)
	rep.Published = len(rows)
	return rows, rep, nil
}

// anonymise replaces users by pseudonyms and URLs by per-site-suffixed
// ids, numbered in a random order, and sorts the rows by value.
func anonymise(log []Record, rng *rand.Rand) []Row {
	users, urls, sites := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, r := range log {
		users[r.User] = true
		if r.Click != "" {
			urls[r.Click], sites[Site(r.Click)] = true, true
		}
	}
	user, url, site := shuffled(users, rng), shuffled(urls, rng), shuffled(sites, rng)
	rows := make([]Row, len(log))
	for i, r := range log {
		rows[i] = Row{User: "user" + strconv.Itoa(user[r.User]), Query: r.Query, Time: r.Time}
		if r.Click != "" {
			rows[i].Click = fmt.Sprintf("u%d.s%d", url[r.Click], site[Site(r.Click)])
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return strings.Compare(a.Query+"\x00"+a.Time+"\x00"+a.User+"\x00"+a.Click, b.Query+"\x00"+b.Time+"\x00"+b.User+"\x00"+b.Click)
	})
	return rows
}

// shuffled numbers a set's values 1..n in a random order.
func shuffled(set map[string]bool, rng *rand.Rand) map[string]int {
	vals := make([]string, 0, len(set))
	for v := range set {
		vals = append(vals, v)
	}
	slices.Sort(vals) // map order is not the rng's to decide
	rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	out := make(map[string]int, len(vals))
	for i, v := range vals {
		out[v] = i + 1
	}
	return out
}

// SiteOf is a published id's site suffix ("s7" of "u12.s7").
func SiteOf(id string) string {
	if i := strings.LastIndexByte(id, '.'); i >= 0 {
		return id[i+1:]
	}
	return id
}
