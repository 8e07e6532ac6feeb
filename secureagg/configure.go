package secureagg

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// Setup is what a job kind decides about its aggregations, the same at
// every party of a step: Configure turns it into a party's Config with the
// key of the backend it resolves to.
type Setup struct {
	// Backend is the job's params.backend (ParseBackend); auto is
	// resolved by Choose.
	Backend Backend
	// Length is the vector's length.
	Length              int
	FracBits, ValueBits int
	// Noise is the noise for a key that tolerates t colluders (nil:
	// none); it is called once the backend, and so t, is known.
	Noise func(t int) *Noise
}

// Configure resolves setup's backend for step (auto: Choose, and Paillier
// when the consortium has no lattice key) and reads this party's key of
// that backend from secrets. It returns the config to aggregate with
// and the key's threshold t, the colluders its decryption tolerates:
// Paillier's t, or the lattice key's quorum less one. On the Paillier
// backend only t+1 parties are asked for decryption shares up front (more
// only if some fail): the shares and their proofs are most of a round's
// cost. The config carries the node's randomiser pool, or its pool of
// lattice encryptions of zero, for the key when the node keeps one. Errors name the party and the key file it lacks, so an operator
// knows which key to install.
func Configure(secrets job.Secrets, self string, step job.Step, setup Setup) (Config, int, error) {
	cfg := Config{FracBits: setup.FracBits, ValueBits: setup.ValueBits}
	noise := func(t int) *Noise {
		if setup.Noise == nil {
			return nil
		}
		return setup.Noise(t)
	}
	b := setup.Backend
	var lattice *lattice.Keys // read once, when auto may choose it
	if b == BackendAuto && setup.Length >= LatticeFrom {
		// A consortium without a lattice key stays on Paillier: the key
		// is the consortium's, so every member lacks it alike.
		k, err := keyring.ReadLattice(secrets)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return cfg, 0, fmt.Errorf("party %s: its lattice key, which params.backend auto would use for %d values: %w", self, setup.Length, err)
		default:
			lattice, cfg.Noise = k, noise(k.Quorum-1)
			b = Choose(b, setup.Length, len(step.Parties), cfg)
		}
	}
	switch b {
	case BackendLattice:
		if lattice == nil {
			k, err := keyring.ReadLattice(secrets)
			if err != nil {
				return cfg, 0, fmt.Errorf("party %s has no consortium lattice key (run 'cohort keys deal --scheme bgv' or a keygen job with scheme bgv): %w", self, err)
			}
			lattice, cfg.Noise = k, noise(k.Quorum-1)
		}
		cfg.Backend, cfg.Lattice = BackendLattice, lattice
		cfg.LatticeZeros = keyring.LatticeZeros(secrets, lattice)
		return cfg, lattice.Quorum - 1, nil
	case BackendAuto, BackendPaillier:
		k, err := keyring.ReadPaillier(secrets)
		if err != nil {
			return cfg, 0, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", self, err)
		}
		t := k.Public().Threshold
		cfg.Backend, cfg.Keys, cfg.Noise, cfg.Decryptors = BackendPaillier, k, noise(t), t+1
		cfg.Randomizers = keyring.PaillierRandomizers(secrets, k)
		return cfg, t, nil
	}
	return cfg, 0, fmt.Errorf("secureagg: unknown backend %q", b)
}
