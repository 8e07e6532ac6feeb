package psi

import (
	"crypto/aes"
	"crypto/cipher"
	"unsafe"
)

// fixedAES is AES-128 under one key applied to many blocks per call. The
// VOLE mode's hot loops (GGM trees, OKVS rows, OKVS values) each encrypt
// millions of independent blocks under one key; through cipher.Block
// every block is a call that waits out AES's ten dependent rounds, while
// aesEncryptBlocks (aesni_amd64.s) keeps eight blocks in flight. Where
// the CPU has no AES-NI (or off amd64) it falls back to crypto/aes, block
// by block: same outputs, checked against each other by TestFixedAES.
// AES-NI does not branch or index memory on data; the fallback is as
// constant-time as crypto/aes is on that platform, as the mode was
// before fixedAES.
type fixedAES struct {
	block cipher.Block  // crypto/aes under the same key
	rk    [11 * 16]byte // AES-NI round keys, when asm
	asm   bool          // use aesEncryptBlocks
}

// newFixedAES keys a fixedAES with a 16-byte key, using AES-NI when the
// CPU has it.
func newFixedAES(key []byte) *fixedAES {
	return newFixedAESWith(key, aesniAvailable())
}

// newFixedAESWith is newFixedAES with the choice of path made by the
// caller (tests compare the two).
func newFixedAESWith(key []byte, asm bool) *fixedAES {
	b, err := aes.NewCipher(key)
	if err != nil || len(key) != 16 {
		panic("psi: internal error: AES-128 key")
	}
	a := &fixedAES{block: b, asm: asm}
	if asm {
		aesExpandKey128(&key[0], &a.rk[0])
	}
	return a
}

// encrypt sets dst[i] = AES_k(src[i]) for each element's 16-byte form
// (gf.put); dst may be src, len(dst) ≥ len(src).
func (a *fixedAES) encrypt(dst, src []gf) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	if a.asm {
		// gf is two little-endian uint64s, lo first: on amd64 its memory
		// is exactly its 16-byte form.
		aesEncryptBlocks(&a.rk[0], (*byte)(unsafe.Pointer(&dst[0])), (*byte)(unsafe.Pointer(&src[0])), len(src))
		return
	}
	var b [gfLen]byte
	for i, x := range src {
		x.put(b[:])
		a.block.Encrypt(b[:], b[:])
		dst[i] = gfFrom(b[:])
	}
}

// encryptDigests sets out[i] = AES_k(ds[i]), as field elements (len(out)
// = len(ds)): H(x) of the VOLE mode's OKVS values, and the digests'
// re-keying.
func (a *fixedAES) encryptDigests(out []gf, ds [][digestLen]byte) {
	for i := range ds {
		out[i] = gfFrom(ds[i][:])
	}
	a.encrypt(out, out)
}
