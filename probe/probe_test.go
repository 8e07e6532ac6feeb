package probe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

func init() { testkit.SmallKeys() }

// keyBits is the modulus of the tests' threshold keys: 512, as sum's and
// quantile's tests, since no test here is about the size; at 1024 the
// Paillier arithmetic was about half of the package's CPU (29 Nov 2026).
const keyBits = 512

func writeSpec(t *testing.T, parties int, params string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("kind: probe\nparties:\n")
	for i := range parties {
		fmt.Fprintf(&b, "  - name: org%d\n", i+1)
	}
	fmt.Fprintf(&b, "params: {%s}\n", params)
	path := filepath.Join(t.TempDir(), "probe.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A probe over three real nodes (libp2p on loopback, Raft, ledgers) on
// each backend: every party checks the total itself, the log holds its
// digest, and every party's ledger shows only secureagg's messages.
func TestProbeOverRealNodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ backend, values string }{{"lattice", "20000"}, {"paillier", "40"}} {
		t.Run(c.backend, func(t *testing.T) {
			spec := writeSpec(t, 3, "values: "+c.values+", backend: "+c.backend)
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"probe": Kind{}}, Out: out, Setup: simtest.ThresholdKeys(keyBits)})
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := job.LoadSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			if res["exact"] != true || res["backend"] != c.backend || fmt.Sprint(res["values"]) != c.values {
				t.Fatalf("result %v", res)
			}
			if inc := res["included"].([]any); len(inc) != 3 {
				t.Fatalf("included %v", inc)
			}
			if d, _ := res["digest"].(string); len(d) != 64 {
				t.Fatalf("digest %v", res["digest"])
			}
			for _, p := range loaded.PartyNames() {
				entries, err := audit.ReadFile(filepath.Join(out, "audit", p+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if !profileAllows(e) {
						t.Errorf("%s sent %s disclosing %q", p, e.Type, e.Disclosure)
					}
				}
			}
		})
	}
}

