package lattice

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// errorSampler draws the fresh encryptions' errors from the distribution
// Lattigo's Gaussian sampler draws for ring.DiscreteGaussian{Sigma: σ,
// Bound: B}: |Z|·σ for a standard normal Z, redrawn while above B, rounded
// to the nearest integer c, and negated on a fair coin. So
//
//	P(|x| ≤ c) = erf(min(c+½, B)/(σ√2)) / erf(B/(σ√2)),
//
// and |x| = c for c below ⌈B−½⌉ exactly when a uniform r falls between
// those probabilities' cumulative table entries.
//
// Lattigo's sampler spends about 14 ns a coefficient on a ziggurat over
// float64s, a rejection loop and a ChaCha8 stream; a fresh encryption
// draws two polynomials of them, which on a9a's boosting was 4 % of the
// CPU over real nodes (docs/boost.md, "A table for the errors"). Here a
// coefficient takes one 64-bit word of an AES-256-CTR keystream
// (keystream.go) and, through a guide table, mostly one comparison: about
// 5 ns. Like Lattigo's, the
// time depends on the error drawn (a draw past the guide's entry compares
// more): a process that shares the node's cores could time it.
//
// The table is computed in float64 from erfc, so each entry's tail
// probability P(|x| > c) is exact to about 2^-50 relatively and the whole
// table to about 2^-63 absolutely; the draws are 63 bits, one more for the
// sign. TestErrorSampler compares its draws with these probabilities and
// with Lattigo's sampler's.
type errorSampler struct {
	draws  *keystream
	table  []uint64 // table[c] = round(2^63·P(|x| ≤ c)), increasing, all below 2^63
	moduli []uint64
	// guide[b] is the magnitude of the least r whose top guideBits bits
	// are b: r's magnitude is at least that, and mostly just that.
	guide [1 << guideBits]uint8
}

// guideBits is how many of a draw's top bits index errorSampler's guide:
// 256 entries, against which all but about 1 draw in 25 need at most one
// comparison with the table.
const guideBits = 8

// newErrorSampler returns the sampler of xe's distribution whose draws
// are the AES-256-CTR keystream of key (from crypto/rand but in tests),
// writing residues modulo moduli.
func newErrorSampler(key [32]byte, xe ring.DiscreteGaussian, moduli []uint64) (*errorSampler, error) {
	table, err := errorTable(xe.Sigma, xe.Bound)
	if err != nil {
		return nil, err
	}
	draws, err := newKeystream(key)
	if err != nil {
		return nil, err
	}
	s := &errorSampler{draws: draws, table: table, moduli: moduli}
	for b := range s.guide {
		var c uint8
		for _, t := range table {
			if uint64(b)<<(63-guideBits) >= t {
				c++
			}
		}
		s.guide[b] = c
	}
	return s, nil
}

// errorTable is errorSampler's cumulative table for σ and B.
func errorTable(sigma, bound float64) ([]uint64, error) {
	if !(sigma > 0 && sigma < 1<<20) || !(bound >= 1 && bound <= 64*sigma) {
		return nil, fmt.Errorf("%w: an error distribution of σ %g and bound %g", ErrParams, sigma, bound)
	}
	a := 1 / (sigma * math.Sqrt2)
	// P(|x| > c) = (erfc((c+½)a) − erfc(Ba)) / erf(Ba): from erfc, so the
	// small tails keep their relative precision.
	norm, tailB := math.Erf(bound*a), math.Erfc(bound*a)
	var table []uint64
	for c := 0; float64(c)+0.5 < bound; c++ {
		tail := (math.Erfc((float64(c)+0.5)*a) - tailB) / norm
		table = append(table, 1<<63-uint64(math.Round(math.Ldexp(tail, 63))))
	}
	for c := 1; c < len(table); c++ {
		if table[c] <= table[c-1] || table[c] >= 1<<63 {
			return nil, fmt.Errorf("%w: the error distribution of σ %g and bound %g has entries too small to draw", ErrParams, sigma, bound)
		}
	}
	return table, nil
}

// magnitude is |x| for the 63-bit uniform r: how many entries r reaches,
// counted from the guide's entry for r's top bits.
func (s *errorSampler) magnitude(r uint64) uint64 {
	c := uint64(s.guide[r>>(63-guideBits)])
	for c < uint64(len(s.table)) && r >= s.table[c] {
		c++
	}
	return c
}

// read sets p (coefficient domain, one row per modulus) to fresh errors.
func (s *errorSampler) read(p ring.Poly) {
	n := p.N()
	words := s.draws.next(8 * n)
	for i := range n {
		w := binary.LittleEndian.Uint64(words[8*i:])
		c := s.magnitude(w >> 1)
		// −c, as q − c, on the coin's 1 unless c is 0.
		neg := w & 1 & ((c | -c) >> 63)
		for j, q := range s.moduli {
			p.Coeffs[j][i] = c + neg*(q-2*c)
		}
	}
}
