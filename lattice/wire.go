package lattice

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/cohortdm/cohort/wire"
)

// A message is framed as one version byte, the length of its header
// (uvarint), the header (msgpack through wire.Marshal, decoded strictly
// by wire.Unmarshal) and then the coefficients of its polynomials. The
// coefficients stay out of msgpack because they are most of the bytes (31
// MB for a million values): a msgpack bin field costs a growing encoder
// buffer and a copy on each side, a quarter of a round's CPU when measured.
//
// Polynomials travel as their coefficients, prime by prime, each a
// little-endian uint64 (8·levels·n bytes per polynomial). Decoding checks
// the exact length and that every coefficient is reduced modulo its prime,
// so a decoded polynomial is always a valid operand: Lattigo's arithmetic
// assumes reduced inputs and does not check them. Lattigo's own
// (Un)MarshalBinary is not used on peer bytes: it carries the shape in the
// data and does not check coefficient ranges.

const (
	frameVersion = 1
	maxHeader    = 1 << 16
)

// frame encodes header and then the coefficients of every polynomial of
// polys, in order.
func frame(header any, polys ...[]ring.Poly) ([]byte, error) {
	return appendFrame(nil, header, polys...)
}

// appendFrame is frame appended to b, which grows once, by exactly the
// frame's size: a caller that lays out its own buffer (secureagg puts a
// message's framing before the blob) gets the encoding without a copy.
func appendFrame(b []byte, header any, polys ...[]ring.Poly) ([]byte, error) {
	n := 0
	for _, ps := range polys {
		for _, p := range ps {
			n += 8 * len(p.Coeffs) * p.N()
		}
	}
	b, err := appendFrameHead(b, header, n)
	if err != nil {
		return nil, err
	}
	for _, ps := range polys {
		b = appendPolys(b, ps)
	}
	return b, nil
}

// appendFrameHead appends a frame's version, header length and header to
// b, grown once for the n bytes of coefficients the caller appends next.
func appendFrameHead(b []byte, header any, n int) ([]byte, error) {
	h, err := wire.Marshal(header)
	if err != nil {
		return nil, err
	}
	b = slices.Grow(b, 1+binary.MaxVarintLen64+len(h)+n)
	b = append(b, frameVersion)
	b = binary.AppendUvarint(b, uint64(len(h)))
	return append(b, h...), nil
}

