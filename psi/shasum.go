package psi

import (
	"crypto/sha256"
	"encoding/binary"
)

// shaShortMax is the longest message sha256Sum hashes itself: with the
// 0x80 byte and the 8-byte length it fills two blocks.
const shaShortMax = 2*64 - 9

// sha256Sum is crypto/sha256.Sum256(msg), the same function. The OT and
// VOLE modes hash millions of short inputs (an element under the domain
// key, an OPRF output), where crypto/sha256's Digest (buffering, the
// padding written through Write, a copy in checkSum) cost about twice
// the compression itself; for messages up to shaShortMax bytes on a CPU
// with the SHA extensions (ni, from shaAvailable) this pads in a stack
// buffer and calls sha256Blocks once. Otherwise it is Sum256.
func sha256Sum(msg []byte, ni bool) [32]byte {
	if !ni || len(msg) > shaShortMax {
		return sha256.Sum256(msg)
	}
	var buf [128]byte
	copy(buf[:], msg)
	buf[len(msg)] = 0x80
	n := 1
	if len(msg) > 64-9 {
		n = 2
	}
	binary.BigEndian.PutUint64(buf[n*64-8:], uint64(len(msg))*8)
	h := [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} // FIPS 180-4, §5.3.3
	sha256Blocks(&h, &buf[0], n)
	var out [32]byte
	for i, w := range h {
		binary.BigEndian.PutUint32(out[4*i:], w)
	}
	return out
}
