package secureagg

import (
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/lattice"
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
	// BackendLattice is multiparty BGV (package lattice): milliseconds of CPU
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
// its noise share below 2^62, and a key of at most lattice.MaxMembers members.
func LatticeFits(parties int, cfg Config) error {
	e, err := planEncoding(parties, cfg)
	if err != nil {
		return err
	}
	return e.latticeFits(parties)
}

// maxLatticeValueBits is lattice.Layout's bound on ValueBits.
const maxLatticeValueBits = 62

// encoding is how one step's values are encoded, planned once per
// aggregation (and per LatticeFits) from cfg and the number of parties, so
// that both backends accept and bound the same values: the fixed point,
// the bound on an encoded input, the bound on an encoded input plus its
// noise share, and the noise plan.
type encoding struct {
	fp        paillier.FixedPoint
	valueBits int
	inBound   *big.Int // |round(x·2^FracBits)| < inBound = 2^ValueBits
	bound     *big.Int // |encoded input + noise share| < bound
	noise     *NoiseReport
	noiseDesc string // the noise as every party's shape names it
}

// planEncoding checks cfg's fixed point and plans its noise for a step of
// the given number of parties.
func planEncoding(parties int, cfg Config) (*encoding, error) {
	if cfg.FracBits < 0 || cfg.ValueBits < 1 {
		return nil, fmt.Errorf("secureagg: bad fixed point: FracBits %d, ValueBits %d", cfg.FracBits, cfg.ValueBits)
	}
	e := &encoding{fp: paillier.FixedPoint{FracBits: cfg.FracBits}, valueBits: cfg.ValueBits, noiseDesc: "none"}
	e.inBound = new(big.Int).Lsh(big.NewInt(1), uint(cfg.ValueBits))
	e.bound = e.inBound
	if cfg.Noise == nil {
		return e, nil
	}
	var err error
	if e.noise, err = cfg.Noise.plan(parties); err != nil {
		return nil, err
	}
	nb, err := e.fp.Encode(e.noise.shareBound())
	if err != nil {
		return nil, fmt.Errorf("secureagg: noise bound: %w", err)
	}
	e.bound = new(big.Int).Add(e.inBound, nb.Abs(nb))
	e.noiseDesc = fmt.Sprintf("%s/%g/%g/%g/%d", cfg.Noise.Mechanism, cfg.Noise.Epsilon, cfg.Noise.Delta, cfg.Noise.Sensitivity, cfg.Noise.Colluders)
	return e, nil
}

// bits is the bit length of the largest encoded value with its noise
// share: the packing's and the lattice layout's ValueBits, so that both
// backends accept the same noisy values.
func (e *encoding) bits() int { return new(big.Int).Sub(e.bound, big.NewInt(1)).BitLen() }

// latticeFits is LatticeFits for a planned encoding.
func (e *encoding) latticeFits(parties int) error {
	if parties > lattice.MaxMembers {
		return fmt.Errorf("secureagg: the lattice backend sums at most %d parties, not %d", lattice.MaxMembers, parties)
	}
	if bits := e.bits(); bits > maxLatticeValueBits {
		return fmt.Errorf("secureagg: the lattice backend needs |round(x·2^frac_bits)| plus its noise share below 2^%d; "+
			"value_bits %d with this noise needs %d bits", maxLatticeValueBits, e.valueBits, bits)
	}
	return nil
}
