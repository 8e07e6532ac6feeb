package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Request is what a node knows of a job before it reads a row: the
// committed spec's kind and parties, the verified submitter, and what the
// kind declares the job discloses of this node's data.
type Request struct {
	Job       string
	Kind      string
	Self      string
	Submitter string
	Parties   []string
	// Uses is nil with Declared false when the kind declares nothing.
	Uses     []job.Use
	Declared bool
}

// Refusal names the rule a job breaks and what the rule found. Its text
// goes into the log every member reads: it names fields of the spec and
// rules of the policy, never a value of the data nor a number of this
// policy (a floor or a budget).
type Refusal struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

func (r *Refusal) Error() string { return "rule " + r.Rule + ": " + r.Reason }

func refuse(rule, format string, args ...any) *Refusal {
	return &Refusal{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// Earlier returns this node's record of the aggregates over one column
// that it took part in.
type Earlier func(table, column string) []AggregateRecord

// Records is an Earlier over a list of records.
func Records(recs []AggregateRecord) Earlier {
	return func(table, column string) []AggregateRecord {
		var out []AggregateRecord
		for _, r := range recs {
			if r.Table == table && r.Column == column {
				out = append(out, r)
			}
		}
		return out
	}
}

// Check returns the first rule a request breaks, or nil. earlier is this
// node's record of the aggregates it took part in, spent what noised
// results have spent per column; records of req.Job itself are skipped.
func (p *Policy) Check(req *Request, earlier Earlier, spent map[string]Amount) *Refusal {
	if r := p.checkMembers(req); r != nil {
		return r
	}
	if !req.Declared && !p.undeclared {
		return refuse("kinds", "kind %s declares nothing of what it discloses, so this node cannot check it", req.Kind)
	}
	for _, u := range req.Uses {
		if r := p.checkUse(req, u, earlier, spent); r != nil {
			return r
		}
	}
	return nil
}

// checkMembers applies the kinds, peers and submitters rules.
func (p *Policy) checkMembers(req *Request) *Refusal {
	kindPeers, ok := p.Kinds[req.Kind]
	if !ok {
		kindPeers, ok = p.Kinds[Any]
	}
	if !ok {
		return refuse("kinds", "this node does not take part in %s jobs", req.Kind)
	}
	if !slices.Contains(p.Submitters, Any) && !slices.Contains(p.Submitters, req.Submitter) {
		return refuse("submitters", "this node does not take jobs submitted by %s", req.Submitter)
	}
	for _, q := range req.Parties {
		if q == req.Self {
			continue
		}
		if !allows(p.Peers, []string{q}) {
			return refuse("peers", "this node does not work with %s", q)
		}
		if !allows(kindPeers, []string{q}) {
			return refuse("kinds."+req.Kind, "this node does not work with %s in %s jobs", q, req.Kind)
		}
	}
	return nil
}

// checkUse applies the column grants, the floors, the differencing rule
// and the budget to one declared use.
func (p *Policy) checkUse(req *Request, u job.Use, earlier Earlier, spent map[string]Amount) *Refusal {
	if u.Table == "" {
		return nil // no data of the party: key material of a key being generated
	}
	if u.Column == "" {
		// Every column of the table: each column the table's rules name
		// must grant the form too.
		for _, c := range slices.Sorted(maps.Keys(p.Tables[u.Table].Columns)) {
			cu := u
			cu.Column = c
			if r := p.checkGrant(cu); r != nil {
				return r
			}
		}
	}
	if r := p.checkGrant(u); r != nil {
		return r
	}
	return p.checkFloors(req, u, earlier, spent)
}

// checkGrant refuses a use whose form the column's grant does not give to
// every recipient.
func (p *Policy) checkGrant(u job.Use) *Refusal {
	what := u.Table
	if u.Column != "" {
		what += "." + u.Column
	}
	grant, field := p.grantOf(u.Table, u.Column, u.Role)
	members, ok := grant[u.Form]
	if !ok || !allows(members, u.To) {
		to := "every member"
		if u.To != nil {
			to = strings.Join(u.To, ", ")
		}
		return refuse(field, "%s may not leave this node as %s to %s", what, u.Form, to)
	}
	return nil
}

// checkFloors applies the floors, the differencing rule and the budget.
func (p *Policy) checkFloors(req *Request, u job.Use, earlier Earlier, spent map[string]Amount) *Refusal {
	what := u.Table
	if u.Column != "" {
		what += "." + u.Column
	}
	switch u.Form {
	case protocol.DiscloseCiphertext:
		if len(u.Parties) < p.Floors.MinParties {
			return refuse("floors.min_parties", "an aggregate of %s over %d parties is below this node's floor", what, len(u.Parties))
		}
		if u.Epsilon == 0 {
			if r := p.checkDifferencing(req.Job, u, earlier); r != nil {
				return r
			}
		}
	case protocol.DiscloseGeneralised:
		if u.K < p.Floors.MinK {
			return refuse("floors.min_k", "a publication of %s with k = %d is below this node's floor", what, u.K)
		}
		if u.Role == job.RoleSensitive && u.L < p.Floors.MinL {
			return refuse("floors.min_l", "sensitive column %s published with l = %d is below this node's floor", what, u.L)
		}
	}
	if u.Epsilon > 0 || u.Delta > 0 {
		b, s := p.budgetOf(u.Table, u.Column), spent[u.Table+"."+u.Column]
		if s.Epsilon+u.Epsilon > b.Epsilon || s.Delta+u.Delta > b.Delta {
			return refuse("budget", "a noised result over %s would exceed its privacy budget", what)
		}
	}
	return nil
}

// checkDifferencing refuses an aggregate whose party set differs from an
// earlier one's over the same column by too few parties: the difference
// of the two totals is those parties' inputs.
func (p *Policy) checkDifferencing(jobID string, u job.Use, earlier Earlier) *Refusal {
	for _, e := range earlier(u.Table, u.Column) {
		if e.Job == jobID || e.Noised {
			continue
		}
		if d := symmetricDifference(e.Parties, u.Parties); d > 0 && d < p.Floors.MinPartyDifference {
			return refuse("floors.min_party_difference",
				"an aggregate of %s.%s over parties that differ by %d from those of job %s needs noise", u.Table, u.Column, d, e.Job)
		}
	}
	return nil
}

// checkRows refuses an aggregate over the same parties as an earlier one
// over the same column whose rows at this node differ by too few: the
// difference of the totals is those rows' values.
func (p *Policy) checkRows(jobID string, a AggregateRecord, earlier Earlier) *Refusal {
	for _, e := range earlier(a.Table, a.Column) {
		if e.Job == jobID || e.Noised {
			continue
		}
		if symmetricDifference(e.Parties, a.Parties) != 0 {
			continue
		}
		d := a.Rows - e.Rows
		if d < 0 {
			d = -d
		}
		if d > 0 && d < p.Floors.MinRowDifference {
			return refuse("floors.min_row_difference",
				"an aggregate of %s.%s over rows that differ by few from those of job %s needs noise", a.Table, a.Column, e.Job)
		}
	}
	return nil
}

func symmetricDifference(a, b []string) int {
	d := 0
	for _, x := range a {
		if !slices.Contains(b, x) {
			d++
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			d++
		}
	}
	return d
}
