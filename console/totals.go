package console

import (
	"time"

	"github.com/cohortdm/cohort/audit"
)

// The disclosures page's totals are kept as the index reads the ledger,
// beside the rows and the exports' chunks, rather than added up from
// every row and message on each request: on a ledger of 100,000 tick jobs
// (4.4 MB of CSV) summing every row into the per-peer and per-kind totals
// and every message into the chart over time took the page to 37–97 ms
// p95 under load (docs/console.md). A page now reads a few totals per
// peer and kind, the rows it shows, and at most overTimeBuckets columns
// per pair of peer and kind; only a page for one job walks that job's
// rows and messages.

// pairKey names a peer and a disclosure kind by their places in the
// index's vocabularies (ledgerIndex.peers, ledgerIndex.discs).
type pairKey struct{ peer, disc int32 }

// ledgerTotals is what the disclosures page shows of the rows a filter
// without a job selects, kept current as rows are added and grow.
type ledgerTotals struct {
	byPair map[pairKey]*audit.Row // messages and bytes (Job unset)
	// The rows of one pair, one peer and one kind, in the order first
	// seen: a row's peer and kind never change, so each list is appended
	// to once per row.
	pairRows map[pairKey][]int
	peerRows map[int32][]int
	discRows map[int32][]int
	// jobSpan is where each job's points are among the index's, first
	// and last, for a page about one job: a job's messages are near each
	// other in the ledger, and a map of two ints a job gives the garbage
	// collector nothing to scan, where a list of points a job would be
	// one more object per job in a heap it marks on each cycle.
	jobSpan map[int32][2]int
	// first and last are the times (Unix seconds) of the first and last
	// message, valid when the index has a point.
	first, last int64
	// series[k] sums the bytes per bucket of widths()[k] and pair, kept
	// while the chart may still use that width (nil after).
	series []map[seriesKey]int64
}

// seriesKey is one bucket (its start, Unix seconds) of one pair.
type seriesKey struct {
	start int64
	pair  pairKey
}

func newLedgerTotals() ledgerTotals {
	return ledgerTotals{byPair: map[pairKey]*audit.Row{}, pairRows: map[pairKey][]int{}, peerRows: map[int32][]int{},
		discRows: map[int32][]int{}, jobSpan: map[int32][2]int{}, series: make([]map[seriesKey]int64, len(bucketWidths()))}
}

// addRow records row i, new, of pair k.
func (t *ledgerTotals) addRow(i int, k pairKey) {
	t.pairRows[k] = append(t.pairRows[k], i)
	t.peerRows[k.peer] = append(t.peerRows[k.peer], i)
	t.discRows[k.disc] = append(t.discRows[k.disc], i)
}

// grow adds messages and bytes of pair k.
func (t *ledgerTotals) grow(k pairKey, messages int, bytes int64) {
	s := t.byPair[k]
	if s == nil {
		s = &audit.Row{}
		t.byPair[k] = s
	}
	s.Messages += messages
	s.Bytes += bytes
}

// addPoint records point i, p (the index's points[i]), in its job's
// span of points, the ledger's span of time and the chart's buckets. Once the span no longer fits
// overTimeBuckets columns of a width, overTime never uses that width again
// (the span only grows until the index starts over), so its buckets are
// dropped; a width still in use has been since the first point. Each
// width kept holds at most overTimeBuckets+1 buckets per pair.
func (t *ledgerTotals) addPoint(i int, p point) {
	if i == 0 {
		t.first, t.last = p.unix, p.unix
	}
	t.first, t.last = min(t.first, p.unix), max(t.last, p.unix)
	if s, ok := t.jobSpan[p.job]; ok {
		t.jobSpan[p.job] = [2]int{s[0], i}
	} else {
		t.jobSpan[p.job] = [2]int{i, i}
	}
	at := time.Unix(p.unix, 0)
	span := time.Unix(t.last, 0).Sub(time.Unix(t.first, 0)) + time.Second
	widths := bucketWidths()
	for k, w := range widths {
		if k < len(widths)-1 && span >= w*overTimeBuckets {
			t.series[k] = nil
			continue
		}
		if t.series[k] == nil {
			t.series[k] = map[seriesKey]int64{}
		}
		t.series[k][seriesKey{at.Truncate(w).Unix(), pairKey{p.peer, p.disc}}] += p.bytes
	}
}
