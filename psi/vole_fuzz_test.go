package psi

import (
	"bytes"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// The VOLE mode's decoders of a peer's bytes: the hello and keys of its
// 128 base OTs, and its single-message bodies (matrix, trees). Its
// chunked bodies go through decodeOTChunk (FuzzDecodeOTChunk).

func FuzzDecodeVoleHello(f *testing.F) {
	run := bytes.Repeat([]byte{7}, runIDLen)
	_, pts := newBaseSender(voleWidth)
	good, _ := encodeHello(run, nil, 5, make([]byte, seedLen), pts)
	f.Add(good, 10)
	_, kkrt := newBaseSender(otWidth)
	wide, _ := encodeHello(run, nil, 5, make([]byte, seedLen), kkrt)
	f.Add(wide, 10)
	f.Add([]byte{0x85}, 10)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 0 || max > 1<<22 {
			return
		}
		n, seed, got, err := decodeHello(b, max, voleWidth, &runs{peer: run})
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if n < 0 || n > max || len(seed) != seedLen || len(got) != voleWidth {
			t.Fatalf("accepted n %d, seed of %d, %d points", n, len(seed), len(got))
		}
	})
}

func FuzzDecodeVoleKeys(f *testing.F) {
	run, echo := bytes.Repeat([]byte{7}, runIDLen), bytes.Repeat([]byte{8}, runIDLen)
	good, _ := wire.Marshal(&otKeysBody{Run: run, Echo: echo, Cipher: make([]byte, 2*voleWidth*otCipherLen)})
	f.Add(good)
	wide, _ := wire.Marshal(&otKeysBody{Run: run, Echo: echo, Cipher: make([]byte, 2*otWidth*otCipherLen)})
	f.Add(wide)
	f.Add([]byte{0x83})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeKeys(b, voleWidth, &runs{peer: run, echo: echo})
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if len(c) != 2*voleWidth*otCipherLen {
			t.Fatalf("accepted %d bytes of ciphertexts", len(c))
		}
	})
}

func FuzzDecodeVoleOne(f *testing.F) {
	run, echo := bytes.Repeat([]byte{7}, runIDLen), bytes.Repeat([]byte{8}, runIDLen)
	matrix, _ := wire.Marshal(&otChunkBody{Run: run, Echo: echo, Total: 256, Data: make([]byte, 256*voleWidth/8)})
	f.Add(matrix, 256, voleWidth/8)
	trees, _ := wire.Marshal(&otChunkBody{Run: run, Echo: echo, Total: 3, Data: make([]byte, 3*5*gfLen)})
	f.Add(trees, 3, 5*gfLen)
	empty, _ := wire.Marshal(&otChunkBody{Run: run, Echo: echo})
	f.Add(empty, 0, gfLen)
	f.Add([]byte{0x86}, 3, gfLen)
	f.Fuzz(func(t *testing.T, b []byte, total, rowBytes int) {
		if total < 0 || total > 1<<20 || rowBytes <= 0 || rowBytes > 1<<10 {
			return // the caller's own arguments are always in range
		}
		data, err := decodeVoleOne(b, total, rowBytes, &runs{peer: run, echo: echo})
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if len(data) != total*rowBytes {
			t.Fatalf("accepted %d bytes for %d rows of %d", len(data), total, rowBytes)
		}
	})
}
