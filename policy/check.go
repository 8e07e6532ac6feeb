package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Request is what a node knows of a job before it reads a row: the
// committed spec's kind and parties, the verified submitter, what the kind
// declares the job discloses of this node's data, and the datasets the
// node resolves the spec's tables to.
type Request struct {
	Job       string
	Kind      string
	Self      string
	Submitter string
	// Signed is set when the job carries a submission whose signature
	// verified; SubmittedAt is its time.
	Signed      bool
	SubmittedAt time.Time
	Nonce       []byte
	Parties     []string
	// Uses is nil with Declared false when the kind declares nothing.
	Uses     []job.Use
	Declared bool
	// Datasets maps each of this party's tables in the spec to the
	// dataset it resolves to here (job.DatasetName); Unavailable holds
	// those that resolve to nothing usable, with the reason, which stays
	// in this node's own log.
	Datasets    map[string]string
	Unavailable map[string]string
}

// Refusal names the rule a job breaks and what the rule found. Its text
// goes into the log every member reads: it names the node's rule and the
// spec's field, never a value of the data, a number of this policy (a floor
// or a budget), a count of its data, or whether a file exists. Detail says
// more for this organisation's own ledger and never leaves the node.
type Refusal struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	Detail string `json:"-"`
}

func (r *Refusal) Error() string { return "rule " + r.Rule + ": " + r.Reason }

