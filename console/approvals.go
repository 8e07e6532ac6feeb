package console

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
)

// The approvals and policy view: the jobs that await this node's approval
// with what each would disclose, the approve and reject actions, and the
// policy in force with the privacy budget spent and left.

type awaitingJob struct {
	Row     jobRow
	Parties []string
	Since   time.Time // when the policy first asked for a person
	Uses    []job.Use
	UsesErr string
}

type budgetRow struct {
	Column             string
	Spent, Left, Total policy.Amount
}

type approvalsData struct {
	// Done and Failed report the last decision taken here.
	Done, Failed, DoneJob string
	Awaiting              []awaitingJob
	Show                  *policy.Show
	PolicyErr             string
	PolicyYAML            string
	ApprovalTimeout       string
	Budget                []budgetRow
	BudgetChart           barChart
	Decisions             []audit.Entry
}

func (c *Console) approvalsPage(r *http.Request) (*view, error) {
	q := r.URL.Query()
	d := approvalsData{Done: q.Get("done"), Failed: q.Get("error"), DoneJob: q.Get("job")}
	now := time.Now()
	for _, id := range c.node.RunningJobs("") {
		dec, ok := c.node.Decision(id)
		if !ok || dec.Verdict != policy.Awaiting {
			continue
		}
		js, ok := c.node.Job(id)
		if !ok {
			continue
		}
		a := awaitingJob{Row: rowOf(js.JobStatus, now), Since: dec.Time}
		if spec, err := job.ParseSpec(js.Spec, "job "+js.ID); err == nil {
			a.Parties = spec.PartyNames()
		}
		a.Uses, a.UsesErr = c.uses(js.ID)
		d.Awaiting = append(d.Awaiting, a)
	}
	show, err := c.node.Policy()
	if err != nil {
		d.PolicyErr = err.Error()
	} else {
		d.Show = show
		if b, err := yaml.Marshal(show.Policy); err == nil {
			d.PolicyYAML = string(b)
		}
		d.Budget, d.BudgetChart = budget(show)
		if t := time.Duration(show.Policy.ApprovalTimeout); t > 0 {
			d.ApprovalTimeout = duration(t)
		}
	}
	c.ledger.read(func(l *ledgerIndex) {
		for i := len(l.decisions) - 1; i >= 0 && len(d.Decisions) < decisionsShown; i-- {
			d.Decisions = append(d.Decisions, l.decisions[i])
		}
	})
	return &view{page: "approvals", title: "Approvals and policy", nav: "approvals", live: true, data: d}, nil
}

// uses says what a job would disclose of this node's data, or why that
// cannot be said.
func (c *Console) uses(id string) ([]job.Use, string) {
	u, err := c.node.Uses(id)
	if err != nil {
		return nil, err.Error()
	}
	return u, ""
}

// budget lists the differential-privacy budget per column: every column
// the policy budgets and every column something was spent on.
func budget(show *policy.Show) ([]budgetRow, barChart) {
	p := show.Policy
	cols := map[string]bool{}
	for k := range p.Budget.Columns {
		cols[k] = true
	}
	for k := range show.Spent {
		cols[k] = true
	}
	var rows []budgetRow
	var bars []barRow
	for _, k := range slices.Sorted(maps.Keys(cols)) {
		total, ok := p.Budget.Columns[k]
		if !ok {
			total = policy.Amount{Epsilon: p.Budget.Epsilon, Delta: p.Budget.Delta}
		}
		spent := show.Spent[k]
		left, ok := show.Left[k]
		if !ok {
			left = policy.Amount{Epsilon: max(0, total.Epsilon-spent.Epsilon), Delta: max(0, total.Delta-spent.Delta)}
		}
		rows = append(rows, budgetRow{Column: k, Spent: spent, Left: left, Total: total})
		bars = append(bars, barRow{Label: k, Value: fmt.Sprintf("ε %.3g of %.3g", spent.Epsilon, total.Epsilon), Parts: []part{
			{Class: "spent", Value: spent.Epsilon, Title: fmt.Sprintf("%s: ε %.3g spent", k, spent.Epsilon)},
			{Class: "left", Value: left.Epsilon, Title: fmt.Sprintf("%s: ε %.3g left", k, left.Epsilon)},
		}})
	}
	return rows, hbars("privacy budget (ε) spent and left per column", bars,
		[]legendItem{{Class: "spent", Label: "spent"}, {Class: "left", Label: "left"}})
}

// maxReason bounds a rejection's reason, which the job's failure carries
// into every member's log.
const maxReason = 500

func (c *Console) approve(w http.ResponseWriter, r *http.Request, _ *session) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	c.decided(w, r, id, "approved", c.node.Approve(ctx, id))
}

func (c *Console) reject(w http.ResponseWriter, r *http.Request, _ *session) {
	id := r.PathValue("id")
	reason := strings.Join(strings.Fields(r.PostFormValue("reason")), " ")
	var err error
	switch {
	case reason == "":
		err = errors.New("a rejection needs a reason, which the job's failure carries")
	case len(reason) > maxReason:
		err = fmt.Errorf("the reason is longer than %d bytes", maxReason)
	default:
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		err = c.node.Reject(ctx, id, reason)
	}
	c.decided(w, r, id, "rejected", err)
}

// decided sends the browser back to the page the decision was taken on,
// saying what happened.
func (c *Console) decided(w http.ResponseWriter, r *http.Request, id, what string, err error) {
	q := url.Values{"job": {id}}
	if err != nil {
		q.Set("error", err.Error())
	} else {
		q.Set("done", what)
	}
	back := Prefix + "approvals"
	if r.PostFormValue("back") == "job" {
		back = Prefix + "jobs/" + url.PathEscape(id)
	}
	http.Redirect(w, r, back+"?"+q.Encode(), http.StatusSeeOther)
}
