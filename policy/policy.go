package policy

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/internal/strictyaml"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Any, in a list of members, means every member of the consortium.
const Any = "*"

// Approval modes.
const (
	ApprovalAuto   = "auto"   // the policy decides
	ApprovalManual = "manual" // a person approves each job on this node
)

// Policy is one organisation's rules for its node. The zero value refuses
// everything; Default is the conservative policy a new node starts with.
type Policy struct {
	// Approval is auto or manual.
	Approval string `yaml:"approval" json:"approval"`
	// ApprovalTimeout bounds how long a job waits for a person's decision.
	ApprovalTimeout Duration `yaml:"approval_timeout,omitempty" json:"approval_timeout,omitempty"`
	// Kinds maps each kind the node takes part in to the peers it works
	// with in that kind (["*"] for any member).
	Kinds Members `yaml:"kinds" json:"kinds"`
	// Peers are the members the node works with in any job.
	Peers []string `yaml:"peers" json:"peers"`
	// Submitters are the members whose jobs the node takes part in.
	Submitters []string `yaml:"submitters" json:"submitters"`
	// Floors are the least the node accepts of any job.
	Floors Floors `yaml:"floors" json:"floors"`
	// Columns grants forms by a column's role in a job (key, id,
	// attribute, class, sensitive) where a table's rules do not name it.
	Columns map[string]Grant `yaml:"columns" json:"columns"`
	// Tables are per-dataset rules, keyed by the dataset's name: the name
	// of its entry in node.yaml's tables: catalogue, else its file's path
	// inside tables_dir (see job.DatasetName). Never the name a spec gives.
	Tables map[string]TableRules `yaml:"tables,omitempty" json:"tables,omitempty"`
	// Budget is the differential-privacy budget of each column.
	Budget Budget `yaml:"budget" json:"budget"`
	// ExactReleases is how many exact values of pooled data (quantiles
	// without noise) the jobs may publish of one dataset, over every job
	// and re-run.
	ExactReleases int `yaml:"exact_releases" json:"exact_releases"`
	// SyntheticReleases is how many synthetic releases the jobs may
	// publish of one dataset, over every job, a job counting once
	// whatever its re-runs: kde's samples and pgen's published trees
	// (under other params a tree has other paths, and paths of two trees
	// intersect) count against the one allowance.
	SyntheticReleases int `yaml:"synthetic_releases" json:"synthetic_releases"`
	// SubmissionWindow is how far a signed submission's time may lie from
	// this node's clock when the node first sees it; its nonce is kept
	// that long, so a replay is refused whatever its age.
	SubmissionWindow Duration `yaml:"submission_window" json:"submission_window"`

	// undeclared admits kinds that declare no uses (Permissive only: a
	// node's policy cannot be written to do so).
	undeclared bool
}

// Floors are the least any job must offer.
type Floors struct {
	// MinParties is the fewest parties whose data any decrypted aggregate
	// may sum.
	MinParties int `yaml:"min_parties" json:"min_parties"`
	// MinK is the smallest k of any publication, MinL the smallest l
	// where a sensitive column is published.
	MinK int `yaml:"min_k" json:"min_k"`
	MinL int `yaml:"min_l" json:"min_l"`
	// MinPartyDifference: an aggregate over a column whose party set
	// differs from an earlier one's over the same column by fewer parties
	// (but at least one) is refused unless noised; so is one over the same
	// parties whose rows differ by fewer than MinRowDifference (but at
	// least one).
	MinPartyDifference int `yaml:"min_party_difference" json:"min_party_difference"`
	MinRowDifference   int `yaml:"min_row_difference" json:"min_row_difference"`
}

// TableRules are one dataset's rules: grants per column and a default for
// the columns not named (the role defaults apply when neither is set); the
// roles the organisation gives its columns, which a spec cannot change; and
// the bounds of numeric columns, without which a column is never noised.
type TableRules struct {
	Default *Grant           `yaml:"default,omitempty" json:"default,omitempty"`
	Columns map[string]Grant `yaml:"columns,omitempty" json:"columns,omitempty"`
	// Roles classifies columns: id, key, quasi-identifier, sensitive,
	// attribute or class. A job may use a classified column only in a
	// role its class allows (ownerRoles), and the grant of that class
	// applies whatever the spec says.
	Roles map[string]string `yaml:"roles,omitempty" json:"roles,omitempty"`
	// Bounds are a numeric column's [lo, hi]: every value is clamped to
	// them before a noised aggregate, whose sensitivity they fix.
	Bounds map[string][2]float64 `yaml:"bounds,omitempty" json:"bounds,omitempty"`
}

// Owner roles a catalogue may give a column beside the job roles.
const RoleQuasiIdentifier = "quasi-identifier"

// ownerRoles maps each class an organisation may give a column to the
// roles a job may use it in, the first of which names the grant that
// applies (policy columns:).
var ownerRoles = map[string][]string{
	job.RoleID:          {job.RoleID, job.RoleKey},
	job.RoleKey:         {job.RoleKey, job.RoleID},
	RoleQuasiIdentifier: {job.RoleAttribute},
	job.RoleSensitive:   {job.RoleSensitive},
	job.RoleAttribute:   {job.RoleAttribute},
	job.RoleClass:       {job.RoleClass},
}

