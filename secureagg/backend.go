package secureagg

import (
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/mhe"
	"github.com/cohortdm/cohort/paillier"
)

// Backend names the cryptosystem of an aggregation.
type Backend string

// Backends.
const (
	// BackendPaillier is threshold Paillier (package paillier): every
	// decryption share carries a proof, so a bad share is named at once;
	// a few kilobytes per party for short vectors, seconds of CPU per
	// 10,000 values.
	BackendPaillier Backend = "paillier"
	// BackendLattice is multiparty BGV (package mhe): milliseconds of CPU
	// per 10,000 values, but at least 0.9 MB per party per round (one
	// ciphertext holds 8,192 coefficients); a bad share is found by
	// comparing quorums, not by a proof.
	BackendLattice Backend = "lattice"
	// BackendAuto lets Choose pick by the vector's length.
	BackendAuto Backend = "auto"
)

// LatticeFrom is the vector length from which BackendAuto picks the
// lattice backend. Below it a round's bytes decide on a wide-area network:
// the lattice backend sends at least one ciphertext of 393 KB and a mask
// of 197 KB per party whatever the length, Paillier about 512 bytes per
// 55 values. docs/secureagg.md has the measurements behind the number
// (the cross-over at 10 Mbit/s and 50 ms per hop lies between 1,400 and
// 2,800 values for 3 to 17 parties; on a LAN or in one process the lattice
// backend is faster at every length).
const LatticeFrom = 2500

// ParseBackend reads a job's params.backend: auto, paillier or lattice
// ("" is auto).
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(s); b {
	case "":
		return BackendAuto, nil
	case BackendAuto, BackendPaillier, BackendLattice:
		return b, nil
	}
	return "", fmt.Errorf("must be auto, paillier or lattice, not %q", s)
}

// Choose resolves a job's backend for an aggregation of vectors of length
// values over the given number of parties with cfg's fixed point and noise
// (Backend and keys are ignored): BackendAuto becomes the lattice backend
// from LatticeFrom values on when it can carry the values (LatticeFits),
// else Paillier; the other backends stay as they are. It depends only on
// what every party of a step shares, so every party chooses the same.
func Choose(b Backend, length, parties int, cfg Config) Backend {
	if b != BackendAuto {
		return b
	}
	if length >= LatticeFrom && LatticeFits(parties, cfg) == nil {
		return BackendLattice
	}
	return BackendPaillier
}

// LatticeFits says why the lattice backend cannot carry cfg's values over
// the given number of parties, or nil: it bounds every encoded input plus
// its noise share below 2^62, and a key of at most mhe.MaxMembers members.
func LatticeFits(parties int, cfg Config) error {
	if parties > mhe.MaxMembers {
		return fmt.Errorf("secureagg: the lattice backend sums at most %d parties, not %d", mhe.MaxMembers, parties)
	}
	bits, err := latticeValueBits(parties, cfg)
	if err != nil {
		return err
	}
	if bits > maxLatticeValueBits {
		return fmt.Errorf("secureagg: the lattice backend needs |round(x·2^frac_bits)| plus its noise share below 2^%d; "+
			"value_bits %d with this noise needs %d bits", maxLatticeValueBits, cfg.ValueBits, bits)
	}
	return nil
}

// maxLatticeValueBits is mhe.Layout's bound on ValueBits.
const maxLatticeValueBits = 62

// latticeValueBits is the ValueBits of the lattice layout: cfg.ValueBits,
// or with noise the bit length of the Paillier path's bound (2^ValueBits
// plus the encoded bound on one noise share), so that both backends accept
// the same noisy values.
func latticeValueBits(parties int, cfg Config) (int, error) {
	if cfg.FracBits < 0 || cfg.ValueBits < 1 {
		return 0, fmt.Errorf("secureagg: bad fixed point: FracBits %d, ValueBits %d", cfg.FracBits, cfg.ValueBits)
	}
	if cfg.Noise == nil {
		return cfg.ValueBits, nil
	}
	rep, err := cfg.Noise.plan(parties)
	if err != nil {
		return 0, err
	}
	nb, err := paillier.FixedPoint{FracBits: cfg.FracBits}.Encode(rep.shareBound())
	if err != nil {
		return 0, fmt.Errorf("secureagg: noise bound: %w", err)
	}
	bound := new(big.Int).Lsh(big.NewInt(1), uint(cfg.ValueBits))
	bound.Add(bound, nb.Abs(nb))
	return bound.Sub(bound, big.NewInt(1)).BitLen(), nil
}
