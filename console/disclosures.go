package console

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/cohortdm/cohort/audit"
)

// The disclosures view: the audit ledger as this organisation's answer to
// "what left our node", per job, per peer and per disclosure kind, with
// totals, charts and exports of the rows selected.

type disclosuresData struct {
	Filter       ledgerFilter
	Peers, Kinds []string // what the filters offer
	Messages     int
	Bytes        int64
	ByPeer       barChart
	ByKind       barChart
	OverTime     colChart
	Bucket       string
	// Rows is one page of the rows selected, newest first.
	Rows      []audit.Row
	RowCount  int
	Pager     pager
	Decisions []audit.Entry // the latest, newest first
	DecCount  int
	State     ledgerState
	Query     string // the filter as a query string, for the exports
}

// decisionsShown is how many policy decisions the view lists.
const decisionsShown = 20

// overTimeBuckets is how many columns the chart over time has at most.
const overTimeBuckets = 48

func filterOf(q url.Values) ledgerFilter {
	return ledgerFilter{Job: q.Get("job"), Peer: q.Get("peer"), Disclosure: q.Get("disclosure")}
}

func (c *Console) disclosuresPage(r *http.Request) (*view, error) {
	q := r.URL.Query()
	d := disclosuresData{Filter: filterOf(q)}
	fq := url.Values{}
	for k, v := range map[string]string{"job": d.Filter.Job, "peer": d.Filter.Peer, "disclosure": d.Filter.Disclosure} {
		if v != "" {
			fq.Set(k, v)
		}
	}
	d.Query = fq.Encode()
	c.ledger.read(func(l *ledgerIndex) { l.fill(&d, q) })
	return &view{page: "disclosures", title: "Disclosures", nav: "disclosures", live: true, data: d}, nil
}

// fill sets what the view shows of the rows d.Filter selects, from the
// totals kept (totals.go) unless the filter names a job, whose rows and
// messages are few. l.mu is held.
func (l *ledgerIndex) fill(d *disclosuresData, q url.Values) {
	d.State = l.state()
	d.Peers, d.Kinds = slices.Sorted(slices.Values(l.peers)), slices.Sorted(slices.Values(l.discs))
	byPeer, byKind := map[string]*audit.Row{}, map[string]*audit.Row{}
	f := d.Filter
	var selected []int
	n := len(l.rows) // how many rows are selected
	switch {
	case f.Job != "":
		for _, i := range l.jobRows[f.Job] {
			if row := &l.rows[i]; f.match(row) {
				selected = append(selected, i)
				addTo(byPeer, row.Peer, row)
				addTo(byKind, row.Disclosure, row)
			}
		}
		n = len(selected)
	default:
		if f.Peer != "" || f.Disclosure != "" {
			selected = l.candidates(f)
			n = len(selected)
		}
		for k, t := range l.totals.byPair {
			if peer, disc := l.peers[k.peer], l.discs[k.disc]; (f.Peer == "" || peer == f.Peer) && (f.Disclosure == "" || disc == f.Disclosure) {
				addTo(byPeer, peer, t)
				addTo(byKind, disc, t)
			}
		}
	}
	for _, t := range byPeer {
		d.Messages += t.Messages
		d.Bytes += t.Bytes
	}
	d.RowCount = n
	d.Pager = newPager(Prefix+"disclosures", q, pageOf(q), n)
	lo, hi := d.Pager.bounds(n)
	for k := n - 1 - lo; k >= n-hi; k-- {
		i := k // every row is selected
		if f != (ledgerFilter{}) {
			i = selected[k]
		}
		d.Rows = append(d.Rows, l.rows[i])
	}
	d.ByPeer = totalsChart("bytes sent per peer", byPeer, func(string) string { return "sent" })
	d.ByKind = totalsChart("bytes sent per disclosure kind", byKind, discClass)
	d.OverTime, d.Bucket = l.overTime(f)
	decs := l.decisions
	if f.Job != "" {
		decs = nil
		for _, i := range l.jobDecs[f.Job] {
			decs = append(decs, l.decisions[i])
		}
	}
	d.DecCount = len(decs)
	for i := len(decs) - 1; i >= 0 && len(d.Decisions) < decisionsShown; i-- {
		d.Decisions = append(d.Decisions, decs[i])
	}
}