// A probe with a party down fails, naming that party, and does not wait
// out the step timeout: it never goes on without a party.
func TestProbePartyDown(t *testing.T) {
	names := []string{"org1", "org2", "org3", "org4"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	timing := node.Timing{SendMS: 3000, StepMS: 60000}
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		Kinds: job.Registry{"probe": Kind{}}, Setup: simtest.ThresholdKeys(keyBits), Timing: timing,
	})
	defer c.Close()
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, n := range names { // a non-leader, so the job is not also failing over
		if n != leader.Name() {
			victim = n
		}
	}
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(writeSpec(t, 4, "values: 5000, backend: lattice"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	id, err := leader.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := leader.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status == node.StatusDone || !strings.Contains(rec.Error, "party "+victim+":") {
		t.Fatalf("job %s: %q, want a failure naming %s", rec.Status, rec.Error, victim)
	}
	t.Logf("failed as it should: %s", rec.Error)
	if took := time.Since(start); took > time.Duration(timing.StepMS)*time.Millisecond/2 {
		t.Errorf("took %v with a party down, step timeout %d ms", took, timing.StepMS)
	}
}

// profileAllows is the leakage profile (package doc) for one ledger entry.
func profileAllows(e audit.Entry) bool {
	switch wire.Disclosure(e.Disclosure) {
	case wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DisclosePublicResult:
		return true
	case wire.DiscloseControl:
		return slices.Contains([]string{secureagg.TypeDigest, secureagg.TypeCommit, secureagg.TypeSeed, secureagg.TypeShareRequest, secureagg.TypeFormed, audit.DecisionType}, e.Type) ||
			e.Type == "job/output" && e.Phase == "admit"
	}
	return false
}

// The public vectors: deterministic per seed and party, in range, and
// different across parties and seeds.
func TestVector(t *testing.T) {
	t.Parallel()
	a := Vector([]byte("seed"), "org1", 1000)
	if !slices.Equal(a, Vector([]byte("seed"), "org1", 1000)) {
		t.Fatal("not deterministic")
	}
	if slices.Equal(a, Vector([]byte("seed"), "org2", 1000)) || slices.Equal(a, Vector([]byte("seeds"), "org1", 1000)) {
		t.Fatal("the same vector for another party or seed")
	}
	for _, x := range a {
		if x < 0 || x >= 1<<valueBits || x != float64(int64(x)) {
			t.Fatalf("value %v outside [0, 2^%d) or not an integer", x, valueBits)
		}
	}
	sum := slices.Clone(a)
	b := Vector([]byte("seed"), "org2", 1000)
	for i := range sum {
		sum[i] += b[i]
	}
	if m := check(sum, []byte("seed"), []string{"org1", "org2"}); m != "" {
		t.Fatal(m)
	}
	sum[7]++
	if m := check(sum, []byte("seed"), []string{"org1", "org2"}); !strings.Contains(m, "value 7 of 1000 is off by 1") {
		t.Fatalf("mismatch %q", m)
	}
}

// The coordinator's decision: a total some party found wrong fails the
// job naming it; a silent or failed party fails it naming that party and
// why, even when the total was formed without it or it failed after
// (a probe never re-runs without it, and shows every fault); parties that
// got another total than the root fail it.
func TestDecide(t *testing.T) {
	t.Parallel()
	step := job.Step{Job: "j", Phase: "aggregate", Parties: []string{"org1", "org2", "org3"}, Coordinator: "org1"}
	root := secureagg.Root(step)
	good := func() *job.Outcome[output] {
		o := &job.Outcome[output]{Step: step, Results: map[string]output{}, Failed: map[string]string{}}
		for _, p := range step.Parties {
			o.Results[p] = output{Outcome: secureagg.Outcome{Included: step.Parties}, Digest: strings.Repeat("ab", 32)}
		}
		return o
	}
	spec := &job.Spec{Kind: "probe", Parties: []job.PartySpec{{Name: "org1"}, {Name: "org2"}, {Name: "org3"}}}
	d, err := decide(spec, good())
	if err != nil || d.Digest != strings.Repeat("ab", 32) || len(d.Included) != 3 || d.Tables != nil {
		t.Fatalf("%+v %v", d, err)
	}
	// With tables: each party must have checked the spec's own.
	withTables := &job.Spec{Kind: "probe", Parties: []job.PartySpec{{Name: "org1"}, {Name: "org2", Tables: []job.TableSpec{{Name: "loans"}, {Name: "stays"}}}, {Name: "org3"}}}
	checked := good()
	r := checked.Results["org2"]
	r.Checked = []string{"loans", "stays"}
	checked.Results["org2"] = r
	if d, err := decide(withTables, checked); err != nil || fmt.Sprint(d.Tables) != "map[org2:[loans stays]]" {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := decide(withTables, good()); err == nil || !strings.Contains(err.Error(), "party org2 checked tables [], but the spec gives it [loans stays]") {
		t.Fatalf("a party that checked none of its tables: %v", err)
	}
	withdrew := good()
	delete(withdrew.Results, "org3")
	withdrew.Failed["org3"] = "party org3: table stays: table: bad source: sqlite org3.db table t: row 2: column \"v\": NULL value"
	wrong := good()
	r = wrong.Results["org3"]
	r.Mismatch = "value 3 of 10 is off by 2"
	wrong.Results["org3"] = r
	other := good()
	r = other.Results["org3"]
	r.Digest = strings.Repeat("cd", 32)
	other.Results["org3"] = r
	silent := good()
	delete(silent.Results, "org3")
	silent.Silent = []string{"org3"}
	failed := good()
	delete(failed.Results, root)
	failed.Failed[root] = "no lattice key"
	for name, c := range map[string]struct {
		o    *job.Outcome[output]
		want string
	}{
		"mismatch":     {wrong, "party org3: the decrypted total is not the sum of the parties' vectors: value 3 of 10 is off by 2"},
		"other total":  {other, "party org3 got another total"},
		"silent party": {silent, "party org3: did not answer in time"},
		"failed root":  {failed, "party " + root + ": no lattice key"},
		"bad table":    {withdrew, "party org3: table stays: table: bad source: sqlite org3.db table t: row 2"},
	} {
		if _, err := decide(spec, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// Bad params are refused naming the field.
func TestValidate(t *testing.T) {
	t.Parallel()
	for params, field := range map[string]string{
		"values: 0":                  "params.values",
		"values: 16777217":           "params.values",
		"backend: rsa":               "params.backend",
		"timeout_ms: -1":             "params.timeout_ms",
		"values: 10, colour: purple": "colour",
	} {
		spec, err := job.LoadSpec(writeSpec(t, 3, params))
		if err == nil {
			err = Kind{}.Validate(spec)
		}
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", params, err, field)
		}
	}
	spec, err := job.LoadSpec(writeSpec(t, 1, ""))
	if err == nil {
		err = Kind{}.Validate(spec)
	}
	if err == nil || !strings.Contains(err.Error(), "parties") {
		t.Errorf("one party: %v, want an error naming parties", err)
	}
	if spec, err := job.LoadSpec(writeSpec(t, 3, "")); err != nil || (Kind{}).Validate(spec) != nil {
		t.Fatalf("defaults: %v", err)
	}
}