func refuse(rule, format string, args ...any) *Refusal {
	return &Refusal{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// with adds the owner's detail to a refusal.
func (r *Refusal) with(format string, args ...any) *Refusal {
	r.Detail = fmt.Sprintf(format, args...)
	return r
}

// Earlier returns this node's record of the aggregates over one dataset's
// column that it took part in.
type Earlier func(dataset, column string) []AggregateRecord

// Records is an Earlier over a list of records.
func Records(recs []AggregateRecord) Earlier {
	return func(dataset, column string) []AggregateRecord {
		var out []AggregateRecord
		for _, r := range recs {
			if r.Table == dataset && r.Column == column {
				out = append(out, r)
			}
		}
		return out
	}
}

// History is what the node has recorded that a check weighs: earlier
// aggregates, the budget spent per "dataset.column" and the exact
// releases per dataset.
type History struct {
	Earlier     Earlier
	Spent       map[string]Amount
	LegacySpent map[string]Amount // by column: a store's from before datasets
	Releases    map[string]int
}

// Check returns the first rule a request breaks, or nil, weighing what
// the node recorded before (h); records of req.Job itself are skipped.
func (p *Policy) Check(req *Request, h History) *Refusal {
	if r := p.checkMembers(req); r != nil {
		return r
	}
	if !req.Declared && !p.undeclared {
		return refuse("kinds", "kind %s declares nothing of what it discloses, so this node cannot check it", req.Kind)
	}
	if r := p.checkDatasets(req); r != nil {
		return r
	}
	for _, u := range req.Uses {
		if r := p.checkUse(req, u, h); r != nil {
			return r
		}
	}
	return nil
}

// checkDatasets refuses a spec whose tables this node cannot resolve, with
// one answer whether a table is missing or may not be named (the detail
// stays here), and a spec that names one dataset twice: its two
// contributions would count one party's data twice.
func (p *Policy) checkDatasets(req *Request) *Refusal {
	if len(req.Unavailable) > 0 {
		t := slices.Min(slices.Collect(maps.Keys(req.Unavailable)))
		return unavailable(t).with("%s", req.Unavailable[t])
	}
	seen := map[string]string{}
	for _, t := range slices.Sorted(maps.Keys(req.Datasets)) {
		d := req.Datasets[t]
		if first, ok := seen[d]; ok {
			return refuse("datasets", "tables %s and %s of party %s are one dataset at this node", first, t, req.Self).
				with("both resolve to dataset %s", d)
		}
		seen[d] = t
	}
	return nil
}

// unavailable is the one answer for a table that is missing, unreadable or
// not to be named.
func unavailable(table string) *Refusal {
	return refuse("tables", "table %s is not available to this job at this node", table)
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

// checkUse applies the roles, the column grants, the floors, the
// differencing rule, the exact-release allowance and the budget to one
// declared use, keyed on the dataset the use's table resolves to.
func (p *Policy) checkUse(req *Request, u job.Use, h History) *Refusal {
	if u.Table == "" {
		return nil // no data of the party: key material of a key being generated
	}
	dataset, ok := req.Datasets[u.Table]
	if !ok {
		if p.undeclared && req.Datasets == nil {
			dataset = u.Table // Permissive, asked without datasets (protocol tests)
		} else {
			return unavailable(u.Table).with("the kind declares a use of a table the spec does not give this party")
		}
	}
	cols := []string{u.Column}
	if u.Column == "" {
		// Every column of the table: each column the dataset's rules name
		// must grant the form too.
		cols = slices.Sorted(maps.Keys(p.Tables[dataset].Columns))
		cols = append(cols, "")
	}
	for _, c := range cols {
		cu := u
		cu.Column = c
		if r := p.checkGrant(dataset, cu); r != nil {
			return r
		}
	}
	return p.checkFloors(req, dataset, u, h)
}

// checkGrant refuses a use in a role the organisation does not allow the
// column, or whose form the column's grant does not give to every
// recipient.
func (p *Policy) checkGrant(dataset string, u job.Use) *Refusal {
	what := u.Table
	if u.Column != "" {
		what += "." + u.Column
	}
	if u.Column != "" && !p.roleAllowed(dataset, u.Column, u.Role) {
		return refuse("tables", "%s may not be used as %s at this node", what, u.Role).
			with("dataset %s classifies column %s as %s", dataset, u.Column, p.Tables[dataset].Roles[u.Column])
	}
	grant, field := p.grantOf(dataset, u.Column, u.Role)
	members, ok := grant[u.Form]
	if !ok || !allows(members, u.To) {
		to := "every member"
		if u.To != nil {
			to = strings.Join(u.To, ", ")
		}
		return refuse(field, "%s may not leave this node as %s to %s", what, u.Form, to).
			with("the grant of dataset %s", dataset)
	}
	return nil
}

// checkFloors applies the floors, the differencing rule, the exact-release
// allowance and the budget. Its texts name the rule and the spec's table,
// never the floor's number nor how far the job falls below it.
func (p *Policy) checkFloors(req *Request, dataset string, u job.Use, h History) *Refusal {
	what := u.Table
	if u.Column != "" {
		what += "." + u.Column
	}
	switch u.Form {
	case wire.DiscloseCiphertext:
		if len(u.Parties) < p.Floors.MinParties {
			return refuse("floors.min_parties", "an aggregate of %s over the parties of this job is below this node's floor", what)
		}
		if u.LeastParties > 0 && u.LeastParties < p.Floors.MinParties {
			return refuse("floors.min_parties", "an aggregate of %s has sums over fewer parties (%s) than this node's floor", what, u.LeastField)
		}
		if u.Epsilon == 0 {
			if r := p.checkDifferencing(req.Job, dataset, u, h.Earlier); r != nil {
				return r
			}
		}
	case wire.DiscloseGeneralised:
		if u.K < p.Floors.MinK {
			return refuse("floors.min_k", "a publication of %s with this job's k is below this node's floor", what)
		}
		if u.Role == job.RoleSensitive && u.L < p.Floors.MinL {
			return refuse("floors.min_l", "sensitive column %s published with this job's l is below this node's floor", what)
		}
	case wire.DiscloseSynthetic:
		// A density drawn from few rows keeps them close (Tan and Ng's
		// Example 2, section 6.1): the fewest rows of a class is its k.
		if u.K < p.Floors.MinK {
			return refuse("floors.min_k", "a synthetic sample of %s drawn from this job's fewest rows is below this node's floor", what)
		}
	case wire.DiscloseSanitisedLog:
		// A query with fewer than k results names its sites (Poblete et
		// al., section 4.2): k is the fewest results a published query has.
		if u.K < p.Floors.MinK {
			return refuse("floors.min_k", "a query log of %s published with this job's k is below this node's floor", what)
		}
	case wire.DiscloseAnonymisedGraph:
		// A class of fewer than k nodes narrows a node's edges down to few
		// people (Zheleva and Getoor, section 4.1): k is the fewest nodes
		// in a class.
		if u.K < p.Floors.MinK {
			return refuse("floors.min_k", "a graph of %s published with this job's k is below this node's floor", what)
		}
	}
	if u.Releases > 0 && h.Releases[dataset]+u.Releases > p.ExactReleases {
		return refuse("exact_releases", "the exact values this job would publish of %s exceed this node's allowance", what).
			with("dataset %s has %d exact releases left", dataset, max(0, p.ExactReleases-h.Releases[dataset]))
	}
	if u.Epsilon > 0 || u.Delta > 0 {
		spent := h.Spent[dataset+"."+u.Column].plus(h.LegacySpent[u.Column])
		if !spent.plus(Amount{Epsilon: u.Epsilon, Delta: u.Delta}).within(p.budgetOf(dataset, u.Column)) {
			return refuse("budget", "a noised result over %s would exceed its privacy budget", what)
		}
	}
	return nil
}

// differencing is the one refusal of an aggregate too close to an earlier
// one: by parties or, over the same parties, by rows. One text for both, so
// a refusal does not tell the submitter that a member's rows changed by
// few.
func differencing(what, earlierJob string) *Refusal {
	return refuse("floors.differencing", "an aggregate of %s too close to that of job %s needs noise", what, earlierJob)
}

// checkDifferencing refuses an aggregate whose party set differs from an
// earlier one's over the same dataset column by too few parties: the
// difference of the two totals is those parties' inputs.
func (p *Policy) checkDifferencing(jobID, dataset string, u job.Use, earlier Earlier) *Refusal {
	for _, e := range earlier(dataset, u.Column) {
		if e.Job == jobID || e.Noised {
			continue
		}
		if d := symmetricDifference(e.Parties, u.Parties); d > 0 && d < p.Floors.MinPartyDifference {
			return differencing(u.Table+"."+u.Column, e.Job).with("party sets differ by %d", d)
		}
	}
	return nil
}

// checkRows refuses an aggregate over the same parties as an earlier one
// over the same dataset column whose rows at this node differ by too few:
// the difference of the totals is those rows' values. what names the
// column as the spec does.
func (p *Policy) checkRows(jobID, what string, a AggregateRecord, earlier Earlier) *Refusal {
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
			return differencing(what, e.Job).with("rows differ by %d", d)
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
