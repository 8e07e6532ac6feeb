package querylog

import (
	"strings"
	"unicode"
)

// Record is one line of the log the paper assumes (§3, AOL's schema): who
// asked what and when, and which result was clicked at which rank.
// Results, when the engine recorded it, is the size of the result-set;
// zero means unknown.
type Record struct {
	User    string
	Query   string
	Time    string
	Rank    int
	Click   string // the clicked URL (host, or host/path); empty for no click
	Results int
}

// Site is a clicked URL's site: its host, lower-cased, scheme dropped (the
// paper's website is the pages under one host name, §3).
func Site(url string) string {
	u := strings.ToLower(strings.TrimSpace(url))
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

// terms splits a query into lower-case words.
func terms(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Navigational reports whether query names the root of site: every term is
// a label of the host, or the terms run together are one ("bank of
// america" for bankofamerica.com). These are the vulnerable navigational
// queries of §4.2, which disclose the site whatever id replaces it.
func Navigational(query, site string) bool {
	ts := terms(query)
	if len(ts) == 0 || site == "" {
		return false
	}
	labels := map[string]bool{}
	for _, l := range strings.FieldsFunc(site, func(r rune) bool { return r == '.' || r == '-' }) {
		if l != "www" {
			labels[l] = true
		}
	}
	if labels[strings.Join(ts, "")] {
		return true
	}
	for _, t := range ts {
		if !labels[t] {
			return false
		}
	}
	return true
}

// queryStats is what the filters and the graph need of one distinct query.
type queryStats struct {
	freq    int             // submissions: distinct (user, time) pairs
	clicks  int             // clicked documents: records with a click
	results int             // the result-set size, or its lower bound
	urls    map[string]bool // clicked URLs
	sites   map[string]bool // clicked sites
	nav     bool
}

// stats groups the log by query. A query's results is the largest
// recorded size, or a lower bound where none is: its largest clicked rank
// or its distinct clicked URLs (an engine that showed rank r had r).
func stats(log []Record) map[string]*queryStats {
	out := map[string]*queryStats{}
	subs := map[[3]string]bool{}
	for _, r := range log {
		s := out[r.Query]
		if s == nil {
			s = &queryStats{urls: map[string]bool{}, sites: map[string]bool{}}
			out[r.Query] = s
		}
		if k := [3]string{r.Query, r.User, r.Time}; !subs[k] {
			subs[k] = true
			s.freq++
		}
		s.results = max(s.results, r.Results, r.Rank)
		if r.Click == "" {
			continue
		}
		s.clicks++
		s.urls[r.Click] = true
		site := Site(r.Click)
		s.sites[site] = true
		s.nav = s.nav || Navigational(r.Query, site)
	}
	for _, s := range out {
		s.results = max(s.results, len(s.urls))
	}
	return out
}
