package pgen

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/tree"
)

func exampleSpec(t testing.TB) *job.Spec {
	t.Helper()
	spec, err := job.LoadSpec(filepath.Join("..", "examples", "pgen", "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// greedyKind is pgen with a coordinator that asks the parties to publish
// again after their trees are committed (another round, or the same round
// once more as a new job step is not possible: the runtime refuses a step
// the log holds finished); or, with skipSeed, to publish before the joint
// seed is drawn, so that the pseudo-rows would come from the job's seed
// it chose.
type greedyKind struct {
	Kind
	skipSeed bool
}

func (k greedyKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	if !k.skipSeed {
		if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, 0); err != nil {
			return nil, err
		}
	}
	call := job.Call[publishArgs]{Parties: c.Spec().PartyNames()}
	if _, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		return publishDecision{}, o.Err()
	}); err != nil {
		return nil, err
	}
	call.Round = 1
	_, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		return publishDecision{}, o.Err()
	})
	return nil, err
}

// TestCoordinatorCannotAskTwice: a party publishes once; a coordinator
// asking for a second tree (publish round 1) is refused by every party, and
// the refusal names it.
func TestCoordinatorCannotAskTwice(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := exampleSpec(t)
	rep, err := jobtest.Run(ctx, greedyKind{}, spec, jobtest.Options{Secrets: jobtest.SecretsIn(t.TempDir(), spec.PartyNames())})
	if err == nil || !strings.Contains(err.Error(), "refuses step publish/1 of coordinator") {
		t.Fatalf("err %v, want every party's refusal", err)
	}
	outs := 0
	for _, o := range rep.Outputs {
		if o.Step.Round == 1 {
			outs++
		}
	}
	if outs != 0 {
		t.Errorf("%d outputs of the second publish left the parties", outs)
	}
}

// TestCheckTreeRefuses: the coordinator refuses a published tree with a
// leaf below release_k, counts that are not its children's sums, a split
// on another party's table or on a column outside the schema, or the
// wrong operator for a column's kind; the error names the party, never a
// value.
func TestCheckTreeRefuses(t *testing.T) {
	t.Parallel()
	cfg, err := parse(exampleSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	ok := func() *tree.Tree {
		s := &tree.Split{Party: "east", Table: "east", Column: "bmi", Op: tree.OpLE, Num: 31.95}
		return &tree.Tree{Labels: []string{"high", "low"}, Root: &tree.Node{Split: s, Counts: []uint64{40, 60},
			Left: &tree.Node{Counts: []uint64{10, 50}}, Right: &tree.Node{Counts: []uint64{30, 10}}}}
	}
	for _, c := range []struct {
		name, want string
		edit       func(*tree.Tree)
	}{
		{"fine", "", func(*tree.Tree) {}},
		{"small leaf", "does not meet params.release_k", func(t *tree.Tree) {
			t.Root.Counts, t.Root.Right.Counts = []uint64{15, 53}, []uint64{5, 3}
		}},
		{"counts", "not its children's sums", func(t *tree.Tree) { t.Root.Counts[0]++ }},
		{"other table", "another party or table", func(t *tree.Tree) { t.Root.Split.Table = "west" }},
		{"unknown column", "no attribute of the schema", func(t *tree.Tree) { t.Root.Split.Column = "risk" }},
		{"wrong op", "other kind's operator", func(t *tree.Tree) { t.Root.Split.Op, t.Root.Split.Cat = tree.OpEQ, "x" }},
	} {
		tr := ok()
		c.edit(tr)
		b, err := tr.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		_, err = checkTree(b, cfg, "east")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		case err != nil && strings.Contains(err.Error(), "31.95"):
			t.Errorf("%s: the error holds the threshold: %v", c.name, err)
		}
	}
}

// FuzzCheckTree: the coordinator decodes a party's output, untrusted
// bytes, without panicking, and what it accepts holds release_k.
func FuzzCheckTree(f *testing.F) {
	f.Add([]byte(`{"leaf":"high","counts":{"high":30,"low":10}}`))
	f.Add([]byte(`{"split":{"party":"east","table":"east","column":"bmi","op":"<=","value":31.9},"counts":{"high":40,"low":60},` +
		`"left":{"leaf":"low","counts":{"high":10,"low":50}},"right":{"leaf":"high","counts":{"high":30,"low":10}}}`))
	f.Add([]byte(`{"split":{"party":"east","table":"east","column":"smoker","op":"==","value":"yes"},"counts":{"a":1}}`))
	cfg, err := parse(exampleSpec(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := checkTree(b, cfg, "east")
		if err == nil && tr.PathK() < cfg.p.ReleaseK {
			t.Fatalf("accepted a tree of path k %d", tr.PathK())
		}
	})
}

// TestCoordinatorMustDrawSeed: a party refuses to publish before the log
// holds the joint seed (its own contribution in it), naming the
// coordinator: the pseudo-rows are never the coordinator's choice.
func TestCoordinatorMustDrawSeed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := exampleSpec(t)
	rep, err := jobtest.Run(ctx, greedyKind{skipSeed: true}, spec, jobtest.Options{Secrets: jobtest.SecretsIn(t.TempDir(), spec.PartyNames())})
	if err == nil {
		t.Fatal("the parties published without a joint seed")
	}
	for _, p := range spec.PartyNames() {
		if want := "party " + p + " refuses step publish/0 of coordinator " + rep.Leaders[0]; !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want %q", err, want)
		}
	}
	if len(rep.Outputs) != 0 {
		t.Errorf("%d outputs left the parties", len(rep.Outputs))
	}
}
