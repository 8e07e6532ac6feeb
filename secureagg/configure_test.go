package secureagg

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
)

// Configure resolves auto by length, and to Paillier when the consortium
// has no lattice key; an explicit backend needs its key, and the error
// names the key file a party lacks; t is the chosen key's threshold.
func TestConfigure(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	lattice := testLattice(t, c)
	paillierOnly := filepath.Join(t.TempDir(), "p")
	both := filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{paillierOnly, both} {
		if err := keyring.SavePaillier(dir, c.keys["org01"]); err != nil {
			t.Fatal(err)
		}
	}
	if err := keyring.SaveLattice(both, lattice["org01"]); err != nil {
		t.Fatal(err)
	}
	step := testStep(c, "org02")
	for _, tc := range []struct {
		dir     string
		backend Backend
		length  int
		want    Backend
		t       int
	}{
		{both, BackendAuto, LatticeFrom - 1, BackendPaillier, c.pk.Threshold},
		{both, BackendAuto, LatticeFrom, BackendLattice, lattice["org01"].Quorum - 1},
		{paillierOnly, BackendAuto, 100000, BackendPaillier, c.pk.Threshold},
		{both, BackendLattice, 1, BackendLattice, lattice["org01"].Quorum - 1},
		{both, BackendPaillier, 100000, BackendPaillier, c.pk.Threshold},
	} {
		cfg, th, err := Configure(job.DirSecrets(tc.dir), "org01", step, Setup{Backend: tc.backend, Length: tc.length, FracBits: 16, ValueBits: 32})
		if err != nil || cfg.Backend != tc.want || th != tc.t || (cfg.Keys == nil) != (tc.want == BackendLattice) || (cfg.Lattice == nil) != (tc.want == BackendPaillier) {
			t.Fatalf("%s of %d values in %s: %s, t %d, %v; want %s, t %d", tc.backend, tc.length, filepath.Base(tc.dir), cfg.Backend, th, err, tc.want, tc.t)
		}
	}
	_, _, err := Configure(job.DirSecrets(paillierOnly), "org01", step, Setup{Backend: BackendLattice, Length: 1, FracBits: 16, ValueBits: 32})
	if err == nil || !strings.Contains(err.Error(), "no consortium lattice key") || !strings.Contains(err.Error(), keyring.LatticePublicFile) {
		t.Fatalf("lattice without its key: %v", err)
	}
}
