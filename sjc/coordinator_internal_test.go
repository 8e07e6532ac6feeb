package sjc

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// evilKind is sjc whose Coordinate runs the honest steps until a point,
// then misbehaves; its sessions (Open) are the honest kind's. It plays the
// coordinator that is not trusted to extract.
type evilKind struct {
	Kind
	until     func(gr *growth) bool
	misbehave func(ctx context.Context, co *coordinator) error
}

func (k evilKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	g, p, err := parseSpec(c.Spec())
	if err != nil {
		return nil, err
	}
	co := &coordinator{c: c, gr: newGrowth(g, p), parties: c.Spec().PartyNames()}
	for !k.until(co.gr) {
		if err := co.step(ctx); err != nil {
			return nil, err
		}
	}
	if err := k.misbehave(ctx, co); err != nil {
		return nil, err
	}
	return nil, co.step(ctx) // the step after the misbehaviour, if it got through
}

// evilChain writes a generated three-party chain (every table has
// attributes) and returns its spec.
func evilChain(t *testing.T, params map[string]any) *job.Spec {
	t.Helper()
	ch, err := GenChain(ChainParams{Tables: 3, N: 60, V: 15, X: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, tb := range ch.Train {
		f, err := os.Create(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteCSV(f, tb); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	spec := *ch.Spec
	spec.Dir, spec.Source, spec.Params, spec.Test = dir, "evil.yaml", params, nil
	return &spec
}

// runEvil runs k on spec and checks that the step phase/round was refused
// by the parties refusers names (once the job has run), each naming the
// coordinator, and that
// nothing of that step was disclosed: no party output reached the
// coordinator, and no summary or PSI message was sent in it.
func runEvil(t *testing.T, k job.Kind, spec *job.Spec, phase string, round int, refusers func() []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	secrets := map[string]job.Secrets{}
	for _, p := range spec.PartyNames() {
		secrets[p] = job.DirSecrets(filepath.Join(t.TempDir(), p))
	}
	rep, err := jobtest.Run(ctx, k, spec, jobtest.Options{Secrets: secrets})
	if err == nil {
		t.Fatalf("the coordinator's %s round %d went through: %v", phase, round, rep.Result)
	}
	coordinator := rep.Leaders[0]
	var rec *job.Record
	for _, r := range rep.Records() {
		if r.Step.Phase == phase && r.Step.Round == round {
			rec = r
		}
	}
	if rec == nil || rec.Error == "" {
		t.Fatalf("%s round %d is not committed as failed: %v", phase, round, err)
	}
	for _, p := range refusers() {
		if why := rec.Failed[p]; !strings.Contains(why, "refuses "+phase) || !strings.Contains(why, "coordinator "+coordinator) {
			t.Errorf("%s: %q, want a refusal naming coordinator %s", p, why, coordinator)
		}
	}
	for _, o := range rep.Outputs {
		if o.Step.Phase == phase && o.Step.Round == round {
			t.Errorf("%s reported an output of the refused %s round %d", o.Party, phase, round)
		}
	}
	for _, s := range rep.Sent {
		m := s.Message
		if m.Phase == phase && m.Round == round && m.Type != jobrun.OutputType && m.Type != TypeConfirm && !failureNotice(s) {
			t.Errorf("%s sent %s to %s in the refused %s round %d", s.From, m.Type, s.To, phase, round)
		}
	}
	t.Log(err)
}

// all3 are the evil chain's parties.
func all3() []string { return []string{"p1", "p2", "p3"} }

// untilPhase stops the honest steps when phase is due at level.
func untilPhase(phase string, level int) func(gr *growth) bool {
	return func(gr *growth) bool { return gr.phase == phase && gr.level == level || gr.phase == finishRound.Phase }
}

// lie is a lying coordinator of the evil chain: its kind, the chain's
// params, the step its parties refuse and which parties refuse it (known
// once the job has run). The tests here run it in process (runEvil),
// lying_nodes_test.go over real nodes.
type lie struct {
	kind     evilKind
	params   map[string]any
	phase    string
	round    int
	refusers func() []string
}

// growClosedNode asks for offers at a node the log has closed (here: past
// max_depth, where the root's children are leaves).
func growClosedNode() lie {
	return lie{kind: evilKind{until: untilPhase(finishRound.Phase, 1), misbehave: func(ctx context.Context, co *coordinator) error {
		a := chooseArgs{Level: co.gr.level, Open: []int32{1, 2}}
		_, err := run(ctx, co, chooseRound, a, func(o *job.Outcome[offersOutput]) (chooseDecision, error) {
			return decideChoose(o, co.gr.g, len(a.Open))
		})
		return err
	}}, params: map[string]any{"max_depth": 1}, phase: chooseRound.Phase, round: 1, refusers: all3}
}

// A coordinator that asks for offers at a node the log has closed is
// refused.
func TestCoordinatorCannotGrowAClosedNode(t *testing.T) {
	t.Parallel()
	l := growClosedNode()
	runEvil(t, l.kind, evilChain(t, l.params), l.phase, l.round, l.refusers)
}

// makeLoserSplit names a loser the winner of a node: the table with the
// smallest positive gain, another party's than the true winner's.
func makeLoserSplit() lie {
	honest := ""
	k := evilKind{until: untilPhase(chooseRound.Phase, 0), misbehave: func(ctx context.Context, co *coordinator) error {
		g := co.gr.g
		done, err := run(ctx, co, chooseRound, co.gr.chooseArgs(), func(o *job.Outcome[offersOutput]) (chooseDecision, error) {
			d, err := decideChoose(o, g, 1)
			if err != nil || d.Retry {
				return d, err
			}
			honest = g.Tables[d.Winners[0].Table].Party
			loser := winner{Table: -1, Gain: math.Inf(1)}
			for _, out := range o.Results {
				for t, of := range out.Nodes[0] {
					if len(of.Gains) > 0 && g.Tables[t].Party != honest && of.Gains[0] > Eps && of.Gains[0] < loser.Gain {
						loser = winner{Table: t, Gain: of.Gains[0]}
					}
				}
			}
			return chooseDecision{Winners: []winner{loser}}, nil
		})
		if err != nil {
			return err
		}
		return co.gr.fold(done.Record)
	}}
	return lie{kind: k, phase: splitRound.Phase, round: 0, refusers: func() []string { return []string{honest} }}
}

// A coordinator that names a loser the winner of a node is refused by the
// party whose candidate should have won; every party confirms before
// splitting, so the loser's predicate is never used: no split summary is
// sent and no child's counts reach the coordinator.
func TestCoordinatorCannotMakeALoserSplit(t *testing.T) {
	t.Parallel()
	l := makeLoserSplit()
	runEvil(t, l.kind, evilChain(t, l.params), l.phase, l.round, l.refusers)
}

// chooseTheCandidate names the true winning table at a gain it did not
// offer (to make it split on another candidate).
func chooseTheCandidate() lie {
	owner := ""
	k := evilKind{until: untilPhase(chooseRound.Phase, 0), misbehave: func(ctx context.Context, co *coordinator) error {
		done, err := run(ctx, co, chooseRound, co.gr.chooseArgs(), func(o *job.Outcome[offersOutput]) (chooseDecision, error) {
			d, err := decideChoose(o, co.gr.g, 1)
			if err == nil && !d.Retry {
				owner = co.gr.g.Tables[d.Winners[0].Table].Party
				d.Winners[0].Gain = math.Nextafter(d.Winners[0].Gain, 0)
			}
			return d, err
		})
		if err != nil {
			return err
		}
		return co.gr.fold(done.Record)
	}}
	return lie{kind: k, phase: splitRound.Phase, round: 0, refusers: func() []string { return []string{owner} }}
}

// A coordinator that names the true winning table at a gain it did not
// offer is refused by its party.
func TestCoordinatorCannotChooseTheCandidate(t *testing.T) {
	t.Parallel()
	l := chooseTheCandidate()
	runEvil(t, l.kind, evilChain(t, l.params), l.phase, l.round, l.refusers)
}

// A coordinator that asks for a split no choice was committed for is
// refused by every party.
func TestCoordinatorCannotSplitUnchosen(t *testing.T) {
	t.Parallel()
	spec := evilChain(t, nil)
	k := evilKind{until: untilPhase(chooseRound.Phase, 0), misbehave: func(ctx context.Context, co *coordinator) error {
		_, err := run(ctx, co, splitRound, splitArgs{Level: 0, NextID: 1}, func(o *job.Outcome[countsOutput]) (splitDecision, error) {
			return decideSplit(o, []winner{{Table: 1, Gain: 1}}, len(co.gr.labels))
		})
		return err
	}}
	runEvil(t, k, spec, splitRound.Phase, 0, all3)
}

// forgeCounts commits a split's children's counts swapped, and goes on
// from the true counts.
func forgeCounts() lie {
	k := evilKind{until: untilPhase(splitRound.Phase, 0), misbehave: func(ctx context.Context, co *coordinator) error {
		var honest splitDecision
		done, err := run(ctx, co, splitRound, co.gr.splitArgs(), func(o *job.Outcome[countsOutput]) (splitDecision, error) {
			d, err := decideSplit(o, co.gr.winners, len(co.gr.labels))
			if err != nil || d.Retry {
				return d, err
			}
			honest = d
			forged := splitDecision{Children: slices.Clone(d.Children)}
			forged.Children[0], forged.Children[1] = d.Children[1], d.Children[0]
			return forged, nil
		})
		if err != nil {
			return err
		}
		// The coordinator goes on from the true counts; the log has the
		// forged ones.
		rec := *done.Record
		if rec.Decision, err = wire.Marshal(&honest); err != nil {
			return err
		}
		return co.gr.fold(&rec)
	}}
	return lie{kind: k, phase: chooseRound.Phase, round: 1, refusers: all3}
}

// A coordinator that commits a split's children's counts swapped is
// refused at the next level by every party, whose own counts differ (or
// whose replay finds that they do not make the winner's gain): the log's
// counts decide which nodes stay open.
func TestCoordinatorCannotForgeCounts(t *testing.T) {
	t.Parallel()
	l := forgeCounts()
	runEvil(t, l.kind, evilChain(t, l.params), l.phase, l.round, l.refusers)
}

// A coordinator that asks the parties to keep (and test) another tree
// than the log's final skeleton (here: a leaf relabelled) is refused.
func TestCoordinatorCannotFinishAnotherTree(t *testing.T) {
	t.Parallel()
	spec := evilChain(t, nil)
	k := evilKind{until: func(gr *growth) bool { return gr.phase == finishRound.Phase }, misbehave: func(ctx context.Context, co *coordinator) error {
		a, err := co.gr.finishArgs()
		if err != nil {
			return err
		}
		a.Nodes = slices.Clone(a.Nodes)
		leaf := slices.IndexFunc(a.Nodes, func(n finNode) bool { return n.Table < 0 })
		a.Nodes[leaf].Label = 1 - a.Nodes[leaf].Label
		_, err = run(ctx, co, finishRound, a, func(o *job.Outcome[finishOutput]) (finishDecision, error) { return decideFinish(o, false) })
		return err
	}}
	runEvil(t, k, spec, finishRound.Phase, 0, all3)
}

// evilPredict is sjc-predict whose Coordinate commits decide's skeleton
// changed by forge, then classifies (twice, with again).
type evilPredict struct {
	PredictKind
	forge func(d *predictLoadDecision)
	again bool
}

func (k evilPredict) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	g, _, err := parsePredict(c.Spec())
	if err != nil {
		return nil, err
	}
	call := job.Call[struct{}]{Parties: c.Spec().PartyNames()}
	ld, err := predictLoadRound.Run(ctx, c, call, func(o *job.Outcome[predictLoadOutput]) (predictLoadDecision, error) {
		d, err := decidePredictLoad(o, g)
		if err == nil && k.forge != nil {
			k.forge(&d)
		}
		return d, err
	})
	if err != nil {
		return nil, err
	}
	decide := func(o *job.Outcome[classifyOutput]) (classifyDecision, error) {
		return decideClassify(o, len(ld.Decision.Labels))
	}
	if _, err := classifyRound.Run(ctx, c, call, decide); err != nil || !k.again {
		return nil, err
	}
	call.Round = 1
	_, err = classifyRound.Run(ctx, c, call, decide)
	return nil, err
}

// trainEvilChain trains a model on the evil chain as job train-1 and
// returns the predict spec over the same tables.
func trainEvilChain(t *testing.T) (*job.Spec, map[string]job.Secrets) {
	t.Helper()
	spec := evilChain(t, nil)
	secrets := map[string]job.Secrets{}
	for _, p := range spec.PartyNames() {
		secrets[p] = job.DirSecrets(filepath.Join(t.TempDir(), p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := jobtest.Run(ctx, Kind{}, spec, jobtest.Options{JobID: "train-1", Secrets: secrets}); err != nil {
		t.Fatal(err)
	}
	ps := *spec
	ps.Kind, ps.Params = "sjc-predict", map[string]any{"model": "train-1"}
	return &ps, secrets
}

// runEvilPredict runs k with the trained parts and checks that classify
// round was refused by every party, naming the coordinator, with nothing
// sent in it.
func runEvilPredict(t *testing.T, k job.Kind, round int) {
	spec, secrets := trainEvilChain(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, k, spec, jobtest.Options{Secrets: secrets})
	if err == nil {
		t.Fatal("the coordinator's classify went through")
	}
	recs := rep.Records()
	last := recs[len(recs)-1]
	if last.Step.Phase != classifyRound.Phase || last.Step.Round != round || last.Error == "" {
		t.Fatalf("last step %s round %d (%q), want classify round %d failed", last.Step.Phase, last.Step.Round, last.Error, round)
	}
	for _, p := range spec.PartyNames() {
		if why := last.Failed[p]; !strings.Contains(why, "refuses classify") || !strings.Contains(why, "coordinator "+rep.Leaders[0]) {
			t.Errorf("%s: %q, want a refusal naming the coordinator", p, why)
		}
	}
	for _, s := range rep.Sent {
		if s.Message.Phase == classifyRound.Phase && s.Message.Round == round && s.Message.Type != jobrun.OutputType && !failureNotice(s) {
			t.Errorf("%s sent %s in the refused classify round %d", s.From, s.Message.Type, round)
		}
	}
	t.Log(err)
}

// anotherModel commits another skeleton than the parties' model: a leaf
// relabelled, to learn how many join rows reach it. The parties refuse
// classify round 0.
func anotherModel() evilPredict {
	return evilPredict{forge: func(d *predictLoadDecision) {
		d.Nodes = slices.Clone(d.Nodes)
		leaf := slices.IndexFunc(d.Nodes, func(n ModelNode) bool { return n.Table == "" })
		d.Nodes[leaf].Label = 1 - d.Nodes[leaf].Label
	}}
}

// classifyTwice asks for the classification a second time; the parties
// refuse classify round 1.
func classifyTwice() evilPredict { return evilPredict{again: true} }

// A coordinator that commits another skeleton than the parties' model is
// refused. predict_lying_nodes_test.go plays it over real nodes.
func TestCoordinatorCannotPredictWithAnotherModel(t *testing.T) {
	t.Parallel()
	runEvilPredict(t, anotherModel(), 0)
}

// A coordinator that asks for the classification twice is refused the
// second time.
func TestCoordinatorCannotClassifyTwice(t *testing.T) {
	t.Parallel()
	runEvilPredict(t, classifyTwice(), 1)
}

// failureNotice reports whether s is the runtime's notice that its sender
// failed the step: an empty control message, no data of the party.
func failureNotice(s jobtest.Sent) bool {
	return s.Message.Type == jobrun.FailedType && s.Disclosure == wire.DiscloseControl && len(s.Message.Body) == 0
}
