package sjc

import (
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the distributed job, `kind: sjc` (see the package doc's
// "Distributed job" section for its steps and leakage profile). Its steps
// are the rounds of rounds.go; Coordinate (coordinate.go) drives them on
// the leader, a session (session.go) runs them at each party.
//
// A node builds its own Kind, so MemoryBudget is a node setting, never a
// spec's: how much memory a party has is its own business, like its
// max_table_rows, and the tree does not depend on it.
type Kind struct {
	// MemoryBudget bounds, in bytes, the partitions (the Parts of the
	// open tree nodes) the party's session holds; those beyond it are
	// spilled to its data dir and read back when their level is processed
	// (budget.go). 0: no budget, everything held.
	MemoryBudget int64
	// GroupRows says whether each table is loaded as its distinct rows
	// over the columns the rounds read, each weighted by how many rows
	// hold it (rows.go): a database groups them where they live, and the
	// party holds the groups, not the rows. The tree does not depend on
	// it. It pays where rows repeat (a fact table of keys and categories)
	// and costs where they do not (every row distinct: the server's GROUP
	// BY and a copy per group), so by default (GroupAuto) the party
	// chooses per table from a cheap estimate of its distinct rows; a node
	// may fix it (node.yaml sjc_group_rows: true or false).
	GroupRows GroupMode
}

// GroupMode is how a party loads its sjc tables (Kind.GroupRows): under
// GroupAuto a table's rows are grouped when its distinct rows are
// estimated at most a groupRatio-th of its rows (rows.go).
type GroupMode = job.GroupMode

// The modes, as job names them.
const (
	GroupAuto = job.GroupAuto
	GroupOn   = job.GroupOn
	GroupOff  = job.GroupOff
)

// Message types of the job. Each is sent within one step attempt, keyed by
// it, so messages of different steps, attempts or edges never answer each
// other.
const (
	// TypeClassSummary carries a ClassSummary to the neighbour on an edge
	// (disclosure class-summary).
	TypeClassSummary = "sjc/class-summary"
	// TypeSplitSummary carries a SplitSummary to the neighbour on an edge
	// (disclosure split-summary).
	TypeSplitSummary = "sjc/split-summary"
	// TypeConfirm tells every other party holding a table, before any split
	// is made, whether this party's own offers agree with the committed
	// winners (disclosure control: one bit, always yes under an honest
	// coordinator).
	TypeConfirm = "sjc/confirm"
	// TypeCompareBits carries, with params.hide_gains, a party's fresh
	// joint-key share and comparison key and its encrypted input bits of
	// the secure comparisons it shares with the receiver (disclosure score:
	// gains under encryption). See hidden_session.go for the four messages.
	TypeCompareBits = "sjc/compare-bits"
	// TypeCompareBlinded answers TypeCompareBits with the blinded
	// comparisons, which decrypt to a coin-masked bit, and the coins under
	// the joint key (disclosure score).
	TypeCompareBlinded = "sjc/compare-blinded"
	// TypeCompareResult returns each comparison's bit under the joint key
	// (disclosure score).
	TypeCompareResult = "sjc/compare-result"
	// TypeCompareCounts carries the sender's tables' blinded counts to the
	// party that blinds them again (disclosure score).
	TypeCompareCounts = "sjc/compare-counts"
	// TypeCompareCoBlinded carries the C1 halves of the counts the sender
	// blinded again, for the receiver's partial decryptions (disclosure
	// score).
	TypeCompareCoBlinded = "sjc/compare-coblinded"
)

// maxRetries bounds the re-runs in a row of one step after silent parties.
const maxRetries = 3

// ModelSecret is the name, in each party's data dir, of the party's part of
// the model trained by job id: its split predicates per skeleton node.
func ModelSecret(id string) string { return "models/" + id + "/sjc.json" }

// Validate checks the join graph, the params and the test set of a spec.
func (Kind) Validate(spec *job.Spec) error {
	_, _, err := parseSpec(spec)
	return err
}

func parseSpec(spec *job.Spec) (*Graph, Params, error) {
	p, err := ParseParams(spec)
	if err != nil {
		return nil, p, err
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, p, err
	}
	g, err := NewGraph(spec)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %s: %w", job.ErrSpec, spec.Source, err)
	}
	if err := g.CheckTests(spec); err != nil {
		return nil, p, err
	}
	return g, p, nil
}

// OutputDisclosure: a choose step's output is the party's offered gains
// (score), or with params.hide_gains its share of the blinded counts'
// decryption (score); every other step's is public metadata the
// coordinator commits (labels, node class counts, test counts).
func (Kind) OutputDisclosure(step job.Step) wire.Disclosure {
	if step.Phase == chooseRound.Phase {
		return wire.DiscloseScore
	}
	return wire.DisclosePublicResult
}
