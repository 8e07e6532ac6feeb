package psi

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// The OT mode's decoders of peer bytes, fuzzed: each returns a result or
// an error wrapping ErrPeer (with wire.ErrMalformed or ErrTooLarge)
// or ErrRestarted, and never panics.

func checkOTErr(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ErrRestarted) {
		return
	}
	if !errors.Is(err, ErrPeer) || (!errors.Is(err, wire.ErrMalformed) && !errors.Is(err, ErrTooLarge)) {
		t.Fatalf("error not ErrRestarted, nor ErrPeer with ErrMalformed or ErrTooLarge: %v", err)
	}
}

func FuzzDecodeHello(f *testing.F) {
	run := bytes.Repeat([]byte{7}, runIDLen)
	_, pts := newBaseSender(otWidth)
	good, _ := encodeHello(run, nil, 5, make([]byte, seedLen), pts)
	f.Add(good, 10)
	f.Add(good, 4)
	short, _ := wire.Marshal(&otHelloBody{Run: run, Total: 1, Seed: make([]byte, seedLen), Points: make([]byte, PointLen)})
	f.Add(short, 10)
	f.Add([]byte{0x85}, 10)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 0 || max > 1<<22 {
			return
		}
		n, seed, got, err := decodeHello(b, max, otWidth, &runs{peer: run})
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if n < 0 || n > max || len(seed) != seedLen || len(got) != otWidth {
			t.Fatalf("accepted n %d, seed of %d, %d points", n, len(seed), len(got))
		}
		for j, e := range got {
			if e.IsIdentity() {
				t.Fatalf("accepted the identity at %d", j)
			}
		}
	})
}

func FuzzDecodeKeys(f *testing.F) {
	run, echo := bytes.Repeat([]byte{7}, runIDLen), bytes.Repeat([]byte{8}, runIDLen)
	good, _ := wire.Marshal(&otKeysBody{Run: run, Echo: echo, Cipher: make([]byte, 2*otWidth*otCipherLen)})
	f.Add(good)
	bad, _ := wire.Marshal(&otKeysBody{Run: run, Echo: echo, Cipher: make([]byte, 3)})
	f.Add(bad)
	f.Add([]byte{0x83})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeKeys(b, otWidth, &runs{peer: run, echo: echo})
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if len(c) != 2*otWidth*otCipherLen {
			t.Fatalf("accepted %d bytes of ciphertexts", len(c))
		}
	})
}

func FuzzDecodeOTChunk(f *testing.F) {
	run, echo := bytes.Repeat([]byte{7}, runIDLen), bytes.Repeat([]byte{8}, runIDLen)
	good, _ := wire.Marshal(&otChunkBody{Run: run, Echo: echo, Total: 10, Index: 1, Data: make([]byte, 3*33)})
	f.Add(good, 1, 7, 10, 33, -1)
	f.Add(good, 1, 7, 10, 33, 0)
	empty, _ := wire.Marshal(&otChunkBody{Run: run, Echo: echo, Total: 0, Index: 0, Attempt: 2})
	f.Add(empty, 0, 7, 0, 64, -1)
	f.Add([]byte{0x86}, 0, 7, 10, 33, -1)
	f.Fuzz(func(t *testing.T, b []byte, index, c, total, rowBytes, attempt int) {
		if c <= 0 || c > 1<<16 || total < 0 || total > 1<<22 || index < 0 || rowBytes <= 0 || rowBytes > 64 || attempt < -1 || attempt >= maxCuckooAttempts {
			return // the caller's own arguments are always in range
		}
		att, data, err := decodeOTChunk(b, index, c, total, rowBytes, attempt, &runs{peer: run, echo: echo})
		if err != nil {
			checkOTErr(t, err)
			return
		}
		want := 0
		if total > 0 {
			want = chunkLen(total, c, index)
		}
		if len(data) != want*rowBytes || att < 0 || att >= maxCuckooAttempts || (attempt >= 0 && att != attempt) {
			t.Fatalf("accepted %d bytes, attempt %d (index %d, chunk %d, total %d, row %d, attempt %d)", len(data), att, index, c, total, rowBytes, attempt)
		}
	})
}

// TestMarshalChunk checks that marshalChunk's bytes are wire.Marshal's,
// with and without an attempt, empty and up to past its size guess.
func TestMarshalChunk(t *testing.T) {
	for _, n := range []int{0, 1, 100, 1 << 16} {
		for _, b := range []*otChunkBody{
			{Run: make([]byte, runIDLen), Echo: make([]byte, runIDLen), Total: 1 << 40, Index: 1 << 30, Data: make([]byte, n)},
			{Run: []byte{1}, Total: n, Index: 3, Attempt: 5, Data: make([]byte, n)},
		} {
			want, err := wire.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalChunk(b)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d bytes of data: %x, %v; want %x", n, got, err, want)
			}
		}
	}
}
