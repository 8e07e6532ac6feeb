package job

import (
	"math"

	"github.com/cohortdm/cohort/wire"
)

// Roles of a column in a job, by which a node's policy grants forms when
// its tables' own rules do not name the column.
const (
	RoleKey       = "key"       // a join key (sjc's join columns)
	RoleID        = "id"        // a record id (integrate's, bicluster's row ids)
	RoleAttribute = "attribute" // a value column the job computes on
	RoleClass     = "class"     // the class column of a classifier or TDS
	RoleSensitive = "sensitive" // a sensitive column published beside a k-anonymous table
)

// Use is one way a job discloses one party's data, as its kind declares
// it before anything runs: a node's policy checks every Use against the
// organisation's rules before the node reads a row (see package policy).
type Use struct {
	// Table and Column name what is disclosed; an empty Column means the
	// table as a whole (its row count, say).
	Table  string `json:"table"`
	Column string `json:"column,omitempty"`
	// Role is the column's role in the job (RoleKey, ...).
	Role string `json:"role"`
	// Form is what leaves the node: one of the ledger's disclosure kinds.
	Form wire.Disclosure `json:"form"`
	// To lists the members that receive it; nil means every member (a
	// result committed to the log).
	To []string `json:"to,omitempty"`
	// Parties is, for an aggregate (Form ciphertext), how many parties'
	// data it sums.
	Parties []string `json:"parties,omitempty"`
	// LeastParties, when set, is the fewest parties whose data some
	// decrypted part of the aggregate sums, fewer than Parties (bicluster's
	// merge groups); LeastField is the spec's field that sets it, which a
	// refusal names.
	LeastParties int    `json:"least_parties,omitempty"`
	LeastField   string `json:"least_field,omitempty"`
	// K and L are, for a publication (Form generalised), the smallest k
	// and l (0 when the publication has no l-diversity) it promises.
	K int `json:"k,omitempty"`
	L int `json:"l,omitempty"`
	// Epsilon and Delta are the differential-privacy budget a noised
	// result spends on the column, per draw.
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta,omitempty"`
	// Releases is how many exact values of pooled data (quantiles) the job
	// publishes of the column.
	Releases int `json:"releases,omitempty"`
}

// UniqueValues counts the values that occur exactly once (Publication's
// Unique).
func UniqueValues(values []string) int {
	seen := make(map[string]int, len(values))
	for _, v := range values {
		seen[v]++
	}
	n := 0
	for _, c := range seen {
		if c == 1 {
			n++
		}
	}
	return n
}

// Discloser is implemented by every kind: it says, before a job runs, what
// the job may disclose of one party's data. A node refuses a kind that
// does not declare its uses.
type Discloser interface {
	Uses(spec *Spec, party string) ([]Use, error)
}

// AggregateUses declares column of each of party's tables as a ciphertext
// into an aggregate over every party of spec, whose total every member
// learns: the uses of the kinds that secure-sum a column (sum, quantile).
// epsilon and delta are the budget a noised total spends (0 when none).
func AggregateUses(spec *Spec, party, column string, epsilon, delta float64) []Use {
	ps, _ := spec.Party(party)
	var out []Use
	for _, t := range ps.Tables {
		out = append(out, Use{Table: t.Name, Column: column, Role: RoleAttribute, Form: wire.DiscloseCiphertext,
			Parties: spec.PartyNames(), Epsilon: epsilon, Delta: delta})
	}
	return out
}

// Aggregate describes one contribution of a party's data to an aggregate
// whose total is decrypted, for the node's policy (Guard.Aggregate).
type Aggregate struct {
	Table, Column string
	// Parties are the parties whose data the aggregate sums.
	Parties []string
	// Rows is how many of this party's rows the contribution sums.
	Rows int
	// Noised is set when the total carries differential-privacy noise;
	// Sensitivity is then the noise's sensitivity as the spec asks it, and
	// PerRow how far one of this party's rows can move the total (the
	// largest magnitude of the owner's bounds for a clamped sum, 1 for a
	// count; 0 when the owner declared no bounds). The policy honours the
	// noise only when Sensitivity is at least PerRow and PerRow is known.
	Noised      bool
	Sensitivity float64
	PerRow      float64
}

// PerRow is how far one value clamped to [lo, hi] can move a sum: the L1
// (and L2) sensitivity of adding or removing its row.
func PerRow(lo, hi float64) float64 { return math.Max(math.Abs(lo), math.Abs(hi)) }

// Clamp clamps v to [lo, hi].
func Clamp(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }

// Release is one exact value of pooled data that a job publishes (a
// quantile): its rank among the pooled rows (1-based), how many rows are
// pooled, and how many lie in the final bracket it was found in. Searching
// marks a value still being searched for: the bracket is the current one,
// and the policy checks it without counting a release, so that a search
// stops before its counts pin down fewer than k rows.
type Release struct {
	Table, Column string
	Rank, Rows    int
	Bracket       int
	Searching     bool
}

// Publication is one of this party's columns published value by value (a
// sensitive column beside a k-anonymous table): how many rows it has, how
// many of them hold a value no other row holds, and whether a taxonomy
// generalises it.
type Publication struct {
	Table, Column string
	Rows, Unique  int
	Generalised   bool
}

// Spend is one draw of differential-privacy noise for a released result.
type Spend struct {
	Table, Column  string
	Epsilon, Delta float64
}

// Guard is the node policy's check on what a session discloses while the
// job runs (Participant.Guard). A kind asks it before its party's data
// enters an aggregate and before noise is drawn; its errors name the node
// and the rule, never a value, and end the step.
type Guard interface {
	// Aggregate refuses an aggregate over fewer parties than the policy's
	// floor, or one that differs too little from an earlier one over the
	// same column unless it is noised; otherwise it records it.
	Aggregate(step Step, a Aggregate) error
	// Spend refuses a draw that would exceed the column's budget;
	// otherwise it records it (every draw spends, re-runs included).
	Spend(step Step, s Spend) error
	// Bounds returns the bounds the organisation declares for a column of
	// one of its tables (by the spec's table name); ok is false when it
	// declares none, and then the column cannot be noised. A kind clamps
	// every value to them before a noised aggregate.
	Bounds(table, column string) (lo, hi float64, ok bool)
	// Release refuses an exact release too near either end of the pooled
	// rows, from too small a bracket, or beyond the dataset's allowance of
	// exact releases; otherwise it counts it (re-runs included).
	Release(step Step, r Release) error
	// Publish refuses publishing a column whose values (nearly) single out
	// its rows, unless a taxonomy generalises it.
	Publish(step Step, p Publication) error
	// MinK is this node's floor on the rows of an exact release's bracket
	// and of a group (floors.min_k), for a check the parties compute
	// among themselves on secret shares (quantile's next brackets, package
	// mpc), in which the number never leaves the node in the clear.
	MinK() (int, error)
	// Synthetic refuses publishing a synthetic release of a table (by the
	// spec's name: kde's sample, pgen's tree) past its dataset's allowance
	// of synthetic releases; otherwise it counts the job's release, once
	// per job.
	Synthetic(step Step, table string) error
	// Formed records that this party saw the total of step formed (its
	// decryption may have followed): within the job, no later aggregate of
	// the same columns may leave out a party of it. The runtime records a
	// total formed by itself when the party sends its decryption share.
	Formed(step Step) error
}
