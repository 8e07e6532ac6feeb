package psi

import (
	"encoding/hex"
	mrand "math/rand/v2"
	"testing"
)

// TestFixedAES checks both paths of fixedAES against FIPS-197's AES-128
// example (Appendix C.1) and against each other on random keys and
// blocks, at every length around the assembly's 8-block stride, in and
// out of place.
func TestFixedAES(t *testing.T) {
	paths := []bool{false}
	if aesniAvailable() {
		paths = append(paths, true)
	} else {
		t.Log("no AES-NI: the assembly path is not exercised on this CPU")
	}
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
	pt, _ := hex.DecodeString("00112233445566778899aabbccddeeff")
	want := "69c4e0d86a7b0430d8cdb78070b4c55a"
	for _, asm := range paths {
		a := newFixedAESWith(key, asm)
		x := []gf{gfFrom(pt)}
		a.encrypt(x, x)
		var got [gfLen]byte
		x[0].put(got[:])
		if hex.EncodeToString(got[:]) != want {
			t.Fatalf("asm=%v: FIPS-197 C.1 gives %x, want %s", asm, got, want)
		}
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for trial := range 20 {
		key := make([]byte, 16)
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		ref := newFixedAESWith(key, false)
		fast := newFixedAESWith(key, paths[len(paths)-1])
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 33, 1000} {
			src := make([]gf, n)
			for i := range src {
				src[i] = gf{rng.Uint64(), rng.Uint64()}
			}
			if trial == 0 && n > 2 {
				src[0], src[1] = gf{}, gf{^uint64(0), ^uint64(0)}
			}
			want, got := make([]gf, n), make([]gf, n)
			ref.encrypt(want, src)
			fast.encrypt(got, src)
			inPlace := append([]gf(nil), src...)
			fast.encrypt(inPlace, inPlace)
			for i := range n {
				if got[i] != want[i] || inPlace[i] != want[i] {
					t.Fatalf("trial %d, n=%d, block %d: %x / %x in place, want %x", trial, n, i, got[i], inPlace[i], want[i])
				}
				if n > 1 && want[i] == src[i] {
					t.Fatalf("trial %d, n=%d, block %d: unchanged by encryption", trial, n, i)
				}
			}
		}
	}
}
