package audit

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// Row totals the messages of one job sent to one peer with one kind of
// disclosure: the granularity at which an organisation reviews its ledger.
type Row struct {
	Job        string `json:"job"`
	Peer       string `json:"peer"`
	Disclosure string `json:"disclosure"`
	Messages   int    `json:"messages"`
	Bytes      int64  `json:"bytes"`
}

type rowKey struct{ job, peer, disclosure string }

// Summarize groups entries per job, peer and disclosure kind, sorted by those
// three fields so that the output is stable across runs.
func Summarize(entries []Entry) []Row {
	idx := make(map[rowKey]int)
	var rows []Row
	for _, e := range entries {
		if e.Type == DecisionType {
			continue // Decisions lists them
		}
		k := rowKey{e.Job, e.Peer, e.Disclosure}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, Row{Job: e.Job, Peer: e.Peer, Disclosure: e.Disclosure})
		}
		rows[i].Messages++
		rows[i].Bytes += int64(e.Bytes)
	}
	slices.SortFunc(rows, compareRows)
	return rows
}

func compareRows(a, b Row) int {
	return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Peer, b.Peer), cmp.Compare(a.Disclosure, b.Disclosure))
}

// WriteTable prints rows as an aligned table with a total line after each
// job. Rows need not be sorted; they are printed in Summarize order.
func WriteTable(w io.Writer, rows []Row) error {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, compareRows)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tPEER\tDISCLOSURE\tMESSAGES\tBYTES")
	for i := 0; i < len(rows); {
		job := rows[i].Job
		var msgs int
		var bytes int64
		for ; i < len(rows) && rows[i].Job == job; i++ {
			r := rows[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", orDash(r.Job), r.Peer, r.Disclosure, r.Messages, r.Bytes)
			msgs += r.Messages
			bytes += r.Bytes
		}
		fmt.Fprintf(tw, "%s\t(total)\t\t%d\t%d\n", orDash(job), msgs, bytes)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("audit: write table: %w", err)
	}
	return nil
}

// orDash shows messages outside any job (control traffic) as "-" rather
// than an empty, misaligned-looking cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// JobBytes is what the ledger's owner sent for one job, in bytes on the
// wire. The log holds no byte counts (they tell of a party's data); an
// operator who owns every party (cohort sim) adds up each party's own.
func JobBytes(entries []Entry, job string) int64 {
	var n int64
	for _, e := range entries {
		if e.Job == job {
			n += int64(e.Bytes)
		}
	}
	return n
}

// Decisions returns the entries that record the node's policy decisions,
// in ledger order.
func Decisions(entries []Entry) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.Type == DecisionType {
			out = append(out, e)
		}
	}
	return out
}

// WriteDecisions prints policy decisions as an aligned table: when, job,
// verdict, rule and reason.
func WriteDecisions(w io.Writer, ds []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tJOB\tDECISION\tRULE\tREASON")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Time.UTC().Format("2006-01-02T15:04:05Z"), d.Job, d.Decision, orDash(d.Rule), orDash(d.Reason))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("audit: write decisions: %w", err)
	}
	return nil
}
