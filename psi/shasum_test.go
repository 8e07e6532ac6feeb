package psi

import (
	"crypto/sha256"
	"encoding/hex"
	mrand "math/rand/v2"
	"testing"
)

// TestSHA256 checks sha256Sum on both paths against FIPS 180-4's "abc"
// example and against crypto/sha256 at every length from 0 to 200 bytes
// (one block, two blocks, and the fallback beyond), random contents.
func TestSHA256(t *testing.T) {
	paths := []bool{false}
	if shaAvailable() {
		paths = append(paths, true)
	} else {
		t.Log("no SHA extensions: only the crypto/sha256 path is checked")
	}
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	rng := mrand.New(mrand.NewPCG(9, 10))
	for _, ni := range paths {
		if got := sha256Sum([]byte("abc"), ni); hex.EncodeToString(got[:]) != abc {
			t.Fatalf("ni=%v: SHA-256(abc) = %x, want %s", ni, got, abc)
		}
		for n := range 201 {
			msg := make([]byte, n)
			for i := range msg {
				msg[i] = byte(rng.Uint32())
			}
			if got, want := sha256Sum(msg, ni), sha256.Sum256(msg); got != want {
				t.Fatalf("ni=%v, %d bytes: %x, want %x", ni, n, got, want)
			}
		}
	}
}

// BenchmarkSHA256 is one 48-byte hash (an OPRF output's input) through
// sha256Sum and through crypto/sha256.
func BenchmarkSHA256(b *testing.B) {
	msg := make([]byte, 48)
	b.Run("sha256Sum", func(b *testing.B) {
		ni := shaAvailable()
		for b.Loop() {
			msg[0]++
			_ = sha256Sum(msg, ni)
		}
	})
	b.Run("crypto", func(b *testing.B) {
		for b.Loop() {
			msg[0]++
			_ = sha256.Sum256(msg)
		}
	})
}
