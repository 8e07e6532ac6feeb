package integrate

import (
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
)

// The coordinator decodes every party's outputs, and every party decodes
// the committed splits and applies them to its state: none of it may panic
// on any bytes, and what passes the checks applies cleanly or is an error.
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
		b, err := encode(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var so scoreOutput
		if decode(b, &so) == nil {
			_ = so.check(3)
		}
		var sp Split
		if decode(b, &sp) == nil && sp.check() == nil {
			if inst, err := fromSplit(pub, &sp); err == nil {
				_, _ = pub.Apply(inst)
			}
		}
		var po publishOutput
		if decode(b, &po) == nil {
			_, _ = po.Table.MinGroups([]anonymize.Requirement{{QID: []string{"a"}, K: 2}})
			_ = po.Table.CheckDistinctL([]anonymize.Requirement{{QID: []string{"a"}, K: 2}}, "c", 2)
		}
		outs := &job.Outputs{Results: map[string][]byte{"p": b, "q": b}, Failed: map[string]string{}}
		_, _ = decideSchema(outs, []string{"p", "q"}, &Params{Requirements: []anonymize.Requirement{{QID: []string{"gender"}, K: 1}}})
		_, _ = decideAlign(outs, []string{"p", "q"}, &Params{Requirements: []anonymize.Requirement{{QID: []string{"gender"}, K: 1}}})
		_, _ = decideScore(outs, []string{"p", "q"}, []Attr{{Name: "a", Owner: "p"}, {Name: "b", Owner: "q"}})
		_, _ = decideSplit(outs, winner{Found: true, Party: "p"})
		mst := anonymize.NewMondrianState(4)
		_, _ = decideProposals(outs, []string{"p", "q"}, []Attr{{Name: "a", Owner: "p"}, {Name: "b", Owner: "q"}}, mst)
		_, _ = decideCuts(outs, cutChoices{Choices: []cutChoice{{Group: 0, Party: "p", Attr: 0}}}, mst)
		var cd cutDecision
		if decode(b, &cd) == nil {
			_, _ = applyCuts(mst, &cd, nil)
		}
		_, _ = decideMondrianPublish(outs, []string{"p", "q"}, &Params{Class: "class", Requirements: []anonymize.Requirement{{QID: []string{"a"}, K: 1}}}, schemaDecision{Attrs: []Attr{{Name: "a", Owner: "p"}, {Name: "b", Owner: "q"}}}, 4)
		_, _ = decideCheck(outs, "p", 1)
		var chk checkDecision
		if decode(b, &chk) == nil {
			var cd cutDecision
			_, _ = applyCuts(mst, &cd, &chk)
		}
		_, _ = decidePublish(outs, []string{"p", "q"}, &Params{Class: "class", Requirements: []anonymize.Requirement{{QID: []string{"a"}, K: 1}}}, []Attr{{Name: "a", Owner: "p"}}, 3)
	})
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