// Budget is a differential-privacy budget per column: what noised results
// over it may spend in total, over every job.
type Budget struct {
	Epsilon float64 `yaml:"epsilon" json:"epsilon"`
	Delta   float64 `yaml:"delta" json:"delta"`
	// Columns overrides the budget of named columns ("table.column").
	Columns map[string]Amount `yaml:"columns,omitempty" json:"columns,omitempty"`
}

// Amount is a budget or a spend.
type Amount struct {
	Epsilon float64 `yaml:"epsilon" json:"epsilon"`
	Delta   float64 `yaml:"delta" json:"delta"`
}

// plus is a + b: spends compose by addition (basic composition).
func (a Amount) plus(b Amount) Amount {
	return Amount{Epsilon: a.Epsilon + b.Epsilon, Delta: a.Delta + b.Delta}
}

// within reports whether a fits in budget b.
// minus is a − b, floored at zero (a job's own draws are part of what
// is spent, so never more than it).
func (a Amount) minus(b Amount) Amount {
	return Amount{Epsilon: max(0, a.Epsilon-b.Epsilon), Delta: max(0, a.Delta-b.Delta)}
}

func (a Amount) within(b Amount) bool { return a.Epsilon <= b.Epsilon && a.Delta <= b.Delta }

// Grant maps each form that may leave to the members that may receive it
// (["*"] for any member). In YAML it is a list of forms (to any member)
// or a mapping of form to members.
type Grant map[wire.Disclosure][]string

// UnmarshalYAML takes a list of forms or a mapping of form to members.
func (g *Grant) UnmarshalYAML(n *yaml.Node) error {
	out := Grant{}
	switch n.Kind {
	case yaml.SequenceNode:
		var forms []string
		if err := n.Decode(&forms); err != nil {
			return err
		}
		for _, f := range forms {
			out[wire.Disclosure(f)] = []string{Any}
		}
	case yaml.MappingNode:
		var m map[string][]string
		if err := n.Decode(&m); err != nil {
			return err
		}
		for f, to := range m {
			out[wire.Disclosure(f)] = to
		}
	default:
		return fmt.Errorf("line %d: want a list of forms or a mapping of form to members", n.Line)
	}
	*g = out
	return nil
}

// Members maps a name (a kind) to members; in YAML it is a list of names
// (each with any member) or a mapping of name to members.
type Members map[string][]string

// UnmarshalYAML takes a list of names or a mapping of name to members.
func (m *Members) UnmarshalYAML(n *yaml.Node) error {
	out := Members{}
	switch n.Kind {
	case yaml.SequenceNode:
		var names []string
		if err := n.Decode(&names); err != nil {
			return err
		}
		for _, k := range names {
			out[k] = []string{Any}
		}
	case yaml.MappingNode:
		var mm map[string][]string
		if err := n.Decode(&mm); err != nil {
			return err
		}
		for k, v := range mm {
			out[k] = v
		}
	default:
		return fmt.Errorf("line %d: want a list of kinds or a mapping of kind to members", n.Line)
	}
	*m = out
	return nil
}

// Duration is a time.Duration written as "24h" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration ("90m", "24h").
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: want a duration such as 24h", n.Line)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as "24h0m0s".
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalText writes the duration for JSON.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration from JSON.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// DefaultYAML is the policy a new node starts with, every field commented
// (`cohort node init` writes it beside node.yaml).
//
//go:embed default.yaml
var DefaultYAML []byte

// Default returns the conservative default policy.
func Default() *Policy {
	p, err := Parse(DefaultYAML, "the default policy")
	if err != nil {
		panic(fmt.Sprintf("policy: internal error: the embedded default does not parse: %v", err)) // tested
	}
	return p
}

// DefaultExactReleases is the allowance of exact releases per dataset of a
// policy file that names none.
const DefaultExactReleases = 20

// ErrPolicy wraps every problem with a policy file.
var ErrPolicy = errors.New("invalid policy")

// Load reads a policy file.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return Parse(b, path)
}

// Parse parses a policy strictly (unknown fields are errors) and checks
// it; source names the file in errors.
func Parse(b []byte, source string) (*Policy, error) {
	// A file that omits the allowance of exact or synthetic releases has
	// the default's (an explicit 0 allows none), as a file written before
	// it existed.
	p := Policy{ExactReleases: DefaultExactReleases, SyntheticReleases: DefaultSyntheticReleases}
	if err := strictyaml.Decode(bytes.NewReader(b), &p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrPolicy, source, err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPolicy, source, err)
	}
	return &p, nil
}

