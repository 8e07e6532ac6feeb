package boost

import "github.com/cohortdm/cohort/job"

// The job's rounds, in order: load, the private set intersection of every
// edge, one level step per tree level, finish. Each is typed: its public
// args, one party's output (to the coordinator alone) and the
// coordinator's public decision.
var (
	// loadRound: each party checks its tables against the schema; the
	// class holder reports the positive label (logistic loss), committed.
	loadRound = job.Round[struct{}, loadOutput, loadDecision]{Phase: "load"}
	// psiRound: the private set intersection of every edge between two
	// parties; nothing is reported.
	psiRound = job.Round[struct{}, struct{}, struct{}]{Phase: "psi"}
	// levelRound: one level of a tree (combo summaries up, encrypted sums
	// down, bin sums decrypted towards the class holder, its split choice
	// sent to the winners); the class holder reports the winning table of
	// each open node, which is committed.
	levelRound = job.Round[levelArgs, levelOutput, levelDecision]{Phase: "level"}
	// finishRound: with a test set, the test tables are scored (the class
	// holder reports the score, committed); every party keeps its part of
	// the model; with params.release each reports it and the coordinator
	// commits the model.
	finishRound = job.Round[struct{}, finishOutput, finishDecision]{Phase: "finish"}
)

// loadOutput is a party's answer to load: the positive label, from the
// class holder under logistic loss.
type loadOutput struct {
	Holder   bool   `msgpack:"holder"`
	Positive string `msgpack:"positive"`
	// Lattice: the party holds a lattice key whose members include every
	// party of the job, enough of them for its quorum (asked only when
	// params.backend is lattice or auto).
	Lattice bool `msgpack:"lattice"`
	// Bins: the most bins of any numeric column of the party's tables that
	// the class holder lays out for on the lattice path (lattice_bins.go;
	// asked only when params.backend is lattice or auto, 0 from the class
	// holder's party and a party with no such column).
	Bins int `msgpack:"bins"`
}

// loadDecision is the job's positive label ("" under squared loss), the
// backend of its bin sums ("" is Paillier: records from before
// params.backend) and, on the lattice path, the bins each announcing
// party's tables are laid out for, by party (lattice_bins.go).
type loadDecision struct {
	Positive string         `msgpack:"positive"`
	Backend  string         `msgpack:"backend"`
	Bins     map[string]int `msgpack:"bins,omitempty"`
}

// levelArgs name the level: the tree (from 0) and the depth of its open
// nodes. Every party derives them from the log (expectLevel).
type levelArgs struct {
	Tree  int `msgpack:"tree"`
	Depth int `msgpack:"depth"`
}

// levelOutput is the class holder's answer to a level (other parties
// report nothing): per open node the winning table, -1 for a leaf; Closed
// when the level closed its tree.
type levelOutput struct {
	Holder  bool  `msgpack:"holder"`
	Winners []int `msgpack:"winners"`
	Closed  bool  `msgpack:"closed"`
}

// levelDecision is the level's public outcome: the winning table of each
// open node (-1: a leaf), or Closed when the tree is finished; Retry when
// a party was silent, restarted or missed a message (the level runs again
// from every party's state at its start).
type levelDecision struct {
	Winners []int `msgpack:"winners"`
	Closed  bool  `msgpack:"closed"`
	Retry   bool  `msgpack:"retry"`
}

// finishOutput is a party's answer to finish: with params.release, its
// predicates (by table, by ordinal) and, from the class holder, the
// skeletons and leaf weights.
type finishOutput struct {
	Kept *kept      `msgpack:"kept"`
	Test *TestScore `msgpack:"test"`
}

// finishDecision is the released model as JSON (nil without release) and
// the test set's score (nil without one), from the class holder.
type finishDecision struct {
	Model []byte     `msgpack:"model"`
	Test  *TestScore `msgpack:"test"`
}

// levelPlan is the fold of the committed level decisions: the tree and
// depth of the next level, how many level steps ran (Levels), how many of
// them grew a level (Grown: not retried) and how many retries in a row
// came last.
type levelPlan struct {
	Tree, Depth, Levels, Grown, Retries int
}

// next folds one committed level decision.
func (lp *levelPlan) next(d levelDecision) {
	lp.Levels++
	if d.Retry {
		lp.Retries++
		return
	}
	lp.Grown++
	lp.Retries = 0
	if d.Closed {
		lp.Tree++
		lp.Depth = 0
		return
	}
	lp.Depth++
}

// planOf folds a job's history.
func planOf(h []*job.Record) (levelPlan, error) {
	var lp levelPlan
	for _, rec := range levelRound.History(h) {
		d, err := levelRound.Decision(rec)
		if err != nil {
			return lp, err
		}
		lp.next(d)
	}
	return lp, nil
}
