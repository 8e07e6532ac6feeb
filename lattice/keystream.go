package lattice

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
)

// keystream is an AES-256-CTR keystream read a polynomial's worth at a
// time: the draws of the fresh encryptions' errors (errorSampler) and of
// the decryption shares' smudging noise (smudger). AES-CTR under a key
// from crypto/rand is a standard CSPRNG (NIST SP 800-90A's CTR_DRBG
// without its reseeding; a key draws far fewer than the 2^48 blocks that
// would bound). With AES instructions it gives a coefficient's bytes in
// about a third of the time of math/rand/v2's ChaCha8 a word at a time.
type keystream struct {
	stream cipher.Stream
	buf    []byte
}

// newKeystream returns the keystream of key (from crypto/rand but in
// tests).
func newKeystream(key [32]byte) (*keystream, error) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("lattice: keystream: %w", err)
	}
	return &keystream{stream: cipher.NewCTR(block, make([]byte, aes.BlockSize))}, nil
}

// newRandomKeystream returns a keystream keyed from crypto/rand.
func newRandomKeystream() (*keystream, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("lattice: keystream seed: %w", err)
	}
	return newKeystream(key)
}

// next returns the stream's next n bytes, valid until the next call.
func (k *keystream) next(n int) []byte {
	if cap(k.buf) < n {
		k.buf = make([]byte, n)
	}
	b := k.buf[:n]
	clear(b)
	k.stream.XORKeyStream(b, b)
	return b
}
