package psi

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Message types of the VOLE mode (package doc, "VOLE mode"). Like the OT
// mode's they travel in wire.Messages bound to the step and carry
// wire.DisclosePSIBlinded: each holds either values unrelated to the
// sets (base-OT group elements and ciphertexts of random seeds, seed
// shares, the IKNP matrix masked by PRG output, GGM level sums masked by
// random OTs) or values masked by pseudorandom pads the other side cannot
// remove (the OKVS masked by the uniform VOLE vector A; the OPRF values,
// hashed under the sender's Δ). The receiver's filter to the sender is
// TypeFilter, as in the OT mode.
const (
	// TypeVoleBase carries, from the VOLE receiver (PSI receiver), its set
	// size, seed share and the first message of each of 128 base OTs.
	TypeVoleBase = "psi/vole-base"
	// TypeVoleChoice carries, from the VOLE sender, its set size, seed
	// share and each base OT's answer (by the bits of its Δ).
	TypeVoleChoice = "psi/vole-choice"
	// TypeVoleKeys carries, from the receiver, both encryptions of each
	// base OT's seeds.
	TypeVoleKeys = "psi/vole-keys"
	// TypeVoleMatrix carries, from the receiver, the IKNP columns
	// u^j = G(k0_j) ⊕ G(k1_j) ⊕ r: one message.
	TypeVoleMatrix = "psi/vole-matrix"
	// TypeVoleTrees carries, from the sender, each GGM tree's level sums
	// masked by random OTs and its γ_j: one message.
	TypeVoleTrees = "psi/vole-trees"
	// TypeVoleOKVS carries a chunk of D = P + A, the receiver's OKVS
	// masked by its VOLE vector; Attempt names the OKVS hash keys.
	TypeVoleOKVS = "psi/vole-okvs"
	// TypeVoleValues carries a chunk of the sender's OPRF values, one per
	// element in a fresh shuffled order.
	TypeVoleValues = "psi/vole-values"
)

// decodeGFs reads a checked byte slice (a multiple of 16 long) as
// elements.
func decodeGFs(b []byte) []gf {
	out := make([]gf, len(b)/gfLen)
	for i := range out {
		out[i] = gfFrom(b[i*gfLen:])
	}
	return out
}

// encodeGFs is decodeGFs's inverse.
func encodeGFs(v []gf) []byte {
	return appendGFs(make([]byte, 0, len(v)*gfLen), v)
}

// appendGFs appends v's bytes (encodeGFs) to b.
func appendGFs(b []byte, v []gf) []byte {
	for _, e := range v {
		b = binary.LittleEndian.AppendUint64(b, e.lo)
		b = binary.LittleEndian.AppendUint64(b, e.hi)
	}
	return b
}

// voleKeys are the public keys both parties derive from the joint seed:
// the OKVS hash keys per attempt, the EA code's seed, the key of the
// element hash H(x) the OKVS stores, and the key of the OPRF output hash.
type voleKeys struct {
	seed   [32]byte
	ea     [32]byte
	out    [16]byte
	values *fixedAES
}

func newVoleKeys(seed [32]byte) *voleKeys {
	k := &voleKeys{seed: seed}
	copy(k.ea[:], derive(seed, "vole-ea", 0))
	copy(k.ea[16:], derive(seed, "vole-ea", 1))
	copy(k.out[:], derive(seed, "vole-out"))
	k.values = newFixedAES(derive(seed, "vole-values"))
	return k
}

// value is H(x), the OKVS value of digest d: AES of d under the values
// key, a pseudorandom permutation of the digests.
func (k *voleKeys) value(d *[digestLen]byte) gf {
	return k.valuesOf([][digestLen]byte{*d})[0]
}

// valuesOf is value of each digest of ds, in one fixedAES call.
func (k *voleKeys) valuesOf(ds [][digestLen]byte) []gf {
	out := make([]gf, len(ds))
	k.valuesInto(out, ds)
	return out
}

// valuesInto sets out[i] to the value of ds[i] (len(out) = len(ds)).
func (k *voleKeys) valuesInto(out []gf, ds [][digestLen]byte) {
	k.values.encryptDigests(out, ds)
}

// oprfOut writes the l-byte OPRF output of digest d with VOLE value z to
// out: SHA-256 of the output key (from the joint seed, so distinct from
// every other hash of the exchange), d and z, truncated; 48 bytes, one
// SHA-256 block. Hashing breaks the linear structure of
// z = Decode(C, x) + Δ·(…): without it the receiver could solve for Δ
// from one guessed element of the sender.
func (k *voleKeys) oprfOut(out []byte, d *[digestLen]byte, z gf, l int) {
	var b [16 + digestLen + gfLen]byte
	copy(b[:], k.out[:])
	copy(b[16:], d[:])
	z.put(b[16+digestLen:])
	s := sha256.Sum256(b[:])
	copy(out[:l], s[:l])
}

// decodeVoleOne decodes a single-message body of total rows of rowBytes
// (TypeVoleMatrix, TypeVoleTrees) with the OT chunk checks: this run
// answering ours, one chunk, the exact length.
func decodeVoleOne(b []byte, total, rowBytes int, r *runs) ([]byte, error) {
	_, data, err := decodeOTChunk(b, 0, max(total, 1), total, rowBytes, 0, r)
	return data, err
}

// voleChunk marshals chunk ci of data (rows of rowBytes, chunks of c
// rows) as an otChunkBody.
func voleChunk(run, echo []byte, data []byte, total, c, ci, rowBytes, attempt int) ([]byte, error) {
	lo, cnt := ci*c, 0
	if total > 0 {
		cnt = chunkLen(total, c, ci)
	}
	return voleChunkOf(run, echo, data[lo*rowBytes:(lo+cnt)*rowBytes], total, ci, attempt)
}

// voleChunkOf marshals chunk ci of total rows as an otChunkBody whose
// rows are data.
func voleChunkOf(run, echo []byte, data []byte, total, ci, attempt int) ([]byte, error) {
	body, err := marshalChunk(&otChunkBody{Run: run, Echo: echo, Total: total, Index: ci, Attempt: attempt, Data: data})
	if err != nil {
		return nil, fmt.Errorf("chunk %d: %w", ci, err)
	}
	return body, nil
}
