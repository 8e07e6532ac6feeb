package bicluster_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/secureagg"
)

// params.backend: lattice runs the job's aggregations on the lattice key
// (the pair test stays on Paillier) and finds the same biclusters as the
// Paillier backend: both sum the same fixed-point values exactly.
func TestJobLatticeBackend(t *testing.T) {
	t.Parallel()
	seed := seedN(3)
	m, _, err := synth.Paper(0.05).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, backend := range []string{"paillier", "lattice"} {
		path, names, _ := consortium(t, m, 3, seed, "backend: "+backend)
		_, pk := keytest.Paillier(t, inmemKeyBits, names)
		lk := keytest.Lattice(t, names)
		opts := jobtest.Options{Secrets: map[string]job.Secrets{}, Seed: seed}
		for _, name := range names {
			dir := filepath.Join(t.TempDir(), name)
			if err := keyring.SavePaillier(dir, pk[name]); err != nil {
				t.Fatal(err)
			}
			if err := keyring.SaveLattice(dir, lk[name]); err != nil {
				t.Fatal(err)
			}
			opts.Secrets[name] = jobtest.DirSecrets(dir)
		}
		pinJointSeed(t, opts, seed) // the same initial order on both backends
		rep := runJob(t, path, opts)
		b, err := json.Marshal(rep.Result["biclusters"])
		if err != nil {
			t.Fatal(err)
		}
		results[backend] = string(b)
		if backend == "lattice" {
			ups := 0
			for _, s := range rep.Sent {
				if s.Message.Type != secureagg.TypeUp {
					continue
				}
				if ups++; len(s.Message.Body) < 100_000 {
					t.Fatalf("%s sent an aggregate of %d bytes: not a lattice ciphertext", s.From, len(s.Message.Body))
				}
			}
			if ups == 0 {
				t.Fatal("no aggregate was sent up")
			}
		}
	}
	if results["paillier"] != results["lattice"] {
		t.Fatalf("lattice %s\nPaillier %s", results["lattice"], results["paillier"])
	}
}
