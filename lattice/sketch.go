package lattice

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/cohortdm/cohort/wire"
)

// A sketch check lets a member confirm that a total's c1 is the sum of
// parts it does not hold, from a few numbers per part instead of the parts
// themselves.
//
// The checker draws a secret key and gives it only to the holders of the
// parts (never to whoever assembles the total). Each holder sends back the
// sketch of its part: for every prime q_i and each of SketchRows rows r,
// ⟨ρ_r, c1⟩ mod q_i, the inner product of the part's c1 coefficients (in
// the NTT domain, as stored) with pseudorandom weights ρ_r expanded from
// the key. The checker, holding the total and any parts it may hold
// itself, accepts when sketch(total) = Σ sketches of the parts.
//
// Soundness. If the total differs from the parts' sum, the difference d is
// nonzero modulo some q_i at some coefficient j, and for fixed other
// weights the check passes only for one value of ρ_{r,j} mod q_i. Each
// weight is a uniform 64-bit word (AES-256-CTR under a key derived from
// the checker's key and the aggregate's context) reduced modulo q_i, so it
// takes any one value with probability at most ⌈2^64/q_i⌉/2^64 < 2^-59.9
// for the 60-bit primes of ParamsBGV13; the rows are independent, so a
// forged total passes with probability below 2^-119. The assembler gets
// one try: it fixes the total before it can learn anything of ρ, which
// never leaves the checker and the holders. A holder that colludes with
// the assembler can make the check pass, exactly as it could by lying
// about its part under a digest check.
//
// Cost: about three multiply-adds per coefficient per row, and one
// AES-CTR word per coefficient position and row, where sending the part
// costs eight bytes per coefficient.

// SketchRows is the number of independent weight vectors of a sketch.
const SketchRows = 2

// SketchKey is a checker's secret for one aggregate's sketch check.
type SketchKey [32]byte

// NewSketchKey draws a fresh key from r (crypto/rand.Reader in use).
func NewSketchKey(r io.Reader) (SketchKey, error) {
	var k SketchKey
	if _, err := io.ReadFull(r, k[:]); err != nil {
		return k, fmt.Errorf("lattice: sketch key: %w", err)
	}
	return k, nil
}

// Sketch is a part's sketch under one checker's key, with the inputs the
// part holds. Values[r·L+i] is row r modulo the i-th of the L primes.
type Sketch struct {
	Inputs []Input
	Values []uint64
}

// Sketch returns the sketch of the aggregate's c1 under k, for the checker
// that drew k.
func (a *Aggregate) Sketch(k SketchKey) *Sketch {
	return &Sketch{Inputs: a.Inputs, Values: sketchPolys(k, a.Context, a.ps.moduli, a.c1)[0]}
}

// TargetFromSketches is Target for a total whose parts this member does
// not all hold: the total's c1 must be the sum of the held masks' c1 and
// of the parts sketched under k (see the comment above), and its inputs
// exactly theirs. It trusts each sketch's sender for its part (secureagg's
// senders are the root's children, each for its own subtree); the parts'
// c1 never travel to this member.
func (d *Decryptor) TargetFromSketches(total *Mask, held []*Mask, sketched []*Sketch, k SketchKey, e Expect) (*Target, error) {
	sets := [][]ring.Poly{total.c1}
	var inputs []Input
	for _, m := range append([]*Mask{total}, held...) {
		if err := d.checkPart(m, e); err != nil {
			return nil, err
		}
		if len(m.c1) != len(total.c1) {
			return nil, fmt.Errorf("%w: a part of another aggregate", ErrPolicy)
		}
		if m != total {
			inputs = append(inputs, m.Inputs...)
			sets = append(sets, m.c1)
		}
	}
	moduli := d.keys.Params.polyShape().moduli
	for _, s := range sketched {
		if len(s.Values) != SketchRows*len(moduli) {
			return nil, fmt.Errorf("%w: a sketch of %d values", ErrMismatch, len(s.Values))
		}
		inputs = append(inputs, s.Inputs...)
	}
	inputs, err := mergeInputs(inputs, nil)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(inputs, total.Inputs) {
		return nil, fmt.Errorf("%w: the total's inputs are not its parts' inputs", ErrPolicy)
	}
	sk := sketchPolys(k, e.Context, moduli, sets...)
	for v := range sk[0] {
		q := moduli[v%len(moduli)]
		var sum uint64
		for _, part := range sk[1:] {
			sum = ring.CRed(sum+part[v], q) // both < q < 2^63
		}
		for _, s := range sketched {
			sum = ring.CRed(sum+s.Values[v], q)
		}
		if sum != sk[0][v] {
			return nil, fmt.Errorf("%w: the total is not the sum of its parts", ErrPolicy)
		}
	}
	if err := e.checkInputs(d.keys.Self, e.Context, e.Shape, total.Inputs); err != nil {
		return nil, err
	}
	return &Target{Context: e.Context, Shape: e.Shape, Inputs: total.Inputs, c1: total.c1,
		Digest: targetDigest(e.Context, e.Shape, total.Inputs, total.c1)}, nil
}

