package sim_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sum"
)

// A model trained by one sim run on a state directory serves an
// sjc-predict run on the same state: the restarted nodes find their parts
// of it in their kept data dirs.
func TestStateKeepsModelForPrediction(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kinds := job.Registry{"sjc": sjc.Kind{}, "sjc-predict": sjc.PredictKind{}, "sum": sum.Kind{}}
	state, dir := t.TempDir(), t.TempDir()
	src := filepath.Join("..", "examples", "sjc")
	spec, err := os.ReadFile(filepath.Join(src, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.CopyFS(filepath.Join(dir, "data"), os.DirFS(filepath.Join(src, "data")))
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trained, err := sim.Run(ctx, write("train.yaml", string(spec)), sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, "train"), State: state})
	if err != nil {
		t.Fatal(err)
	}
	// The training state (jobs/ID/) went with the job at north, whose log
	// had the job's end before its node closed (sim.Run waits on it); the
	// model stays.
	id := trained["job"].(string)
	scratch := func(party string) string { return filepath.Join(state, party, node.JobScratchDir, id) }
	if _, err := os.Stat(scratch("north")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("north kept the ended job's scratch: %v", err)
	}
	for _, party := range []string{"north", "south", "west"} {
		if _, err := os.Stat(filepath.Join(state, party, sjc.ModelSecret(id))); err != nil {
			t.Errorf("%s: model: %v", party, err)
		}
	}
	// Scratch left by a node that was down when its job ended goes when
	// the node next starts and has caught up with the log.
	leftover := filepath.Join(state, "west", node.JobScratchDir, id, "sjc-state-0")
	if err := os.MkdirAll(filepath.Dir(leftover), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leftover, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The prediction spec: the training spec's parties, schema and join
	// over the test files, naming the trained job.
	pred := string(spec)
	pred = strings.Replace(pred, "kind: sjc", "kind: sjc-predict", 1)
	for _, tb := range []string{"policies", "visits", "scripts"} {
		pred = strings.Replace(pred, "data/"+tb+".csv", "data/"+tb+"_test.csv", 1)
	}
	pred = pred[:strings.Index(pred, "params:")] + "params: {model: " + trained["job"].(string) + "}\n"
	res, err := sim.Run(ctx, write("predict.yaml", pred), sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, "pred"), State: state})
	if err != nil {
		t.Fatal(err)
	}
	if res["model"] != trained["job"] || res["rows"] != float64(94) {
		t.Fatalf("prediction with the kept model: %v", res)
	}
	// Every node has caught up with the log before taking part in the
	// prediction, and swept then: no scratch of the training is left.
	for _, party := range []string{"north", "south", "west"} {
		if _, err := os.Stat(scratch(party)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s kept the ended training job's scratch after a restart: %v", party, err)
		}
	}
	// Without the state, fresh nodes have no model.
	if _, err := sim.Run(ctx, filepath.Join(dir, "predict.yaml"), sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, "fresh")}); err == nil {
		t.Fatal("fresh nodes predicted with a model they never trained")
	}
	// A state over other parties is refused, naming both.
	other := strings.ReplaceAll(string(spec), "west", "east")
	_, err = sim.Run(ctx, write("other.yaml", other), sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, "other"), State: state})
	if err == nil || !strings.Contains(err.Error(), "north, south, west") || !strings.Contains(err.Error(), "east") {
		t.Fatalf("a state over other parties: %v", err)
	}
}

// A kept state keeps its threshold key: the second run deals none.
func TestStateKeepsKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, state := t.TempDir(), t.TempDir()
	spec := writeSpec(t, ctx, dir, "sum", "csv")
	kinds := job.Registry{"sum": sum.Kind{}}
	share := filepath.Join(state, "north", filepath.FromSlash(keyring.PaillierShareFile))
	var first []byte
	for i, out := range []string{"a", "b"} {
		res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, out), State: state, Setup: sim.ThresholdKeys(keyBits)})
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if res["sum"] != 79.75 {
			t.Fatalf("run %d: %v", i+1, res)
		}
		b, err := os.ReadFile(share)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatal("the second run on a kept state dealt a new key")
		}
	}
}
