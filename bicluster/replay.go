package bicluster

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// What the log determines. A party takes part in a step only when its
// args are the ones the committed history gives: it replays the job's
// decisions as Coordinate does (the same pure functions) and refuses any
// other column order, pair, group or global bicluster, naming the
// coordinator. So a coordinator cannot choose what the parties compute,
// aggregate or have decrypted (a pair of its choosing, a group whose sums
// less another's give one local's representative, a model that tells
// which rows fit it).

// sameArgs reports whether the step's args are derived, encoded, byte for
// byte (as job.Round.Run encodes a call's args).
func sameArgs[A any](step job.Step, derived A) bool {
	b, err := wire.Marshal(&derived)
	return err == nil && bytes.Equal(b, step.Args)
}

// refuse is this party's refusal of a step that asks what the log does not
// determine.
func (s *session) refuse(step job.Step, what string) error {
	return fmt.Errorf("party %s refuses %s round %d: coordinator %s asks for %s, not the ones the committed history gives",
		s.p.Self(), step.Phase, step.Round, step.Coordinator, what)
}

// iterations is what the committed iterations determine.
type iterations struct {
	orders [][]int   // each committed iteration's order
	den    []float64 // ΣDen, from the first
	next   []int     // the order of the next iteration, or of the locals step
	done   bool      // the iterations are over (Done)
}

// replayIterations replays the committed iterations: the first order
// from the seed, every later one from the previous iteration's committed
// sums (UpdateColumns), never on the coordinator's word. A committed
// iteration that ran another order, or a decision whose order its sums do
// not give, is an error.
func replayIterations(hist []*job.Record, seed []byte, cols, maxIter int) (*iterations, error) {
	it := &iterations{next: InitialColumns(seed, cols)}
	for k, rec := range iterateRound.History(hist) {
		a, err := iterateRound.Args(rec.Step)
		if err != nil {
			return nil, err
		}
		d, err := iterateRound.Decision(rec)
		if err != nil {
			return nil, err
		}
		if it.done || rec.Step.Round != k || !slices.Equal(a.Order, it.next) {
			return nil, fmt.Errorf("bicluster: iteration %d (%d committed before) ran an order the log does not determine", rec.Step.Round, k)
		}
		if k == 0 {
			it.den = d.Den
		}
		want, changed, err := UpdateColumns(Contribution{Num: d.Num, Den: it.den}, it.next)
		if err != nil || changed != d.Changed || !slices.Equal(want, d.Order) {
			return nil, fmt.Errorf("bicluster: iteration %d committed an order its sums do not give", k)
		}
		it.orders = append(it.orders, a.Order)
		it.next, it.done = d.Order, Done(d.Changed, k+1, maxIter)
	}
	return it, nil
}

// committedLocals is the locals step's decision.
func committedLocals(hist []*job.Record) ([][]LocalDesc, error) {
	recs := localsRound.History(hist)
	if len(recs) == 0 {
		return nil, fmt.Errorf("bicluster: the local biclusters were not committed")
	}
	d, err := localsRound.Decision(recs[0])
	if err != nil {
		return nil, err
	}
	return d.Locals, nil
}

// testedPairs are the merge test rounds' pairs and bits committed before
// round, in order.
func testedPairs(hist []*job.Record, round int) ([]pairDesc, []bool, error) {
	var tested []pairDesc
	var similar []bool
	for _, rec := range pairTestRound.History(hist) {
		if rec.Step.Round >= round {
			continue
		}
		a, err := pairTestRound.Args(rec.Step)
		if err != nil {
			return nil, nil, err
		}
		d, err := pairTestRound.Decision(rec)
		if err != nil {
			return nil, nil, err
		}
		if len(d.Similar) != len(a.Pairs) {
			return nil, nil, fmt.Errorf("bicluster: merge test round %d committed %d bits for %d pairs", rec.Step.Round, len(d.Similar), len(a.Pairs))
		}
		tested = append(tested, a.Pairs...)
		similar = append(similar, d.Similar...)
	}
	return tested, similar, nil
}

// roundPairs is testRound over the committed locals and the committed
// bits of the earlier merge test rounds: the pairs round must test.
func roundPairs(hist []*job.Record, public [][]LocalDesc, round int) ([]pairDesc, error) {
	tested, similar, err := testedPairs(hist, round)
	if err != nil {
		return nil, err
	}
	return testRound(public, candidatePairs(public), tested, similar, round), nil
}

// mergeGroups are the groups the committed merge test joins that keepGroups
// keeps (Coordinate's mergeTest), once no test round is left.
func mergeGroups(hist []*job.Record, public [][]LocalDesc, k groupKeep) ([][]Ref, error) {
	rounds := len(pairTestRound.History(hist))
	tested, similar, err := testedPairs(hist, rounds)
	if err != nil {
		return nil, err
	}
	if left := testRound(public, candidatePairs(public), tested, similar, rounds); len(left) > 0 {
		return nil, fmt.Errorf("bicluster: merge before the merge test's round %d", rounds)
	}
	return keepGroups(joinPairs(public, tested, similar), public, k), nil
}

// committedGlobals are the global biclusters of the committed merge.
func committedGlobals(hist []*job.Record, public [][]LocalDesc, k groupKeep, cols int) ([]globalDesc, error) {
	groups, err := mergeGroups(hist, public, k)
	if err != nil {
		return nil, err
	}
	recs := mergeRound.History(hist)
	if len(recs) == 0 {
		return nil, fmt.Errorf("bicluster: the merge was not committed")
	}
	d, err := mergeRound.Decision(recs[0])
	if err != nil {
		return nil, err
	}
	return globalsOf(groups, public, d.Sums, cols)
}
