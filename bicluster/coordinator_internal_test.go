package bicluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// blockConsortium writes a spec of three parties, each holding twelve rows
// of ten columns with one block of similar values on columns 0–5 in rows
// 0–5 (one local bicluster each, all three on the same columns, so three
// candidate pairs and two in the merge test's round 0), deals them a
// 512-bit threshold key and returns the spec and the run's options.
func blockConsortium(t *testing.T) (*job.Spec, []string, jobtest.Options) {
	t.Helper()
	dir := t.TempDir()
	names := []string{"org01", "org02", "org03"}
	var spec strings.Builder
	spec.WriteString("kind: bicluster\nparties:\n")
	for p, name := range names {
		var csv strings.Builder
		csv.WriteString("id")
		for j := range 10 {
			fmt.Fprintf(&csv, ",c%d", j)
		}
		csv.WriteString("\n")
		for r := range 12 {
			fmt.Fprintf(&csv, "%s-%d", name, r)
			for j := range 10 {
				v := 0.0
				if r < 6 && j < 6 {
					v = 10 + float64(p+r+j)/97
				}
				fmt.Fprintf(&csv, ",%g", v)
			}
			csv.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: m, path: %s.csv}]\n", name, name)
	}
	spec.WriteString("params: {min_rows: 5}\n")
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec.String())
	_, keys := keytest.Paillier(t, 512, names)
	opts := jobtest.Options{Secrets: map[string]job.Secrets{}, Network: jobtest.NewNetwork(names...)}
	for _, n := range names {
		d := filepath.Join(t.TempDir(), n)
		if err := keyring.SavePaillier(d, keys[n]); err != nil {
			t.Fatal(err)
		}
		opts.Secrets[n] = jobtest.DirSecrets(d)
	}
	return s, names, opts
}

// evilPairs runs the job honestly up to the local biclusters, then asks
// the merge test on every candidate pair at once, not the pairs of the
// centre the log determines for round 0: more pairs compared, and their
// blinded values decrypted at a root.
type evilPairs struct{ Kind }

func (evilPairs) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	co, err := newCoordination(c)
	if err != nil {
		return nil, err
	}
	lp, err := co.localPhases(ctx)
	if err != nil {
		return nil, err
	}
	locals := lp.locals
	pairs := candidatePairs(locals)
	if len(pairs) != 3 || len(testRound(locals, pairs, nil, nil, 0)) != 2 {
		return nil, fmt.Errorf("the scenario did not arise: %d candidate pairs", len(pairs))
	}
	_, err = pairTestRound.Run(ctx, c, call(co, 0, testArgs{Pairs: pairs}), func(o *job.Outcome[testOutput]) (testDecision, error) {
		return decideTest(o, len(pairs))
	})
	return nil, err
}

// A coordinator that asks the merge test on pairs the log does not
// determine is refused by every party, which names it; no representative
// is encrypted, nothing is decrypted.
func TestCoordinatorCannotChoosePairs(t *testing.T) {
	t.Parallel()
	spec, names, opts := blockConsortium(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, evilPairs{}, spec, opts)
	if err == nil || !strings.Contains(err.Error(), "test round 0") {
		t.Fatalf("the job: %v", err)
	}
	recs := rep.Records()
	last := recs[len(recs)-1]
	if last.Step.Phase != pairTestRound.Phase || last.Error == "" {
		t.Fatalf("last step %s/%d: %q", last.Step.Phase, last.Step.Round, last.Error)
	}
	for _, p := range names {
		why := last.Failed[p]
		if !strings.Contains(why, "refuses test round 0") || !strings.Contains(why, "coordinator "+rep.Leaders[0]) {
			t.Errorf("%s: %q, want a refusal naming the coordinator", p, why)
		}
	}
	for _, s := range rep.Sent {
		if s.Message.Phase == pairTestRound.Phase && s.Message.Type != "job/output" && s.Message.Type != jobrun.FailedType {
			t.Errorf("%s sent %s in the refused test step", s.From, s.Message.Type)
		}
	}
}

// A root that is party B of a pair (org02: org01 leads, so the first
// other party roots) asks the decryptors to decrypt A's encrypted
// representative, which A sent it for the pair's evaluation, in place of
// the packed values: every decryptor checks the request against the
// digests their producers sent it directly, refuses naming the root and
// the coordinator, and makes no share. Nothing is decrypted.
func TestRootCannotDecryptRepresentative(t *testing.T) {
	t.Parallel()
	spec, names, opts := blockConsortium(t)
	const root, a = "org02", "org01"
	var mu sync.Mutex
	var reps []byte // org01's encrypted representative, as org02 got it
	opts.Network.Intercept(a, func(to string, m *wire.Message) *wire.Message {
		if m.Type == TypeReps && to == root {
			var body ctBody
			if err := wire.Unmarshal(m.Body, &body); err == nil {
				mu.Lock()
				reps = body.C
				mu.Unlock()
			}
		}
		return m
	})
	swapped := 0
	opts.Network.Intercept(root, func(to string, m *wire.Message) *wire.Message {
		if m.Type != secureagg.TypeShareRequest || m.Phase != pairTestRound.Phase {
			return m
		}
		var req struct {
			C       []byte `msgpack:"c"`
			Release bool   `msgpack:"release"`
		}
		if err := wire.Unmarshal(m.Body, &req); err != nil || len(req.C) == 0 {
			return m
		}
		mu.Lock()
		defer mu.Unlock()
		req.C = sameCount(t, opts, reps, req.C)
		swapped++
		m.Body, _ = wire.Marshal(req)
		return m
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, Kind{}, spec, opts)
	if err == nil {
		t.Fatalf("the job succeeded: %v", rep.Result)
	}
	if swapped == 0 {
		t.Fatal("the root asked no decryption: nothing was tested")
	}
	var test *job.Record
	for _, rec := range rep.Records() {
		if rec.Step.Phase == pairTestRound.Phase {
			test = rec
		}
	}
	if test == nil || test.Error == "" {
		t.Fatalf("the merge test did not fail: %v", err)
	}
	for _, p := range names {
		if p == root {
			continue
		}
		why := test.Failed[p]
		if !strings.Contains(why, "refuses to decrypt") || !strings.Contains(why, "root "+root) || !strings.Contains(why, "coordinator "+rep.Leaders[0]) {
			t.Errorf("%s: %q, want a refusal naming the root and the coordinator", p, why)
		}
	}
	for _, s := range rep.Sent {
		if s.Message.Phase == pairTestRound.Phase && s.Message.Type == secureagg.TypeShare {
			t.Errorf("%s sent a decryption share", s.From)
		}
	}
}

// sameCount is as many of org01's representative ciphertexts as the
// root's request holds (repeated if too few), so the request keeps its
// shape and only the digests can catch it.
func sameCount(t *testing.T, opts jobtest.Options, reps, asked []byte) []byte {
	t.Helper()
	keys, err := keyring.ReadPaillier(opts.Secrets["org01"])
	if err != nil {
		t.Error(err)
		return asked
	}
	pk := keys.Public()
	want, err1 := pk.UnmarshalCiphertexts(asked)
	got, err2 := pk.UnmarshalCiphertexts(reps)
	if err1 != nil || err2 != nil || len(got) == 0 {
		t.Errorf("ciphertexts: %v %v (%d)", err1, err2, len(got))
		return asked
	}
	out := make([]*paillier.Ciphertext, len(want))
	for i := range out {
		out[i] = got[i%len(got)]
	}
	b, err := pk.MarshalCiphertexts(out)
	if err != nil {
		t.Error(err)
		return asked
	}
	return b
}
