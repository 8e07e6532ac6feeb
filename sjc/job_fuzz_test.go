package sjc

import (
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc/internal/seccmp"
	"github.com/cohortdm/cohort/wire"
)

// FuzzJobMessages feeds arbitrary bytes to every decoder of what reaches a
// party or the coordinator from another node: each party output as the
// coordinator decides on it (offers, counts, labels, test counts, a
// predict skeleton), each committed decision as a party folds it into its
// growth, a confirmation and the kept state. Each refuses what is
// malformed with an error; none panics, and the coordinator accepts no
// offer for another party's table.
func FuzzJobMessages(f *testing.F) {
	g, err := NewGraph(&job.Spec{
		Kind: "sjc",
		Parties: []job.PartySpec{
			{Name: "a", Tables: []job.TableSpec{{Name: "L", Path: "L.csv"}}},
			{Name: "b", Tables: []job.TableSpec{{Name: "S", Path: "S.csv"}}},
		},
		Schema: map[string]map[string]string{"L": {"k": "key", "c": "class"}, "S": {"k": "key", "x": "numeric"}},
		Join:   []string{"L.k = S.k"},
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range []any{
		&offersOutput{Nodes: [][]Offer{{{Gains: []float64{0.5}}, {}}}},
		&offersOutput{Nodes: [][]Offer{{{}, {Gains: []float64{0.1, 0.2}}}}},
		&chooseDecision{Winners: []winner{{Table: 1, Gain: 0.5}}},
		&chooseDecision{Retry: true},
		&splitDecision{Children: [][]uint64{{1, 0}, {0, 1}}},
		&countsOutput{Tables: true, Counts: [][]uint64{{1, 2}, {3, 4}}},
		&loadOutput{Labels: []string{"n", "y"}},
		&propagateDecision{Counts: []uint64{1, 1}},
		&finishOutput{Target: true, Correct: 1, Total: 2},
		&confirmation{OK: true},
		&offersOutput{Hidden: []hiddenNode{{C2: [][]byte{make([]byte, 32), nil}, Partials: [][]byte{make([]byte, 32), make([]byte, 32)}}}},
		&compareMsg{Share: make([]byte, 32), Key: make([]byte, 32), Cts: make([]byte, 64)},
		&predictLoadOutput{Labels: []string{"n", "y"}, Nodes: []ModelNode{{ID: 0, Table: "S", Left: 1, Right: 2}, {ID: 1, Label: 1}, {ID: 2}}},
		&state{Key: "split/1", Shared: [][]string{{"1:a"}}, Nodes: []nodeState{{ID: 3, Parts: []Part{{Rows: []int32{1}, Cls: []uint64{1, 2}}, {}}}}},
	} {
		b, err := wire.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzDecisions(t, g, b)
		fuzzOutputs(t, g, b)
		var c confirmation
		_ = wire.Unmarshal(b, &c)
		var cm compareMsg
		if wire.Unmarshal(b, &cm) == nil {
			_, _ = seccmp.ParsePublic(cm.Share)
			_, _ = seccmp.ParseCiphertexts(cm.Cts, len(cm.Cts)/64)
			_, _ = seccmp.ParseElements(cm.C1, len(cm.C1)/32)
		}
		var st state
		_ = wire.Unmarshal(b, &st)
	})
}

// fuzzOutputs decodes b as each round's party output, from both parties,
// and lets the coordinator decide on it.
func fuzzOutputs(t *testing.T, g *Graph, b []byte) {
	var offers offersOutput
	if wire.Unmarshal(b, &offers) == nil {
		for _, name := range []string{"a", "b"} {
			o := &job.Outcome[offersOutput]{Results: map[string]offersOutput{name: offers}}
			if d, err := decideChoose(o, g, 1); err == nil {
				for _, w := range d.Winners {
					if w.Table >= 0 && g.Tables[w.Table].Party != name {
						t.Fatalf("party %s's offers won table %d", name, w.Table)
					}
				}
			}
		}
	}
	if offers.Hidden != nil {
		// With hide_gains, as either party's output beside a well-formed
		// one of the other: no panic, and no winner unless a count decodes.
		var good offersOutput
		_ = wire.Unmarshal(b, &good)
		for _, name := range []string{"a", "b"} {
			other := map[string]string{"a": "b", "b": "a"}[name]
			o := &job.Outcome[offersOutput]{Results: map[string]offersOutput{name: offers, other: good}}
			_, _ = decideChooseHidden(o, g, 1)
			_, _ = decideChooseHidden(o, g, len(offers.Hidden))
		}
	}
	var counts countsOutput
	if wire.Unmarshal(b, &counts) == nil {
		o := &job.Outcome[countsOutput]{Results: map[string]countsOutput{"a": counts, "b": counts}}
		_, _ = decidePropagate(o, g, 2)
		if d, err := decideSplit(o, []winner{{Table: 1, Gain: 0.5}, {Table: -1}}, 2); err == nil && !d.Retry && len(d.Children) != 2 {
			t.Fatalf("split decided %d children for one split", len(d.Children))
		}
	}
	var lo loadOutput
	if wire.Unmarshal(b, &lo) == nil {
		_, _ = decideLoad(&job.Outcome[loadOutput]{Results: map[string]loadOutput{"a": lo}}, g)
	}
	var fo finishOutput
	if wire.Unmarshal(b, &fo) == nil {
		_, _ = decideFinish(&job.Outcome[finishOutput]{Results: map[string]finishOutput{"a": fo}}, true)
	}
	var po predictLoadOutput
	if wire.Unmarshal(b, &po) == nil {
		_, _ = decidePredictLoad(&job.Outcome[predictLoadOutput]{Results: map[string]predictLoadOutput{"a": po, "b": po}}, g)
	}
	var co classifyOutput
	if wire.Unmarshal(b, &co) == nil {
		_, _ = decideClassify(&job.Outcome[classifyOutput]{Results: map[string]classifyOutput{"a": co}}, 2)
	}
}

// fuzzDecisions folds b as the decision of each step of a job's history,
// after honest ones.
func fuzzDecisions(t *testing.T, g *Graph, b []byte) {
	honest := []*job.Record{
		fuzzRecord(t, loadRound.Phase, 0, loadDecision{Labels: []string{"n", "y"}}),
		fuzzRecord(t, propagateRound.Phase, 0, propagateDecision{Counts: []uint64{2, 2}}),
		fuzzRecord(t, chooseRound.Phase, 0, chooseDecision{Winners: []winner{{Table: 1, Gain: 1}}}),
		fuzzRecord(t, splitRound.Phase, 0, splitDecision{Children: [][]uint64{{2, 0}, {0, 2}}}),
	}
	if _, err := replayGrowth(g, DefaultParams(), honest); err != nil {
		t.Fatalf("the honest history does not fold: %v", err)
	}
	for i, rec := range honest {
		forged := *rec
		forged.Decision = b
		gr, err := replayGrowth(g, DefaultParams(), append(honest[:i:i], &forged))
		if err == nil && gr.phase == splitRound.Phase && len(gr.winners) != len(gr.open) {
			t.Fatalf("a forged %s folded to %d winners for %d open nodes", rec.Step.Phase, len(gr.winners), len(gr.open))
		}
	}
}

func fuzzRecord(t *testing.T, phase string, round int, d any) *job.Record {
	b, err := wire.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return &job.Record{Step: job.Step{Phase: phase, Round: round}, Decision: b}
}
