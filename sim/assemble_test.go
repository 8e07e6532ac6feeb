package sim_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// keepingSum is the sum kind with an Assembler that reads what each party
// kept in its data dir: sim must hand it every party's Secrets and the
// output directory, and write the result it returns.
type keepingSum struct{ sum.Kind }

func (keepingSum) Assemble(_ context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]any
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, name := range spec.PartyNames() {
		_, err := parties[name].ReadSecret("keys/threshold.share")
		keys[name] = err == nil
	}
	res["assembled"] = keys
	if err := os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("beside result.json\n"), 0o644); err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func TestSimAssemblesFromEveryParty(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	spec := writeSpec(t, ctx, dir, "sum", "csv")
	out := filepath.Join(dir, "out")
	res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"sum": keepingSum{}}, Out: out, Setup: simtest.ThresholdKeys(keyBits)})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res["assembled"].(map[string]any)
	if !ok || len(got) != len(parties) {
		t.Fatalf("assembled = %v, want an entry per party", res["assembled"])
	}
	for _, p := range parties {
		if got[p] != true {
			t.Errorf("party %s: its key share was not readable through the Secrets sim passed", p)
		}
	}
	var written map[string]any
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &written); err != nil || written["assembled"] == nil {
		t.Fatalf("result.json lacks the assembled field: %s", b)
	}
	if _, err := os.Stat(filepath.Join(out, "extra.txt")); err != nil {
		t.Fatalf("a file the assembler wrote is not in the output: %v", err)
	}
}
