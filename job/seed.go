package job

import (
	"crypto/sha256"
	"math/rand/v2"
)

// SeedSize is the length of a job's seed.
const SeedSize = 32

// Rand returns a deterministic generator for one use of the job's seed:
// every party and every replay of Coordinate that asks for the same label
// gets the same stream (ChaCha8 keyed by SHA-256(seed, label)). The seed is
// in the log, so the stream is public: use it for shared choices (an initial
// order, a sample), never for keys, blinding or noise. The job's seed is
// the leader's choice alone: where the parties rely on public randomness
// for their security, pass the seed of a JointSeed (reveal.go) instead,
// which no party chose.
func Rand(seed []byte, label string) *rand.Rand {
	h := sha256.New()
	h.Write(seed)
	h.Write([]byte{0})
	h.Write([]byte(label))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.New(rand.NewChaCha8(key))
}
