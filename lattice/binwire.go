package lattice

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// The encoding of the coefficient-encoded ciphertexts of boosting's bin
// sums (EncryptPairs' and BinSummer.Sum's), for a network to carry: c0
// and c1 of each, every coefficient reduced, 8 bytes little-endian, one
// modulus after the other. Nothing else: the layout, the key and what the
// ciphertexts are for are the caller's message's.

// MarshalCiphertexts encodes cts (degree 1, top level, NTT domain, as
// EncryptPairs and Sum make them), reducing their coefficients in place.
func (p Params) MarshalCiphertexts(cts []*rlwe.Ciphertext) ([]byte, error) {
	return p.AppendCiphertexts(nil, cts)
}

// AppendCiphertexts is MarshalCiphertexts appending to b: with room in b
// for CiphertextBytes per ciphertext, the encodings are written where
// the caller will send them (wire.MarshalBlobs), not made apart.
func (p Params) AppendCiphertexts(b []byte, cts []*rlwe.Ciphertext) ([]byte, error) {
	r := p.bgv.RingQ()
	for _, ct := range cts {
		if ct == nil || ct.Degree() != 1 || !ct.IsNTT || ct.IsBatched || ct.Level() != p.bgv.MaxLevel() {
			return nil, fmt.Errorf("%w: a ciphertext not as EncryptPairs or Sum makes them", ErrMismatch)
		}
		reduce(r, ct.Value...)
		b = appendPolys(b, ct.Value)
	}
	return b, nil
}

// UnmarshalCiphertexts decodes what MarshalCiphertexts wrote: at most max
// ciphertexts, every coefficient reduced modulo its prime.
func (p Params) UnmarshalCiphertexts(b []byte, max int) ([]*rlwe.Ciphertext, error) {
	s := p.polyShape()
	size := 2 * s.polyBytes()
	if len(b)%size != 0 || len(b)/size > max {
		return nil, fmt.Errorf("%w: %d bytes of ciphertexts of %d bytes, at most %d", ErrMalformed, len(b), size, max)
	}
	polys, err := s.decodePolys(b, 2*(len(b)/size))
	if err != nil {
		return nil, err
	}
	// The metadata of bgv.NewCiphertext's, coefficient-encoded in the NTT
	// domain; the ciphertexts wrap the decoded polynomials, not a pair
	// allocated (and zeroed) only to be replaced.
	meta := rlwe.MetaData{
		PlaintextMetaData:  rlwe.PlaintextMetaData{Scale: p.bgv.DefaultScale(), LogDimensions: p.bgv.LogMaxDimensions()},
		CiphertextMetaData: rlwe.CiphertextMetaData{IsNTT: true},
	}
	out := make([]*rlwe.Ciphertext, len(polys)/2)
	for k := range out {
		out[k] = &rlwe.Ciphertext{Element: rlwe.Element[ring.Poly]{Value: polys[2*k : 2*k+2 : 2*k+2], MetaData: meta.CopyNew()}}
	}
	return out, nil
}
