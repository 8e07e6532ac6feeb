package psi

import (
	"fmt"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/wire"
)

// Message types of the OT mode (KKRT16). Like the ECDH messages they
// travel in wire.Messages bound to the step and carry
// wire.DisclosePSIBlinded: what they hold is either unrelated to the
// sets (base-OT group elements, AES-GCM ciphertexts of random seeds, seed
// shares) or masked by pseudorandom pads only the sender of the message
// or the OPRF key holder can remove (the extension matrix, the OPRF
// values), which is what that disclosure stands for; no new disclosure is
// needed. The receiver's filter to the sender is TypeFilter, as in Align.
const (
	// TypeOTBase carries, from the OPRF receiver, its set size, its seed
	// share and the first message A_j = a_j·G of each of the k base OTs.
	TypeOTBase = "psi/ot-base"
	// TypeOTChoice carries, from the OPRF sender, its set size, its seed
	// share and each base OT's B_j (b_j·G or A_j + b_j·G by its choice bit).
	TypeOTChoice = "psi/ot-choice"
	// TypeOTKeys carries, from the OPRF receiver, both AES-GCM
	// encryptions of each base OT's two seeds.
	TypeOTKeys = "psi/ot-keys"
	// TypeOTMatrix carries a chunk of rows of the extension matrix
	// u^j = G(k0_j) ⊕ G(k1_j) ⊕ c^j, column by column.
	TypeOTMatrix = "psi/ot-matrix"
	// TypeOTValues carries a chunk of the OPRF sender's values: for each
	// of its elements, in a fresh shuffled order, the OPRF output under
	// each of the 3 hash functions.
	TypeOTValues = "psi/ot-values"
)

// otCipherLen is the length of one simot AES-GCM ciphertext of a 16-byte
// seed: a 12-byte nonce, 16 bytes, a 16-byte tag.
const otCipherLen = 12 + 16 + 16

// otHelloBody is the body of TypeOTBase and TypeOTChoice.
type otHelloBody struct {
	Run    []byte `msgpack:"r"`
	Echo   []byte `msgpack:"a,omitempty"`
	Total  int    `msgpack:"n"`
	Seed   []byte `msgpack:"s"`
	Points []byte `msgpack:"p"` // otWidth encoded ristretto255 elements
}

// otKeysBody is the body of TypeOTKeys: for base OT j, e0_j then e1_j.
type otKeysBody struct {
	Run    []byte `msgpack:"r"`
	Echo   []byte `msgpack:"a"`
	Cipher []byte `msgpack:"c"`
}

// otChunkBody is the body of TypeOTMatrix and TypeOTValues: chunk Index
// of Total rows (bins, or the sender's elements). Attempt, on matrix
// chunks, is the cuckoo attempt whose hash functions placed the bins.
type otChunkBody struct {
	Run     []byte `msgpack:"r"`
	Echo    []byte `msgpack:"a"`
	Total   int    `msgpack:"n"`
	Index   int    `msgpack:"i"`
	Attempt int    `msgpack:"t,omitempty"`
	Data    []byte `msgpack:"d"`
}

// marshalChunk marshals a chunk body into a buffer sized for it up
// front (wire.MarshalSized: Marshal's bytes): wire.Marshal's buffer
// starts small and doubles, copying a 512 KiB chunk about twice over.
func marshalChunk(b *otChunkBody) ([]byte, error) {
	return wire.MarshalSized(b, len(b.Data)+len(b.Run)+len(b.Echo)+otChunkOverhead)
}

// otChunkOverhead bounds a chunk body's bytes besides its three byte
// strings: a map header, six one-letter keys, three string headers and
// three integers.
const otChunkOverhead = 64

