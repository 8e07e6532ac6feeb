package psi

import (
	"crypto/sha256"
	"encoding/binary"
)

// digester reduces elements to 128-bit digests under a domain tag, so
// that every later step works on 16 bytes whatever an element's length.
// Equal elements have equal digests, and different ones different
// digests except with probability 2^-128 per pair, which
// distinctDigests checks within each party's own set (across the
// parties a collision is a false match):
//
//   - an element that fits one AES block (shortBlock: at most 15 bytes,
//     or a one-value EncodeKey key of at most 15 bytes of text) is
//     encoded injectively into a block and encrypted with AES-128 under
//     a key from the tag: a permutation of an injective encoding, so two
//     different short elements never share a digest, at the cost of one
//     AES block where SHA-256 costs a compression and its padding;
//   - any other element x has SHA-256(SHA-256("cohort-psi-ot-v1:digest:"
//     ‖ tag) ‖ x), truncated.
//
// A short and a long element share a digest with probability 2^-128,
// and finding such a pair on purpose is a birthday search, as finding a
// collision of the truncated SHA-256 is. Because the short digests are a
// public permutation, data chosen with the tag in hand could be made to
// have digests that agree in chosen bits; so once the parties hold their
// joint seed, rekey passes every digest through AES under a key from
// that seed, and all later uses (cuckoo bins, code words, OKVS rows,
// H(x), the OPRF outputs) see digests no one could have chosen.
type digester struct {
	key   [32]byte
	short *fixedAES // AES-128 under SHA-256("cohort-psi-v1:short-digest:" ‖ key)[:16]
}

func newDigester(dst []byte) digester {
	key := sha256.Sum256(append([]byte("cohort-psi-ot-v1:digest:"), dst...))
	sk := sha256.Sum256(append([]byte("cohort-psi-v1:short-digest:"), key[:]...))
	return digester{key: key, short: newFixedAES(sk[:16])}
}

// digestBatch is the number of short blocks encrypted in one fixedAES
// call.
const digestBatch = 128

// digests returns the digests of elems, on every core.
func (d digester) digests(elems [][]byte) [][digestLen]byte {
	out := make([][digestLen]byte, len(elems))
	_ = parallel(len(elems), func(lo, hi int) error {
		buf := make([]byte, 0, 64)
		var blk [digestBatch]gf
		var at [digestBatch]int32
		n := 0
		for i := lo; i < hi; i++ {
			if b, ok := shortBlock(elems[i]); ok {
				blk[n], at[n] = gfFrom(b[:]), int32(i)
				if n++; n == digestBatch {
					d.encryptShort(out, blk[:n], at[:n])
					n = 0
				}
				continue
			}
			buf = append(append(buf[:0], d.key[:]...), elems[i]...)
			s := sha256.Sum256(buf)
			copy(out[i][:], s[:digestLen])
		}
		d.encryptShort(out, blk[:n], at[:n])
		return nil
	})
	return out
}

// encryptShort writes the encryptions of blocks blk to out at positions at.
func (d digester) encryptShort(out [][digestLen]byte, blk []gf, at []int32) {
	d.short.encrypt(blk, blk)
	for k, e := range blk {
		e.put(out[at[k]][:])
	}
}

// shortBlock is the injective block encoding of an element that fits
// one AES block: byte 0 says which form and how long, the rest is the
// element's bytes, zero-padded. A one-value key as EncodeKey writes it
// (version, count 1, type, a 4-byte length L ≤ 15, L bytes) is its type
// in byte 0's high nibble and L in its low one, then its L bytes, so
// that keys of up to 15 bytes of text or digits fit; any other element
// of at most 15 bytes is its length in byte 0 (high nibble 0), then its
// bytes. The forms' nibbles differ (0; Text = 1, Number = 2), so the
// encoding of the union is injective: the block gives back the element.
func shortBlock(x []byte) (b [digestLen]byte, ok bool) {
	if l, t, ok := shortKey(x); ok {
		b[0] = t<<4 | byte(l)
		copy(b[1:], x[keyHeaderLen:])
		return b, true
	}
	if len(x) > digestLen-1 {
		return b, false
	}
	b[0] = byte(len(x))
	copy(b[1:], x)
	return b, true
}

// keyHeaderLen is the length of a one-value key's header: version,
// count, type and the value's 4-byte length.
const keyHeaderLen = 7

// shortKey says whether x is a one-value key of at most 15 bytes of
// value, and gives that length and the type. Only the header's form is
// checked, not that the value is canonical: any element of this form
// takes this encoding, whoever built it.
func shortKey(x []byte) (l int, t byte, ok bool) {
	if len(x) < keyHeaderLen || len(x) > keyHeaderLen+digestLen-1 {
		return 0, 0, false
	}
	if x[0] != keyVersion || x[1] != 1 || (x[2] != byte(Text) && x[2] != byte(Number)) {
		return 0, 0, false
	}
	if binary.BigEndian.Uint32(x[3:keyHeaderLen]) != uint32(len(x)-keyHeaderLen) {
		return 0, 0, false
	}
	return len(x) - keyHeaderLen, x[2], true
}

// rekey replaces every digest d by AES_K(d), K derived from the joint
// seed (digester doc): a permutation, so equal and distinct digests stay
// so, applied by both parties before any use of the digests that
// depends on the seed.
func rekey(ds [][digestLen]byte, seed [32]byte) {
	a := newFixedAES(derive(seed, "digest"))
	var blk [digestBatch]gf
	for lo := 0; lo < len(ds); lo += digestBatch {
		part := ds[lo:min(lo+digestBatch, len(ds))]
		a.encryptDigests(blk[:len(part)], part)
		for k, e := range blk[:len(part)] {
			e.put(part[k][:])
		}
	}
}
