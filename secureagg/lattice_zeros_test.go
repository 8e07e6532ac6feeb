package secureagg

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// zeroSecrets are a data dir's Secrets that offer a pool of lattice
// encryptions of zero, as a node's do.
type zeroSecrets struct {
	job.Secrets
	pool *lattice.ZeroPool
}

func (s zeroSecrets) LatticeZeros() *lattice.ZeroPool { return s.pool }

// A round whose parties encrypt with their nodes' pools of encryptions of
// zero sums exactly, each party taking one per ciphertext from its own
// pool, and each decryptor one polynomial of smudging noise per
// ciphertext of each of its shares; Configure hands the pool of the installed key to the lattice
// backend, and none to Paillier.
func TestLatticeZeroPools(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 5)
	const length = 20000 // two ciphertexts per party
	pools := map[string]*lattice.ZeroPool{}
	for _, name := range c.names {
		p, err := lattice.NewZeroPool(context.Background(), keys[name].PublicKey, 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		pools[name] = p
	}
	for _, p := range pools {
		for deadline := time.Now().Add(2 * time.Minute); p.Stats().Ready < 2 || p.Stats().Noise.Ready < 4; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("pool not full after 2 minutes")
			}
		}
		p.Pause()
	}
	net := jobtest.NewNetwork(c.names...)
	in, want := exactInputs(c, length, 5)
	outs := runAll(t, net, coordinatedBy(c, "org01"), func(name string) Config {
		cfg := latticeConfig(keys, name)
		cfg.LatticeZeros = pools[name]
		return cfg
	}, in)
	var noise int64
	for _, name := range c.names {
		if o := outs[name]; o.err != nil || !slices.Equal(o.res.Sum, want) {
			t.Fatalf("%s: %v, or the sum differs from the exact sum", name, o.err)
		}
		st := pools[name].Stats()
		if st.Taken != 2 || st.Computed != 0 {
			t.Fatalf("%s: took %d encryptions of zero from its pool, computed %d; want 2 and 0", name, st.Taken, st.Computed)
		}
		if st.Noise.Computed != 0 {
			t.Fatalf("%s: drew %d polynomials of noise itself with %d of its pool's taken", name, st.Noise.Computed, st.Noise.Taken)
		}
		noise += st.Noise.Taken
	}
	// Three quorums of three at N = 5 (PlanVerified), two ciphertexts each.
	if noise != 3*3*2 {
		t.Fatalf("the decryptors took %d polynomials of noise from their pools, want %d", noise, 3*3*2)
	}

	dir := filepath.Join(t.TempDir(), "d")
	if err := keyring.SaveLattice(dir, keys["org01"]); err != nil {
		t.Fatal(err)
	}
	s := zeroSecrets{job.DirSecrets(dir), pools["org01"]}
	cfg, _, err := Configure(s, "org01", testStep(c, "org01"), Setup{Backend: BackendLattice, Length: length, FracBits: 16, ValueBits: 32})
	if err != nil || cfg.LatticeZeros != pools["org01"] {
		t.Fatalf("Configure: %v; pool handed over: %v", err, cfg.LatticeZeros != nil)
	}
	other, err := keyring.DealLattice(c.names, 0) // another key of the same members
	if err != nil {
		t.Fatal(err)
	}
	s.pool = pools["org02"] // the same key: accepted
	if cfg, _, _ := Configure(s, "org01", testStep(c, "org01"), Setup{Backend: BackendLattice, Length: length, FracBits: 16, ValueBits: 32}); cfg.LatticeZeros == nil {
		t.Fatal("another member's pool of the same key refused")
	}
	wrong, err := lattice.NewZeroPool(context.Background(), other["org01"].PublicKey, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	s.pool = wrong
	if cfg, _, _ := Configure(s, "org01", testStep(c, "org01"), Setup{Backend: BackendLattice, Length: length, FracBits: 16, ValueBits: 32}); cfg.LatticeZeros != nil {
		t.Fatal("a pool of another key handed over")
	}
}
