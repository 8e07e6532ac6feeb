package runner

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/internal/mailbox"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// boxParty is a coordinator's end of the network: what the parties
// reported waits in a mailbox.
type boxParty struct{ box *mailbox.Box }

func (p boxParty) Self() string { return "a" }
func (p boxParty) Send(context.Context, string, *wire.Message, wire.Disclosure) error {
	return nil
}
func (p boxParty) Receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	return p.box.Get(ctx, from, k)
}

// collectReports runs collect over the given reports, one per party.
func collectReports(t *testing.T, reports map[string]report) *job.Outputs {
	t.Helper()
	step := job.Step{Job: "j", Phase: "p", Attempt: 1, Parties: slices.Sorted(maps.Keys(reports)), Coordinator: "a", TimeoutMS: 3_600_000}
	box := mailbox.New(0)
	for p, r := range reports {
		body, err := wire.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if err := box.Put(step.Message(p, OutputType, body)); err != nil {
			t.Fatal(err)
		}
	}
	outs, restarted := collect(context.Background(), boxParty{box}, step, nil, nil)
	if len(restarted) > 0 {
		t.Fatalf("restarted %v", restarted)
	}
	return outs
}

// A party cut short by another's failure is neither a result nor a
// failure; when no party failed, its claim is its own failure.
func TestCollectCutShort(t *testing.T) {
	outs := collectReports(t, map[string]report{
		"a": {Output: []byte("ok")},
		"b": {Error: "party b: waiting for c: party c failed the step p/0", CutShort: true},
		"c": {Error: "party c: its own error"},
	})
	if len(outs.Failed) != 1 || outs.Failed["c"] != "party c: its own error" || len(outs.Results) != 1 || len(outs.Silent) != 0 {
		t.Fatalf("failed %v, results %d, silent %v: want c's error alone and a's result", outs.Failed, len(outs.Results), outs.Silent)
	}
	outs = collectReports(t, map[string]report{
		"a": {Output: []byte("ok")},
		"b": {Error: "party b: waiting for c: party c failed the step p/0", CutShort: true},
		"c": {Output: []byte("ok")},
	})
	if len(outs.Failed) != 1 || outs.Failed["b"] == "" || len(outs.Results) != 2 {
		t.Fatalf("failed %v, results %d: a claim of a failure no party reported is b's failure", outs.Failed, len(outs.Results))
	}
}