// sketchPolys returns the sketch values of each set of ciphertext halves
// (all of one length) under k, drawing the weights once for all of them.
func sketchPolys(k SketchKey, ctx Context, moduli []uint64, sets ...[]ring.Poly) [][]uint64 {
	h := newHasher("cohort/mhe/sketch/1")
	h.context(ctx)
	h.bytes(k[:])
	seed := h.sum()
	block, _ := aes.NewCipher(seed[:]) // a 32-byte key never fails
	stream := cipher.NewCTR(block, make([]byte, aes.BlockSize))
	type acc struct{ w0, w1, w2 uint64 } // a 192-bit sum of products
	accs := make([][]acc, len(sets))
	for s := range accs {
		accs[s] = make([]acc, SketchRows*len(moduli))
	}
	var buf []byte
	var weights [SketchRows][]uint64
	for c := range sets[0] {
		n := sets[0][c].N()
		if len(buf) != 8*n*SketchRows {
			buf = make([]byte, 8*n*SketchRows)
			for r := range weights {
				weights[r] = make([]uint64, n)
			}
		}
		clear(buf)
		stream.XORKeyStream(buf, buf)
		for r := range weights {
			for j := range weights[r] {
				weights[r][j] = binary.LittleEndian.Uint64(buf[8*(r*n+j):])
			}
		}
		for s, set := range sets {
			for i, row := range set[c].Coeffs[:len(moduli)] {
				for r := range weights {
					a := &accs[s][r*len(moduli)+i]
					a.w0, a.w1, a.w2 = dotAcc(weights[r][:len(row)], row, a.w0, a.w1, a.w2)
				}
			}
		}
	}
	out := make([][]uint64, len(sets))
	for s := range out {
		out[s] = make([]uint64, len(accs[s]))
		for v, a := range accs[s] {
			q := moduli[v%len(moduli)]
			out[s][v] = bits.Rem64(bits.Rem64(a.w2, a.w1, q), a.w0, q)
		}
	}
	return out
}

// dotAcc adds Σ w[j]·x[j] to the 192-bit sum (w2, w1, w0).
func dotAcc(w, x []uint64, w0, w1, w2 uint64) (uint64, uint64, uint64) {
	for j, c := range x {
		hi, lo := bits.Mul64(w[j], c)
		var carry uint64
		w0, carry = bits.Add64(w0, lo, 0)
		w1, carry = bits.Add64(w1, hi, carry)
		w2 += carry
	}
	return w0, w1, w2
}

type sketchWire struct {
	Inputs []inputWire `msgpack:"inputs"`
	Values []uint64    `msgpack:"values"`
}

// MarshalBinary encodes the sketch.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	return wire.Marshal(sketchWire{Inputs: inputsWire(s.Inputs), Values: s.Values})
}

// ParseSketch decodes a sketch for a key of these parameters and members:
// inputs sorted, unique members, at least one; every value reduced modulo
// its prime.
func ParseSketch(b []byte, params Params, members int) (*Sketch, error) {
	var w sketchWire
	if err := wire.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%w: sketch: %w", ErrMalformed, err)
	}
	in, err := inputsFromWire(w.Inputs, members)
	if err != nil || len(in) == 0 {
		return nil, fmt.Errorf("%w: sketch inputs", ErrMalformed)
	}
	moduli := params.polyShape().moduli
	if len(w.Values) != SketchRows*len(moduli) {
		return nil, fmt.Errorf("%w: a sketch of %d values, expected %d", ErrMalformed, len(w.Values), SketchRows*len(moduli))
	}
	for v, x := range w.Values {
		if x >= moduli[v%len(moduli)] {
			return nil, fmt.Errorf("%w: sketch value not reduced modulo its prime", ErrMalformed)
		}
	}
	return &Sketch{Inputs: in, Values: w.Values}, nil
}
