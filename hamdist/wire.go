package hamdist

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/group"
	"github.com/cohortdm/cohort/wire"
)

// ErrPeer wraps every fault found in what the peer sent.
var ErrPeer = errors.New("hamdist: bad message from peer")

// ErrRestarted is returned when a message belongs to another run of the
// exchange (the key holder restarted and drew a new key): the step must
// run again whole.
var ErrRestarted = errors.New("hamdist: the peer's message belongs to another run")

// keyBody is the key holder's first message: its run's public key and
// the number of positions it will encrypt.
type keyBody struct {
	Key   []byte `msgpack:"k"`
	Total int    `msgpack:"n"`
}

// chunkBody is one chunk of a ciphertext vector: chunk Index of Total
// ciphertexts, each c₁‖c₂ as canonical 32-byte encodings. Key is the
// run's public key: both directions carry it, so a message of an earlier
// run (another key) is refused, never decrypted under the wrong key.
type chunkBody struct {
	Key   []byte `msgpack:"k"`
	Total int    `msgpack:"n"`
	Index int    `msgpack:"i"`
	Cts   []byte `msgpack:"c"`
}

// numChunks is how many chunks of at most c ciphertexts carry n (one
// empty chunk for n = 0).
func numChunks(n, c int) int { return max(1, (n+c-1)/c) }

// decodeElement decodes one canonical ristretto255 encoding: circl
// decodes, and the element must encode back to the same bytes, so a peer
// cannot send one element two ways.
func decodeElement(b []byte) (group.Element, error) {
	e := g.NewElement()
	if err := e.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: %w: not a ristretto255 element", ErrPeer, wire.ErrMalformed)
	}
	back, err := e.MarshalBinaryCompress()
	if err != nil || !bytes.Equal(back, b) {
		return nil, fmt.Errorf("%w: %w: a non-canonical element encoding", ErrPeer, wire.ErrMalformed)
	}
	return e, nil
}

// EncodeKey is the key message.
func EncodeKey(p PublicKey, total int) ([]byte, error) {
	return wire.Marshal(&keyBody{Key: p.fingerprint(), Total: total})
}

// DecodeKey decodes a key message strictly: a canonical element that is
// not the identity (which would encrypt nothing), and the total the caller
// expects (both parties know n from the alignment).
func DecodeKey(b []byte, total int) (PublicKey, error) {
	var body keyBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return PublicKey{}, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if len(body.Key) != ElementLen {
		return PublicKey{}, fmt.Errorf("%w: %w: key of %d bytes", ErrPeer, wire.ErrMalformed, len(body.Key))
	}
	if body.Total != total {
		return PublicKey{}, fmt.Errorf("%w: %w: the positions announced are not the positions aligned", ErrPeer, ErrLength)
	}
	e, err := decodeElement(body.Key)
	if err != nil {
		return PublicKey{}, err
	}
	if e.IsIdentity() {
		return PublicKey{}, fmt.Errorf("%w: %w: the identity as a key", ErrPeer, wire.ErrMalformed)
	}
	return PublicKey{h: e}, nil
}

// EncodeChunk encodes chunk index of cts (chunk size c) under run key p.
func EncodeChunk(p PublicKey, cts []Ciphertext, index, c int) ([]byte, error) {
	lo, hi := index*c, min((index+1)*c, len(cts))
	buf := make([]byte, 0, (hi-lo)*CiphertextLen)
	for _, ct := range cts[lo:hi] {
		for _, e := range []group.Element{ct.C1, ct.C2} {
			b, err := e.MarshalBinaryCompress()
			if err != nil {
				return nil, fmt.Errorf("hamdist: encode: %w", err)
			}
			buf = append(buf, b...)
		}
	}
	return wire.Marshal(&chunkBody{Key: p.fingerprint(), Total: len(cts), Index: index, Cts: buf})
}

// DecodeChunk decodes chunk index of a vector of exactly total
// ciphertexts (chunk size c) under run key p, strictly: the run's key, the
// expected total and index, exactly the chunk's ciphertexts, every element
// canonical.
func DecodeChunk(b []byte, p PublicKey, total, index, c int) ([]Ciphertext, error) {
	var body chunkBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if !bytes.Equal(body.Key, p.fingerprint()) {
		return nil, ErrRestarted
	}
	if body.Total != total || body.Index != index {
		return nil, fmt.Errorf("%w: %w: chunk %d of %d, expected %d of %d", ErrPeer, wire.ErrMalformed, body.Index, body.Total, index, total)
	}
	n := min((index+1)*c, total) - index*c
	if n < 0 || len(body.Cts) != n*CiphertextLen {
		return nil, fmt.Errorf("%w: %w: chunk %d holds %d bytes", ErrPeer, wire.ErrMalformed, index, len(body.Cts))
	}
	out := make([]Ciphertext, n)
	for i := range out {
		c1, err := decodeElement(body.Cts[i*CiphertextLen : i*CiphertextLen+ElementLen])
		if err != nil {
			return nil, err
		}
		c2, err := decodeElement(body.Cts[i*CiphertextLen+ElementLen : (i+1)*CiphertextLen])
		if err != nil {
			return nil, err
		}
		out[i] = Ciphertext{C1: c1, C2: c2}
	}
	return out, nil
}
