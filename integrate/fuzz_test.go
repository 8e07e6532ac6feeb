package integrate

import (
	"slices"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// The coordinator decodes every party's outputs, and every party decodes
// the committed decisions (replaying the log) and applies the splits to its
// state: none of it may panic on any bytes, and what passes the checks
// applies cleanly or is an error.
func FuzzDecoders(f *testing.F) {
	pub := fuzzState(f)
	seeds := []any{
		&scoreOutput{Found: true, Attr: 1, Node: 2, Score: 0.5},
		&Split{Attr: 0, Node: 0, Width: 1, Child: []byte{0, 1, 1, 0}},
		&publishOutput{Table: anonymize.Published{Columns: []string{"a", "class"}, Rows: []anonymize.Row{{Values: []string{"x", "Y"}, Count: 3}}}, NCP: 1.5},
		&schemaOutput{Columns: []string{"gender"}, TaxDigest: []byte{1, 2}},
		&alignOutput{Records: 4, ClassDigest: []byte{3}, IDDigest: []byte{4}},
		&proposeOutput{Proposals: []proposal{{Group: 0, Attr: 0, Width: 0.5}}},
		&cutOutput{Cuts: []wireCut{{Group: 0, Parts: 2, Width: 1, Part: []byte{0, 1, 0, 1}}}},
		&checkOutput{OK: []bool{true, false}},
		&labelsOutput{Labels: [][]string{{"x"}}, Classes: [][]classCount{{{Label: "Y", Count: 4}}}, NCPSum: 1},
	}
	for _, s := range seeds {
		b, err := wire.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var so scoreOutput
		if wire.Unmarshal(b, &so) == nil {
			_ = so.check(3)
		}
		var sp Split
		if wire.Unmarshal(b, &sp) == nil && sp.check() == nil {
			if inst, err := fromSplit(pub, &sp); err == nil {
				_, _ = pub.Apply(inst)
			}
		}
		var po publishOutput
		if wire.Unmarshal(b, &po) == nil {
			_, _ = po.Table.MinGroups([]anonymize.Requirement{{QID: []string{"a"}, K: 2}})
			_ = po.Table.CheckDistinctL([]anonymize.Requirement{{QID: []string{"a"}, K: 2}}, "c", 2)
		}
		pq := []string{"p", "q"}
		attrs := []Attr{{Name: "a", Owner: "p"}, {Name: "b", Owner: "q"}}
		_, _ = decideSchema(outcome[schemaOutput](b), pq, &Params{Requirements: []anonymize.Requirement{{QID: []string{"gender"}, K: 1}}})
		_, _ = decideAlign(outcome[alignOutput](b), pq, &Params{Requirements: []anonymize.Requirement{{QID: []string{"gender"}, K: 1}}})
		_, _ = decideScore(outcome[scoreOutput](b), pq, attrs)
		_, _ = decideSplit(outcome[Split](b), winner{Found: true, Party: "p"})
		mst := anonymize.NewMondrianState(4)
		_, _ = decideProposals(outcome[proposeOutput](b), pq, attrs, mst)
		_, _ = decideCuts(outcome[cutOutput](b), cutChoices{Choices: []cutChoice{{Group: 0, Party: "p", Attr: 0}}}, mst)
		var cd cutDecision
		if wire.Unmarshal(b, &cd) == nil {
			_, _ = applyCuts(mst, &cd, nil)
		}
		_, _ = decideMondrianPublish(outcome[labelsOutput](b), pq, &Params{Class: "class", Requirements: []anonymize.Requirement{{QID: []string{"a"}, K: 1}}}, schemaDecision{Attrs: attrs}, 4)
		_, _ = decideCheck(outcome[checkOutput](b), "p", 1)
		var chk checkDecision
		if wire.Unmarshal(b, &chk) == nil {
			var cd cutDecision
			_, _ = applyCuts(mst, &cd, &chk)
		}
		_, _ = decidePublish(outcome[publishOutput](b), pq, &Params{Class: "class", Requirements: []anonymize.Requirement{{QID: []string{"a"}, K: 1}}}, []Attr{{Name: "a", Owner: "p"}}, 3)
		fuzzReplay(t, b, attrs)
	})
}