func addTo(m map[string]*audit.Row, k string, r *audit.Row) {
	t, ok := m[k]
	if !ok {
		t = &audit.Row{}
		m[k] = t
	}
	t.Messages += r.Messages
	t.Bytes += r.Bytes
}

func totalsChart(label string, totals map[string]*audit.Row, class func(string) string) barChart {
	var rows []barRow
	for _, k := range slices.Sorted(maps.Keys(totals)) {
		t := totals[k]
		rows = append(rows, barRow{Label: k, Value: humanBytes(t.Bytes), Parts: []part{{Class: class(k), Value: float64(t.Bytes),
			Title: fmt.Sprintf("%s: %s in %s messages", k, humanBytes(t.Bytes), thousands(int64(t.Messages)))}}})
	}
	return hbarsWide(label, rows, nil, hNarrowW)
}

// overTime draws the bytes the filter selects over time, stacked by
// disclosure kind: from the buckets kept per pair of peer and kind
// (totals.go), or from the job's messages if the filter names one.
// l.mu is held.
func (l *ledgerIndex) overTime(f ledgerFilter) (colChart, string) {
	first, last := l.span()
	width := bucketWidth(last.Sub(first)+time.Second, overTimeBuckets)
	start := first.Truncate(width)
	n := int(last.Sub(start)/width) + 1
	if len(l.points) == 0 {
		n = 0
	}
	peer, disc := lookup(l.peerAt, f.Peer), lookup(l.discAt, f.Disclosure)
	sums := make([][]float64, n)
	add := func(at int64, k pairKey, bytes int64) {
		if (f.Peer != "" && k.peer != peer) || (f.Disclosure != "" && k.disc != disc) {
			return
		}
		b := int(time.Unix(at, 0).Sub(start) / width)
		if sums[b] == nil {
			sums[b] = make([]float64, len(l.discs))
		}
		sums[b][k.disc] += float64(bytes)
	}
	if job := lookup(l.jobAt, f.Job); f.Job != "" {
		if s, ok := l.totals.jobSpan[job]; ok {
			for _, p := range l.points[s[0] : s[1]+1] {
				if p.job == job {
					add(p.unix, pairKey{p.peer, p.disc}, p.bytes)
				}
			}
		}
	} else if n > 0 {
		for k, b := range l.totals.series[slices.Index(bucketWidths(), width)] {
			add(k.start, k.pair, b)
		}
	}
	return l.stackedOverTime(sums, start, width)
}

// stackedOverTime draws the bytes summed per bucket of width from start
// and per disclosure kind (sums[bucket][kind], nil for an empty bucket)
// as stacked columns. l.mu is held.
func (l *ledgerIndex) stackedOverTime(sums [][]float64, start time.Time, width time.Duration) (colChart, string) {
	order := slices.Clone(l.discs)
	slices.Sort(order)
	var stacks [][]part
	used := map[string]bool{}
	for b, s := range sums {
		var st []part
		for _, name := range order {
			if s == nil {
				break
			}
			if v := s[l.discAt[name]]; v > 0 {
				used[name] = true
				st = append(st, part{Class: discClass(name), Value: v,
					Title: fmt.Sprintf("%s from %s: %s", name, when(start.Add(time.Duration(b)*width)), humanBytes(int64(v)))})
			}
		}
		stacks = append(stacks, st)
	}
	return columns("bytes sent over time", start, width, stacks, legendOf(slices.Sorted(maps.Keys(used))),
		func(v float64) string { return humanBytes(int64(v)) }), duration(width)
}

// lookup is the index of an interned name, -1 (no point) if unknown.
func lookup(at map[string]int32, s string) int32 {
	if i, ok := at[s]; ok {
		return i
	}
	return -1
}

// exportCSV writes the rows the filter selects as CSV.
func (c *Console) exportCSV(w http.ResponseWriter, r *http.Request, _ *session) {
	c.export(w, r, formatCSV)
}

// exportJSONL writes the rows the filter selects as JSON lines, one
// audit.Row each.
func (c *Console) exportJSONL(w http.ResponseWriter, r *http.Request, _ *session) {
	c.export(w, r, formatJSONL)
}

func (c *Console) download(w http.ResponseWriter, ext, ctype string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-disclosures.%s"`, safeName(c.node.Name()), ext))
}

// cell keeps a spreadsheet from reading a cell as a formula.
func cell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}