// decodeHello decodes a TypeOTBase or TypeOTChoice body strictly: run ids
// (r), the set size within max, a seed share of seedLen bytes and exactly
// width (otWidth, or voleWidth in the VOLE mode) canonical, non-identity
// ristretto255 elements.
func decodeHello(b []byte, max, width int, r *runs) (int, []byte, []group.Element, error) {
	var body otHelloBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return 0, nil, nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if err := r.check(body.Run, body.Echo); err != nil {
		return 0, nil, nil, err
	}
	switch {
	case body.Total < 0 || body.Total > max:
		return 0, nil, nil, fmt.Errorf("%w: %w: peer's set has %d elements, limit %d", ErrPeer, ErrTooLarge, body.Total, max)
	case len(body.Seed) != seedLen:
		return 0, nil, nil, fmt.Errorf("%w: %w: seed share of %d bytes, want %d", ErrPeer, wire.ErrMalformed, len(body.Seed), seedLen)
	case len(body.Points) != width*PointLen:
		return 0, nil, nil, fmt.Errorf("%w: %w: %d bytes of base-OT elements, want %d", ErrPeer, wire.ErrMalformed, len(body.Points), width*PointLen)
	}
	pts := make([]group.Element, width)
	for j := range pts {
		var p Point
		copy(p[:], body.Points[j*PointLen:])
		e := group.Ristretto255.NewElement()
		if !canonicalField(&p) || e.UnmarshalBinary(p[:]) != nil {
			return 0, nil, nil, fmt.Errorf("%w: %w: base-OT element %d is not a canonical ristretto255 encoding", ErrPeer, wire.ErrMalformed, j)
		}
		if e.IsIdentity() {
			return 0, nil, nil, fmt.Errorf("%w: %w: base-OT element %d is the identity", ErrPeer, wire.ErrMalformed, j)
		}
		pts[j] = e
	}
	return body.Total, body.Seed, pts, nil
}

// encodeHello encodes a hello body.
func encodeHello(run, echo []byte, total int, seed []byte, pts []group.Element) ([]byte, error) {
	b := make([]byte, 0, len(pts)*PointLen)
	for _, e := range pts {
		var p Point
		encode(&p, e)
		b = append(b, p[:]...)
	}
	return wire.Marshal(&otHelloBody{Run: run, Echo: echo, Total: total, Seed: seed, Points: b})
}

// decodeKeys decodes a TypeOTKeys body strictly: this run, answering
// ours, and exactly 2·width ciphertexts.
func decodeKeys(b []byte, width int, r *runs) ([]byte, error) {
	var body otKeysBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if err := r.check(body.Run, body.Echo); err != nil {
		return nil, err
	}
	if len(body.Cipher) != 2*width*otCipherLen {
		return nil, fmt.Errorf("%w: %w: %d bytes of base-OT ciphertexts, want %d", ErrPeer, wire.ErrMalformed, len(body.Cipher), 2*width*otCipherLen)
	}
	return body.Cipher, nil
}

// decodeOTChunk decodes chunk index of a chunked OT message strictly:
// this run answering ours (r), Total equal to total (which the caller
// has fixed from checked sizes before anything is allocated), the index
// expected, rowBytes·(rows of this chunk) bytes of data, and the attempt
// within [0, maxCuckooAttempts) and equal to attempt if attempt ≥ 0.
// Chunk i holds rows [i·c, min((i+1)·c, total)); an empty set is one
// empty chunk.
func decodeOTChunk(b []byte, index, c, total, rowBytes, attempt int, r *runs) (int, []byte, error) {
	var body otChunkBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if err := r.check(body.Run, body.Echo); err != nil {
		return 0, nil, err
	}
	switch {
	case body.Total != total:
		return 0, nil, fmt.Errorf("%w: %w: chunk says %d rows, expected %d", ErrPeer, wire.ErrMalformed, body.Total, total)
	case body.Index != index || index >= numChunks(total, c):
		return 0, nil, fmt.Errorf("%w: %w: chunk %d, expected %d of %d", ErrPeer, wire.ErrMalformed, body.Index, index, numChunks(total, c))
	case body.Attempt < 0 || body.Attempt >= maxCuckooAttempts || (attempt >= 0 && body.Attempt != attempt):
		return 0, nil, fmt.Errorf("%w: %w: chunk %d says cuckoo attempt %d", ErrPeer, wire.ErrMalformed, index, body.Attempt)
	}
	n := 0
	if total > 0 {
		n = chunkLen(total, c, index)
	}
	if len(body.Data) != n*rowBytes {
		return 0, nil, fmt.Errorf("%w: %w: chunk %d holds %d bytes, expected %d rows of %d", ErrPeer, wire.ErrMalformed, index, len(body.Data), n, rowBytes)
	}
	return body.Attempt, body.Data, nil
}