// outcome is what a round hands decide when parties p and q both sent b:
// their decoded outputs, or their failure where b does not decode.
func outcome[O any](b []byte) *job.Outcome[O] {
	o := &job.Outcome[O]{Results: map[string]O{}, Failed: map[string]string{}}
	for _, p := range []string{"p", "q"} {
		var v O
		if err := wire.Unmarshal(b, &v); err != nil {
			o.Failed[p] = err.Error()
			continue
		}
		o.Results[p] = v
	}
	return o
}

// fuzzReplay folds a log whose last record carries b as its args and its
// decision, after a committed schema and alignment, in each phase: a
// party's replay of the log never panics.
func fuzzReplay(t *testing.T, b []byte, attrs []Attr) {
	pq := []string{"p", "q"}
	rec := func(phase string, round int, parties []string, args, decision any) *job.Record {
		a, err := wire.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		d, err := wire.Marshal(decision)
		if err != nil {
			t.Fatal(err)
		}
		return &job.Record{Step: job.Step{Phase: phase, Round: round, Parties: parties, Args: a}, Decision: d}
	}
	raw := func(phase string, round int, parties []string) *job.Record {
		return &job.Record{Step: job.Step{Phase: phase, Round: round, Parties: parties, Args: b}, Decision: b}
	}
	head := []*job.Record{rec(phaseSchema, 0, pq, none{}, schemaDecision{Attrs: attrs, SensitiveOwner: "q"}), rec(phaseAlign, 0, pq, none{}, alignDecision{Records: 4})}
	choices := cutChoices{Choices: []cutChoice{{Group: 0, Party: "p", Attr: 0}}}
	cuts := cutDecision{Cuts: []wireCut{{Group: 0, Attr: 0, Parts: 2, Width: 1, Part: []byte{0, 1, 0, 1}}}}
	for _, prm := range []*Params{{Algorithm: algTDS, Class: "class", Sensitive: "s"}, {Algorithm: algMondrian, Class: "class", Sensitive: "s"}} {
		for _, tail := range [][]*job.Record{
			{raw(phaseScore, 0, pq)},
			{rec(phaseScore, 0, pq, none{}, winner{Found: true, Party: "p", Attr: 0, Node: 0}), raw(phaseSplit, 0, []string{"p"})},
			{raw(phasePropose, 0, pq)},
			{rec(phasePropose, 0, pq, none{}, choices), raw(phaseCut, 0, []string{"p"})},
			{rec(phasePropose, 0, pq, none{}, choices), rec(phaseCut, 0, []string{"p"}, choices, cuts), raw(phaseCheck, 0, []string{"q"})},
		} {
			l := newLog(pq)
			if err := l.fold(prm, pq, append(slices.Clone(head), tail...)); err == nil {
				_ = l.admit("p", job.Step{Phase: l.next.phase, Round: l.next.round, Parties: l.next.parties, Args: b})
			}
		}
	}
}

// fuzzState is a small public state: seed 003's gender and education over
// four records.
func fuzzState(f *testing.F) *anonymize.TDSPublic {
	g, err := anonymize.LoadYAMLFile("../anonymize/testdata/seed003/gender.yaml")
	if err != nil {
		f.Fatal(err)
	}
	e, err := anonymize.LoadYAMLFile("../anonymize/testdata/seed003/education.yaml")
	if err != nil {
		f.Fatal(err)
	}
	pub, err := anonymize.NewTDSPublic([]anonymize.TDSAttr{{Name: "gender", Owner: "p", Tax: g}, {Name: "education", Owner: "q", Tax: e}},
		[]anonymize.Requirement{{QID: []string{"gender"}, K: 1}}, []string{"Y", "N", "Y", "N"})
	if err != nil {
		f.Fatal(err)
	}
	return pub
}
