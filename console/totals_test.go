package console

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
)

// fillEveryRow is the disclosures view as the console computed it before
// it kept its totals (commit 40035a2): every row the filter selects added
// up, and every message walked for the chart, on each request. The view
// from the totals kept must equal it.
func fillEveryRow(l *ledgerIndex, d *disclosuresData, q url.Values) {
	d.State = l.state()
	d.Peers, d.Kinds = slices.Sorted(slices.Values(l.peers)), slices.Sorted(slices.Values(l.discs))
	byPeer, byKind := map[string]*audit.Row{}, map[string]*audit.Row{}
	var selected []int
	for i := range l.rows {
		row := &l.rows[i]
		if !d.Filter.match(row) {
			continue
		}
		selected = append(selected, i)
		d.Messages += row.Messages
		d.Bytes += row.Bytes
		addTo(byPeer, row.Peer, row)
		addTo(byKind, row.Disclosure, row)
	}
	d.RowCount = len(selected)
	d.Pager = newPager(Prefix+"disclosures", q, pageOf(q), len(selected))
	lo, hi := d.Pager.bounds(len(selected))
	for k := len(selected) - 1 - lo; k >= len(selected)-hi; k-- {
		d.Rows = append(d.Rows, l.rows[selected[k]])
	}
	d.ByPeer = totalsChart("bytes sent per peer", byPeer, func(string) string { return "sent" })
	d.ByKind = totalsChart("bytes sent per disclosure kind", byKind, discClass)
	d.OverTime, d.Bucket = overTimeEveryPoint(l, d.Filter)
	decs := l.decisions
	if d.Filter.Job != "" {
		decs = nil
		for _, i := range l.jobDecs[d.Filter.Job] {
			decs = append(decs, l.decisions[i])
		}
	}
	d.DecCount = len(decs)
	for i := len(decs) - 1; i >= 0 && len(d.Decisions) < decisionsShown; i-- {
		d.Decisions = append(d.Decisions, decs[i])
	}
}

// overTimeEveryPoint is the chart over time as drawn before (commit
// 40035a2), from every message.
func overTimeEveryPoint(l *ledgerIndex, f ledgerFilter) (colChart, string) {
	var first, last time.Time
	if len(l.points) > 0 {
		lo, hi := l.points[0].unix, l.points[0].unix
		for _, p := range l.points {
			lo, hi = min(lo, p.unix), max(hi, p.unix)
		}
		first, last = time.Unix(lo, 0), time.Unix(hi, 0)
	}
	width := bucketWidth(last.Sub(first)+time.Second, overTimeBuckets)
	start := first.Truncate(width)
	n := int(last.Sub(start)/width) + 1
	if len(l.points) == 0 {
		n = 0
	}
	peer, disc, job := lookup(l.peerAt, f.Peer), lookup(l.discAt, f.Disclosure), lookup(l.jobAt, f.Job)
	sums := make([][]float64, n)
	for _, p := range l.points {
		if (f.Peer != "" && p.peer != peer) || (f.Disclosure != "" && p.disc != disc) || (f.Job != "" && p.job != job) {
			continue
		}
		b := int(time.Unix(p.unix, 0).Sub(start) / width)
		if sums[b] == nil {
			sums[b] = make([]float64, len(l.discs))
		}
		sums[b][p.disc] += float64(p.bytes)
	}
	return l.stackedOverTime(sums, start, width)
}

// checkTotals compares the view from the totals kept with fillEveryRow's,
// for each filter and for the first, second and last page.
func checkTotals(t testing.TB, idx *ledgerIndex, filters ...ledgerFilter) {
	t.Helper()
	idx.read(func(l *ledgerIndex) {
		for _, f := range append(filters, ledgerFilter{}) {
			for _, page := range []string{"", "2", "1000000"} {
				q := url.Values{}
				if page != "" {
					q.Set("page", page)
				}
				got, want := disclosuresData{Filter: f}, disclosuresData{Filter: f}
				l.fill(&got, q)
				fillEveryRow(l, &want, q)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("filter %+v, page %q: the view from the totals kept differs from every row added up:\n%+v\n%+v", f, page, got, want)
				}
			}
		}
	})
}

// The disclosures view from the totals kept equals every row added up
// and every message charted, as rows are added and as rows already shown
// grow (a running job's messages), with and without filters, on every
// width of the chart over time (the ledger's span grows from seconds to
// months, so the narrower widths' buckets are dropped on the way).
func TestTotalsEqualEveryRowAddedUp(t *testing.T) {
	path, led := openLedger(t)
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	peers := []string{"org1", "org2", "=cmd"}
	discs := []string{"ciphertext", "control", "decryption-share"}
	send := func(job string, i int) {
		t.Helper()
		e := audit.Entry{Time: at, Job: job, Phase: "p", Peer: peers[i%len(peers)], Type: "job/output", Bytes: 1 + i%97, Disclosure: discs[(i/2)%len(discs)]}
		if err := led.Append(e); err != nil {
			t.Fatal(err)
		}
		if err := led.Append(audit.Entry{Time: at, Job: job, Type: audit.DecisionType, Disclosure: "control", Decision: "accepted"}); err != nil {
			t.Fatal(err)
		}
	}
	idx := newLedgerIndex(path)
	filters := []ledgerFilter{{Job: "job-3"}, {Job: "running"}, {Peer: "org2"}, {Disclosure: "control"},
		{Peer: "=cmd", Disclosure: "ciphertext"}, {Peer: "nobody"}, {Disclosure: "nothing"}, {Job: "job-3", Peer: "org1"}}
	checkTotals(t, idx, filters...)
	widths := map[string]bool{}
	// Each round adds jobs and grows the rows of the job still running;
	// the gap between messages grows so that the span crosses every width.
	for round, gap := 0, time.Second/4; round < 14; round, gap = round+1, gap*3 {
		for i := range 40 {
			send(fmt.Sprintf("job-%d", round*40+i/3), i)
			send("running", round+i)
			at = at.Add(gap)
		}
		checkTotals(t, idx, filters...)
		idx.read(func(l *ledgerIndex) { _, w := l.overTime(ledgerFilter{}); widths[w] = true })
	}
	if len(widths) < len(bucketWidths())-1 {
		t.Fatalf("the chart used %d widths (%v), want most of the %d", len(widths), slices.Sorted(maps.Keys(widths)), len(bucketWidths()))
	}
}