// unframe decodes the header of b into header and returns the coefficient
// bytes that follow it.
func unframe(b []byte, header any) ([]byte, error) {
	if len(b) < 2 || b[0] != frameVersion {
		return nil, fmt.Errorf("%w: not a framed message of version %d", ErrMalformed, frameVersion)
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > maxHeader || n > uint64(len(b)-1-k) {
		return nil, fmt.Errorf("%w: bad header length", ErrMalformed)
	}
	start := 1 + k
	if err := wire.Unmarshal(b[start:start+int(n)], header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return b[start+int(n):], nil
}

// polyShape is what a decoder expects of polynomials: the primes and the degree.
type polyShape struct {
	moduli []uint64
	n      int
}

func (p Params) polyShape() polyShape {
	return polyShape{moduli: p.bgv.RingQ().ModuliChain(), n: p.Slots()}
}

func (s polyShape) polyBytes() int { return len(s.moduli) * s.n * 8 }

func (s polyShape) newPoly() ring.Poly { return ring.NewPoly(s.n, len(s.moduli)-1) }

// appendPolys appends the encoding of polys to b.
func appendPolys(b []byte, polys []ring.Poly) []byte {
	n := 0
	for _, p := range polys {
		n += 8 * len(p.Coeffs) * p.N()
	}
	b = slices.Grow(b, n)
	at := len(b)
	b = b[:at+n]
	for _, p := range polys {
		for _, row := range p.Coeffs {
			out := b[at : at+8*len(row)]
			for j, c := range row {
				binary.LittleEndian.PutUint64(out[8*j:], c)
			}
			at += len(out)
		}
	}
	return b
}

// decodePolys decodes exactly count polynomials of shape s from b.
func (s polyShape) decodePolys(b []byte, count int) ([]ring.Poly, error) {
	if s.n == 0 || count < 0 || len(b) != count*s.polyBytes() {
		return nil, fmt.Errorf("%w: %d bytes of polynomials, expected %d of %d bytes", ErrMalformed, len(b), count, s.polyBytes())
	}
	out := make([]ring.Poly, count)
	for k := range out {
		out[k] = s.newPoly()
	}
	if err := s.decodeInto(b, out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeInto decodes exactly len(dst) polynomials of shape s from b into
// dst, whose polynomials must have shape s: the values the Allocate
// methods return are decoded into as they are, not allocated (and zeroed)
// a second time. On an error dst holds part of b: the caller drops it.
func (s polyShape) decodeInto(b []byte, dst []ring.Poly) error {
	if s.n == 0 || len(b) != len(dst)*s.polyBytes() {
		return fmt.Errorf("%w: %d bytes of polynomials, expected %d of %d bytes", ErrMalformed, len(b), len(dst), s.polyBytes())
	}
	for _, p := range dst {
		if len(p.Coeffs) != len(s.moduli) {
			return fmt.Errorf("%w: decode into an unallocated polynomial", ErrMismatch)
		}
	}
	if err := s.checkPolys(dst); err != nil {
		return err
	}
	for _, p := range dst {
		for i, q := range s.moduli {
			row := p.Coeffs[i]
			in := b[:8*len(row)]
			var bad bool
			for j := range row {
				c := binary.LittleEndian.Uint64(in[8*j:])
				bad = bad || c >= q
				row[j] = c
			}
			if bad {
				return fmt.Errorf("%w: coefficient not reduced modulo its prime", ErrMalformed)
			}
			b = b[len(in):]
		}
	}
	return nil
}

// checkEncoded checks that b is the encoding of exactly count polynomials
// of shape s: its length, and every coefficient reduced modulo its prime.
func (s polyShape) checkEncoded(b []byte, count int) error {
	if s.n == 0 || count < 0 || len(b) != count*s.polyBytes() {
		return fmt.Errorf("%w: %d bytes of polynomials, expected %d of %d bytes", ErrMalformed, len(b), count, s.polyBytes())
	}
	for range count {
		for _, q := range s.moduli {
			in := b[:8*s.n]
			var bad bool
			for j := range s.n {
				bad = bad || binary.LittleEndian.Uint64(in[8*j:]) >= q
			}
			if bad {
				return fmt.Errorf("%w: coefficient not reduced modulo its prime", ErrMalformed)
			}
			b = b[len(in):]
		}
	}
	return nil
}

// addEncoded adds the polynomials that b encodes into dst, coefficient by
// coefficient modulo each prime, as ring.Ring.Add does: b must have
// passed checkEncoded for len(dst) polynomials and dst must be reduced,
// so every sum stays below 2q < 2^64 and one subtraction reduces it.
func (s polyShape) addEncoded(b []byte, dst []ring.Poly) {
	for _, p := range dst {
		for i, q := range s.moduli {
			row := p.Coeffs[i]
			in := b[:8*len(row)]
			for j := range row {
				x := row[j] + binary.LittleEndian.Uint64(in[8*j:])
				if x >= q {
					x -= q
				}
				row[j] = x
			}
			b = b[len(in):]
		}
	}
}

// checkPolys checks that polys have shape s (for values built in memory
// and handed to an operation).
func (s polyShape) checkPolys(polys []ring.Poly) error {
	for _, p := range polys {
		if p.N() != s.n || p.Level() != len(s.moduli)-1 {
			return fmt.Errorf("%w: polynomial of degree %d and %d primes, expected %d and %d", ErrMismatch, p.N(), p.Level()+1, s.n, len(s.moduli))
		}
	}
	return nil
}

// reduce brings polys to canonical form, every coefficient in [0, q):
// Lattigo's lazy arithmetic may leave them in [0, 2q), and encodings and
// digests must not depend on that.
func reduce(r *ring.Ring, polys ...ring.Poly) {
	for _, p := range polys {
		r.Reduce(p, p)
	}
}
