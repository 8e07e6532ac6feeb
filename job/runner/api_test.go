package runner_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

// The API's job record is the log's record as the node served it before
// the API declared its own: the same JSON, byte for byte, every field set.
func TestAPIRecordKeepsTheJSON(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 9, 39, 30, 0, time.UTC)
	rec := &runner.JobRecord{ID: "j1", Kind: "sum", Spec: []byte("kind: sum"), Seed: []byte{1},
		Submission: &runner.Submission{Member: "north", Nonce: []byte{2}, Time: t0, Signature: []byte{3}},
		Status:     runner.StatusFailed, Submitted: t0, Finished: t0.Add(3 * time.Second),
		Steps: []*runner.StepRecord{
			{Step: job.Step{Coordinator: "north", Parties: []string{"west"}}, Phase: "aggregate", Round: 1, Attempt: 2,
				Started: t0.Add(time.Second), Finished: t0.Add(2 * time.Second), Done: true, Record: &job.Record{}, Failed: []string{"west"}},
			{Phase: "aggregate", Round: 2, Attempt: 1, Started: t0.Add(2 * time.Second)},
		},
		Result: []byte(`{"sum":1}`), Error: "boom", Failures: map[string]string{"west": "gone", "east": "late"}, DroppedSteps: 4}
	js := &api.JobStatus{JobRecord: rec.API(), Progress: &api.Progress{Phase: "aggregate", Done: 1, Total: 3}, Queue: 2, Waiting: []string{"org3"}}
	const want = `{"id":"j1","kind":"sum","submission":{"member":"north","time":"2026-11-23T09:39:30Z"},"status":"failed",` +
		`"submitted":"2026-11-23T09:39:30Z","finished":"2026-11-23T09:39:33Z","steps":[` +
		`{"phase":"aggregate","round":1,"attempt":2,"started":"2026-11-23T09:39:31Z","finished":"2026-11-23T09:39:32Z","done":true,"failed":["west"]},` +
		`{"phase":"aggregate","round":2,"attempt":1,"started":"2026-11-23T09:39:32Z","done":false}],` +
		`"error":"boom","failures":{"east":"late","west":"gone"},"dropped_steps":4,` +
		`"progress":{"phase":"aggregate","done":1,"total":3},"queue":2,"waiting":["org3"]}`
	if got := marshal(t, js); got != want {
		t.Errorf("job JSON\n got %s\nwant %s", got, want)
	}
	// A running job with no step yet lists its steps as [], as a copy of
	// the state's record has them; it has no submission, end or error.
	bare := &runner.JobRecord{ID: "j2", Kind: "sum", Status: runner.StatusRunning, Submitted: t0, Steps: []*runner.StepRecord{}}
	if got, want := marshal(t, &api.JobStatus{JobRecord: bare.API()}), `{"id":"j2","kind":"sum","status":"running","submitted":"2026-11-23T09:39:30Z","steps":[]}`; got != want {
		t.Errorf("bare job JSON\n got %s\nwant %s", got, want)
	}
}

// Every field the log's records show in JSON is the API's, under the same
// name and in the same place, and the statuses are the same words: a field
// added to one and not the other fails here.
func TestAPIRecordHasTheRecordsFields(t *testing.T) {
	for _, pair := range [][2]any{
		{runner.JobRecord{}, api.JobRecord{}},
		{runner.StepRecord{}, api.StepRecord{}},
		{runner.Submission{}, api.Submission{}},
	} {
		if got, want := jsonFields(reflect.TypeOf(pair[1])), jsonFields(reflect.TypeOf(pair[0])); got != want {
			t.Errorf("%T's JSON fields %s, want %T's %s", pair[1], got, pair[0], want)
		}
	}
	for a, r := range map[string]string{api.StatusRunning: runner.StatusRunning, api.StatusDone: runner.StatusDone, api.StatusFailed: runner.StatusFailed} {
		if a != r {
			t.Errorf("api status %q, runner's %q", a, r)
		}
	}
}

// jsonFields lists a struct's JSON tags in order, those of fields JSON
// skips left out.
func jsonFields(t reflect.Type) string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		out = append(out, tag)
	}
	return strings.Join(out, " ")
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
