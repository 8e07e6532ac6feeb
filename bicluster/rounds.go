package bicluster

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
)

// The job's rounds, in the order Coordinate runs them (the package doc's
// "Distributed job"): each types its public args, a party's output (to
// the coordinator alone) and the coordinator's public decision.
var (
	schemaRound   = job.Round[struct{}, schemaOutput, schemaDecision]{Phase: "schema"}
	iterateRound  = job.Round[iterArgs, aggOutput, iterDecision]{Phase: "iterate"}
	localsRound   = job.Round[iterArgs, localsOutput, localsDecision]{Phase: "locals"}
	pairTestRound = job.Round[testArgs, testOutput, testDecision]{Phase: "test"}
	mergeRound    = job.Round[mergeArgs, aggOutput, mergeDecision]{Phase: "merge"}
	rowsRound     = job.Round[rowsArgs, rowsOutput, rowsDecision]{Phase: "rows"}
)

// Ref names local bicluster Local of party Party (an index into the
// sorted party names).
type Ref struct {
	Party int `msgpack:"party"`
	Local int `msgpack:"local"`
}

// LocalDesc is the public description of one local bicluster: its column
// set and row count. Its rows and representative stay with the party.
type LocalDesc struct {
	Cols  []int `msgpack:"cols"`
	Count int   `msgpack:"count"`
}

// pairDesc is one candidate pair of the merge, public: locals A and B of
// parties A.Party < B.Party whose column sets overlap (Jaccard ≥ 1/2),
// tested on the union of their columns.
type pairDesc struct {
	A    Ref   `msgpack:"a"`
	B    Ref   `msgpack:"b"`
	Cols []int `msgpack:"cols"`
}

// globalDesc is a merged bicluster as every member sees it.
type globalDesc struct {
	Members []Ref     `msgpack:"members"`
	Cols    []int     `msgpack:"cols"`
	Rep     []float64 `msgpack:"rep"`
}

// Args (public, committed with the step).
type (
	// iterArgs is the column order an iteration, or the locals step,
	// runs under.
	iterArgs struct {
		Order []int `msgpack:"order"`
	}
	testArgs struct {
		Pairs []pairDesc `msgpack:"pairs"`
	}
	mergeArgs struct {
		Groups [][]Ref `msgpack:"groups"`
	}
	rowsArgs struct {
		Globals []globalDesc `msgpack:"globals"`
	}
)

// Outputs (a party's, to the coordinator alone). A party that cannot take
// part fails its step with an error instead, which names it.
type (
	schemaOutput struct {
		Columns []string `msgpack:"columns"`
	}
	// aggOutput is a party's report of an aggregation (nil when the step
	// aggregates nothing).
	aggOutput struct {
		Outcome *secureagg.Outcome `msgpack:"outcome"`
	}
	localsOutput struct {
		Locals []LocalDesc `msgpack:"locals"`
	}
	testOutput struct {
		Similar  []bool            `msgpack:"similar"` // the root's only
		Excluded map[string]string `msgpack:"excluded"`
	}
	rowsOutput struct {
		Rows [][]string `msgpack:"rows"` // per global: this party's row ids
	}
)

// Decisions (public, committed). A step that fails commits its error
// instead (job.Round.Run).
type (
	schemaDecision struct {
		Columns []string `msgpack:"columns"`
	}
	iterDecision struct {
		Num      []float64         `msgpack:"num"`
		Den      []float64         `msgpack:"den"` // the first iteration's only
		Order    []int             `msgpack:"order"`
		Changed  bool              `msgpack:"changed"`
		Excluded map[string]string `msgpack:"excluded"`
	}
	localsDecision struct {
		Locals [][]LocalDesc `msgpack:"locals"` // per party, in sorted party order
	}
	testDecision struct {
		Similar  []bool            `msgpack:"similar"` // per pair, in Args order
		Excluded map[string]string `msgpack:"excluded"`
	}
	mergeDecision struct {
		Sums     []float64         `msgpack:"sums"` // per group, per slot (groupSlots): Σ of the members' row values
		Excluded map[string]string `msgpack:"excluded"`
	}
	rowsDecision struct {
		Rows [][]string `msgpack:"rows"` // per global: "party:id", sorted
	}
)
