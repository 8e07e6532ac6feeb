package integrate

import (
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// The fuzz test's log, with decisions that follow from each other, folds to
// the step it determines: so FuzzDecoders reaches every phase's decoder.
func TestReplayFoldsEveryPhase(t *testing.T) {
	t.Parallel()
	pq := []string{"p", "q"}
	attrs := []Attr{{Name: "a", Owner: "p"}, {Name: "b", Owner: "q"}}
	rec := func(phase string, round int, parties []string, args, decision any) *job.Record {
		a, _ := wire.Marshal(args)
		d, _ := wire.Marshal(decision)
		return &job.Record{Step: job.Step{Phase: phase, Round: round, Parties: parties, Args: a}, Decision: d}
	}
	choices := cutChoices{Choices: []cutChoice{{Group: 0, Party: "p", Attr: 0}}}
	cuts := cutDecision{Cuts: []wireCut{{Group: 0, Attr: 0, Parts: 2, Width: 1, Part: []byte{0, 1, 0, 1}}}}
	hist := []*job.Record{
		rec(phaseSchema, 0, pq, none{}, schemaDecision{Attrs: attrs, SensitiveOwner: "q"}),
		rec(phaseAlign, 0, pq, none{}, alignDecision{Records: 4}),
		rec(phasePropose, 0, pq, none{}, choices),
		rec(phaseCut, 0, []string{"p"}, choices, cuts),
		rec(phaseCheck, 0, []string{"q"}, none{}, checkDecision{OK: []bool{true}}),
	}
	l := newLog(pq)
	if err := l.fold(&Params{Algorithm: algMondrian, Class: "class", Sensitive: "s"}, pq, hist); err != nil {
		t.Fatal(err)
	}
	if l.next.phase != phasePropose || l.next.round != 1 || len(l.cuts) != 1 || len(l.checks) != 1 {
		t.Fatalf("next %s, %d cuts, %d checks", l.next, len(l.cuts), len(l.checks))
	}
	tds := []*job.Record{hist[0], hist[1],
		rec(phaseScore, 0, pq, none{}, winner{Found: true, Party: "p", Attr: 0, Node: 0}),
		rec(phaseSplit, 0, []string{"p"}, splitArgs{Attr: 0, Node: 0}, Split{Attr: 0, Node: 0, Width: 1, Child: []byte{0, 1}}),
	}
	l = newLog(pq)
	if err := l.fold(&Params{Algorithm: algTDS, Class: "class", Sensitive: "s"}, pq, tds); err != nil {
		t.Fatal(err)
	}
	if l.next.phase != phaseScore || l.next.round != 1 || len(l.splits) != 1 {
		t.Fatalf("next %s, %d splits", l.next, len(l.splits))
	}
}