// check refuses what cannot be meant, naming the field.
func (p *Policy) check() error {
	if p.Approval != ApprovalAuto && p.Approval != ApprovalManual {
		return fmt.Errorf("approval: want auto or manual")
	}
	f := p.Floors
	for _, c := range []struct {
		name string
		v    int
	}{{"floors.min_parties", f.MinParties}, {"floors.min_k", f.MinK}, {"floors.min_l", f.MinL},
		{"floors.min_party_difference", f.MinPartyDifference}, {"floors.min_row_difference", f.MinRowDifference}} {
		if c.v < 0 {
			return fmt.Errorf("%s: must not be negative", c.name)
		}
	}
	if p.ExactReleases < 0 {
		return fmt.Errorf("exact_releases: must not be negative")
	}
	if p.SyntheticReleases < 0 {
		return fmt.Errorf("synthetic_releases: must not be negative")
	}
	if p.Budget.Epsilon < 0 || p.Budget.Delta < 0 || p.Budget.Delta >= 1 {
		return fmt.Errorf("budget: epsilon must be >= 0, delta in [0, 1)")
	}
	for name, a := range p.Budget.Columns {
		if a.Epsilon < 0 || a.Delta < 0 || a.Delta >= 1 {
			return fmt.Errorf("budget.columns.%s: epsilon must be >= 0, delta in [0, 1)", name)
		}
	}
	for role, g := range p.Columns {
		if !slices.Contains(roles, role) {
			return fmt.Errorf("columns.%s: unknown role (roles: %s)", role, strings.Join(roles, ", "))
		}
		if err := g.check("columns." + role); err != nil {
			return err
		}
	}
	for t, tr := range p.Tables {
		if tr.Default != nil {
			if err := tr.Default.check("tables." + t + ".default"); err != nil {
				return err
			}
		}
		for c, g := range tr.Columns {
			if err := g.check("tables." + t + ".columns." + c); err != nil {
				return err
			}
		}
		for c, r := range tr.Roles {
			if _, ok := ownerRoles[r]; !ok {
				return fmt.Errorf("tables.%s.roles.%s: unknown role (roles: %s, %s)", t, c, strings.Join(roles, ", "), RoleQuasiIdentifier)
			}
		}
		for c, b := range tr.Bounds {
			if math.IsNaN(b[0]) || math.IsNaN(b[1]) || math.IsInf(b[0], 0) || math.IsInf(b[1], 0) || b[0] > b[1] {
				return fmt.Errorf("tables.%s.bounds.%s: want [lo, hi], finite, lo <= hi", t, c)
			}
		}
	}
	return nil
}

var roles = []string{job.RoleKey, job.RoleID, job.RoleAttribute, job.RoleClass, job.RoleSensitive}

func (g Grant) check(field string) error {
	for f, to := range g {
		if !slices.Contains(wire.Disclosures(), f) {
			return fmt.Errorf("%s: unknown form %q (forms: %s)", field, f, formNames())
		}
		if len(to) == 0 {
			return fmt.Errorf("%s.%s: name the members that may receive it, or [\"*\"]", field, f)
		}
	}
	return nil
}

func formNames() string {
	var out []string
	for _, d := range wire.Disclosures() {
		out = append(out, string(d))
	}
	return strings.Join(out, ", ")
}

// budgetOf returns a dataset column's budget.
func (p *Policy) budgetOf(dataset, column string) Amount {
	return p.budgetOfKey(dataset + "." + column)
}

// budgetOfKey returns the budget of a "dataset.column" key.
func (p *Policy) budgetOfKey(key string) Amount {
	if a, ok := p.Budget.Columns[key]; ok {
		return a
	}
	return Amount{Epsilon: p.Budget.Epsilon, Delta: p.Budget.Delta}
}

// columnOf is the column of a "dataset.column" key (a dataset's name may
// hold dots; a column's does not).
func columnOf(key string) string { return key[strings.LastIndex(key, ".")+1:] }

// grantOf returns the grant that applies to a column of a dataset used in
// a role: the dataset's rule for the column, else its default, else the
// grant of the role the organisation gave the column, else of the job's
// role. The second result names the rule for the owner's own log; the
// refusal the submitter sees names only "tables" or the role.
func (p *Policy) grantOf(dataset, column, role string) (Grant, string) {
	tr := p.Tables[dataset]
	if g, ok := tr.Columns[column]; ok {
		return g, "tables"
	}
	if tr.Default != nil {
		return *tr.Default, "tables"
	}
	if owner, ok := tr.Roles[column]; ok {
		role = ownerRoles[owner][0]
	}
	return p.Columns[role], "columns." + role
}

// roleAllowed reports whether a job may use a dataset's column in role.
func (p *Policy) roleAllowed(dataset, column, role string) bool {
	owner, ok := p.Tables[dataset].Roles[column]
	return !ok || slices.Contains(ownerRoles[owner], role)
}

// bounds returns a dataset column's declared bounds.
func (p *Policy) bounds(dataset, column string) ([2]float64, bool) {
	b, ok := p.Tables[dataset].Bounds[column]
	return b, ok
}

// allows reports whether members lists every one of to (nil to: every
// member, which needs "*").
func allows(members, to []string) bool {
	if slices.Contains(members, Any) {
		return true
	}
	if to == nil {
		return false
	}
	for _, m := range to {
		if !slices.Contains(members, m) {
			return false
		}
	}
	return true
}
