package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
)

// The jobs view: the queue and the running jobs as they happen, the
// finished ones paged, and one job's page.

// jobRow is one job in a list.
type jobRow struct {
	ID, Kind, Status, Submitter string
	Waiting                     []string
	Queue                       int
	Submitted, Finished         time.Time
	Took                        string
	Steps                       int
	// Current is the latest step ("phase/round") and Attempt its attempt;
	// Retries counts the attempts after the first over all kept steps.
	Current          string
	Attempt, Retries int
	Progress         *api.Progress
	Error            string
	Active           bool
}

func rowOf(js *api.JobStatus, now time.Time) jobRow {
	r := jobRow{ID: js.ID, Kind: js.Kind, Status: js.Status, Waiting: js.Waiting, Queue: js.Queue,
		Submitted: js.Submitted, Finished: js.Finished, Error: js.Error, Progress: js.Progress,
		Steps: len(js.Steps) + js.DroppedSteps, Active: js.Finished.IsZero()}
	if js.Submission != nil {
		r.Submitter = js.Submission.Member
	}
	for _, s := range js.Steps {
		r.Retries += max(0, s.Attempt-1)
	}
	if n := len(js.Steps); n > 0 {
		last := js.Steps[n-1]
		r.Current, r.Attempt = fmt.Sprintf("%s/%d", last.Phase, last.Round), last.Attempt
	}
	end := js.Finished
	if end.IsZero() {
		end = now
	}
	r.Took = duration(end.Sub(js.Submitted))
	return r
}

// jobStates are the states the jobs view filters by, in display order.
var jobStates = []string{api.StatusQueued, runner.StatusRunning, api.StatusAwaiting, runner.StatusDone, runner.StatusFailed}

type stateCount struct {
	State string
	Count int
}

type jobsData struct {
	Kind, State string
	Kinds       []string
	States      []stateCount
	Total       int
	// Active are the queued, running and awaiting jobs, oldest first
	// (at most maxActiveShown; ActiveMore says how many more).
	Active     []jobRow
	ActiveMore int
	// Finished is one page of the finished jobs, newest first.
	Finished     []jobRow
	FinishedRows int
	Pager        pager
	ShowActive   bool
	ShowFinished bool
}

// maxActiveShown bounds the active jobs listed (a long queue is paged by
// filtering on its state).
const maxActiveShown = 200

func (c *Console) jobsPage(r *http.Request) (*view, error) {
	q := r.URL.Query()
	d := jobsData{Kind: q.Get("kind"), State: q.Get("state")}
	if d.State != "" && d.State != "active" && !slices.Contains(jobStates, d.State) {
		d.State = ""
	}
	now := time.Now()
	counts := c.node.FinishedCounts(d.Kind)
	for _, n := range counts {
		d.Total += n
	}
	// An active job's shown state (queued, awaiting) needs its record;
	// there are few of them.
	for _, id := range c.node.RunningJobs(d.Kind) {
		js, ok := c.node.Job(id)
		if !ok || isFinal(js.Status) {
			continue
		}
		counts[js.Status]++
		d.Total++
		if !matchState(d.State, js.Status) {
			continue
		}
		if len(d.Active) < maxActiveShown {
			d.Active = append(d.Active, rowOf(js.JobStatus, now))
		} else {
			d.ActiveMore++
		}
	}
	d.Kinds = c.node.JobKinds()
	for _, s := range jobStates {
		d.States = append(d.States, stateCount{s, counts[s]})
	}
	d.ShowActive = d.State == "" || d.State == "active" || !isFinal(d.State)
	d.ShowFinished = d.State == "" || isFinal(d.State)
	if d.ShowFinished {
		d.FinishedRows = counts[runner.StatusDone] + counts[runner.StatusFailed]
		if d.State != "" {
			d.FinishedRows = counts[d.State]
		}
	}
	d.Pager = newPager(Prefix+"jobs", q, pageOf(q), d.FinishedRows)
	lo, hi := d.Pager.bounds(d.FinishedRows)
	for _, id := range c.node.FinishedJobs(d.Kind, d.State, lo, hi-lo) {
		if js, ok := c.node.Job(id); ok {
			d.Finished = append(d.Finished, rowOf(js.JobStatus, now))
		}
	}
	return &view{page: "jobs", title: "Jobs", nav: "jobs", live: true, data: d}, nil
}

func isFinal(state string) bool { return state == runner.StatusDone || state == runner.StatusFailed }

func matchState(want, status string) bool {
	switch want {
	case "":
		return true
	case "active":
		return !isFinal(status)
	}
	return want == status
}

