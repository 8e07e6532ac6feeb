package hamdist

import "testing"

// The decoders of peer bytes never panic, and what they accept encodes
// back to the same ciphertexts.
func FuzzDecodeChunk(f *testing.F) {
	k := GenerateKey()
	cts := k.Encrypt(Ints([]int64{7, -1}))
	b, _ := EncodeChunk(k.Public(), cts, 0, ChunkSize)
	f.Add(b)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeChunk(b, k.Public(), 2, 0, ChunkSize)
		if err != nil {
			return
		}
		again, err := EncodeChunk(k.Public(), got, 0, ChunkSize)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := DecodeChunk(again, k.Public(), 2, 0, ChunkSize); err != nil || len(back) != len(got) {
			t.Fatalf("re-encoded chunk: %v", err)
		}
	})
}

func FuzzDecodeKey(f *testing.F) {
	b, _ := EncodeKey(GenerateKey().Public(), 5)
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeKey(b, 5)
		if err != nil {
			return
		}
		if p.h.IsIdentity() {
			t.Fatal("identity key accepted")
		}
	})
}
