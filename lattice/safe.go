package lattice

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// safely runs f and turns a panic into an error. Lattigo's constructors and
// samplers panic when crypto/rand fails ("this error should not happen"),
// and a few of its operations panic on inconsistent shapes; every call into
// Lattigo that peer-derived data can reach goes through here or is preceded
// by the shape checks of the decoders, so no peer input can crash a node.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lattice: lattigo: %v", r)
		}
	}()
	return f()
}

// smudger draws the uniform flooding noise of decryption shares: each
// coefficient uniform in [-2^k, 2^k), written modulo every prime of Q.
// Lattigo's Gaussian sampler is not used for it: beyond σ = 2^53 it leaves
// the low bits of float64 samples to a slow arbitrary-precision path, and a
// uniform distribution gives the exact statistical-distance bound of the
// package doc. The draws are an AES-256-CTR keystream keyed from
// crypto/rand (keystream.go; before 30 Nov 2026 ChaCha8, a third as fast);
// it is not constant time.
type smudger struct {
	draws *keystream
	half  []uint64 // 2^k mod q_i
}

func newSmudger(moduli []uint64) (*smudger, error) {
	draws, err := newRandomKeystream()
	if err != nil {
		return nil, fmt.Errorf("lattice: seed smudging noise: %w", err)
	}
	s := &smudger{draws: draws, half: make([]uint64, len(moduli))}
	for i, q := range moduli {
		// 2^k = 2^(k-64)·2^64.
		s.half[i] = bits.Rem64(1<<(smudgeBits-64), 0, q)
	}
	return s, nil
}

// read fills p (coefficient domain, one row per prime of moduli) with fresh
// smudging noise.
func (s *smudger) read(p ring.Poly, moduli []uint64) {
	const hiMask = 1<<(smudgeBits+1-64) - 1
	n := p.N()
	words := s.draws.next(16 * n)
	for j := 0; j < n; j++ {
		// x uniform in [0, 2^(k+1)); the noise is x − 2^k.
		hi, lo := binary.LittleEndian.Uint64(words[16*j:])&hiMask, binary.LittleEndian.Uint64(words[16*j+8:])
		for i, q := range moduli {
			r := bits.Rem64(hi, lo, q)
			if r >= s.half[i] {
				p.Coeffs[i][j] = r - s.half[i]
			} else {
				p.Coeffs[i][j] = r + q - s.half[i]
			}
		}
	}
}