// jobData is one job's page.
type jobData struct {
	Row       jobRow
	Spec      string
	Parties   []string
	Result    string
	ResultCut bool
	Failures  []failure
	Steps     []stepRow
	Timeline  timelineChart
	// What this node sent for the job, per peer and disclosure kind.
	Sent     []audit.Row
	SentBy   barChart
	Bytes    int64
	Messages int
	// This node's policy decisions on the job, from its ledger, and the
	// latest one from its policy store.
	Decisions  []audit.Entry
	Decision   *policy.Decision
	AwaitsHere bool
	Uses       []job.Use
	UsesErr    string
	Ledger     ledgerState
	// Done and Failed report a decision just taken on this page.
	Done, Failed string
}

type failure struct{ Party, Why string }

// maxResultShown bounds the result shown on the page; result.json has it whole.
const maxResultShown = 32 << 10

func (c *Console) jobPage(r *http.Request) (*view, error) {
	id := r.PathValue("id")
	js, ok := c.node.Job(id)
	if !ok {
		return nil, fmt.Errorf("%w: no job %q", errNotFound, id)
	}
	now := time.Now()
	d := jobData{Row: rowOf(js.JobStatus, now), Spec: string(js.Spec), Done: r.URL.Query().Get("done"), Failed: r.URL.Query().Get("error")}
	if spec, err := job.ParseSpec(js.Spec, "job "+id); err == nil {
		d.Parties = spec.PartyNames()
	}
	if len(js.Result) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, js.Result, "", "  ") != nil {
			b.Reset()
			b.Write(js.Result)
		}
		d.Result = b.String()
		if len(d.Result) > maxResultShown {
			d.Result, d.ResultCut = strings.ToValidUTF8(d.Result[:maxResultShown], ""), true
		}
	}
	for _, p := range slices.Sorted(maps.Keys(js.Failures)) {
		d.Failures = append(d.Failures, failure{p, js.Failures[p]})
	}
	led := c.ledger.job(id)
	d.Ledger, d.Sent, d.Decisions = led.State, led.Rows, led.Decisions
	members := c.node.Status().Members
	d.Timeline, d.Steps = timeline(js, led.Coordinators, c.node.Consortium().Events, members, now)
	d.SentBy = sentChart(led.Rows, &d.Bytes, &d.Messages)
	if dec, ok := c.node.Decision(id); ok {
		d.Decision = &dec
		d.AwaitsHere = dec.Verdict == policy.Awaiting && !isFinal(js.Status)
	}
	if d.AwaitsHere {
		d.Uses, d.UsesErr = c.uses(id)
	}
	return &view{page: "job", title: "Job " + id, nav: "jobs", live: d.Row.Active, data: d}, nil
}

// sentChart draws the bytes a job sent per peer, stacked by disclosure
// kind, and totals them.
func sentChart(rows []audit.Row, bytes *int64, msgs *int) barChart {
	var peers []string
	parts := map[string][]part{}
	sums := map[string]int64{}
	var kinds []string
	for _, r := range rows {
		if _, ok := parts[r.Peer]; !ok {
			peers = append(peers, r.Peer)
		}
		parts[r.Peer] = append(parts[r.Peer], part{Class: discClass(r.Disclosure), Value: float64(r.Bytes),
			Title: fmt.Sprintf("%s to %s: %s in %d messages", r.Disclosure, r.Peer, humanBytes(r.Bytes), r.Messages)})
		sums[r.Peer] += r.Bytes
		*bytes += r.Bytes
		*msgs += r.Messages
		if !slices.Contains(kinds, r.Disclosure) {
			kinds = append(kinds, r.Disclosure)
		}
	}
	slices.Sort(peers)
	var bars []barRow
	for _, p := range peers {
		bars = append(bars, barRow{Label: p, Value: humanBytes(sums[p]), Parts: parts[p]})
	}
	return hbars("bytes this node sent per peer", bars, legendOf(kinds))
}

func legendOf(kinds []string) []legendItem {
	slices.Sort(kinds)
	var out []legendItem
	for _, k := range kinds {
		out = append(out, legendItem{Class: discClass(k), Label: k})
	}
	return out
}

// jobResult serves a finished job's result as a download.
func (c *Console) jobResult(w http.ResponseWriter, r *http.Request, _ *session) {
	js, ok := c.node.Job(r.PathValue("id"))
	if !ok || js.Status != runner.StatusDone {
		http.Error(w, "no result: the job is unknown or not done", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="result-`+safeName(js.ID)+`.json"`)
	w.Write(js.Result)
}

// safeName keeps the characters of s that are safe in a file name.
func safeName(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, ch := range b {
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.' {
			out = append(out, ch)
		}
	}
	return string(out)
}
