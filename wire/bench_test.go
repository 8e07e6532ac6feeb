package wire

import (
	"bytes"
	"io"
	"testing"
)

// The message layer's cost per lattice part (16 MiB body): encoding and
// framing it for a peer, and decoding a frame received. Old is the copying
// path (Encode then WriteFrame; Decode), New the transport's (EncodeParts
// then WriteEncoded; DecodeOwned).
func BenchmarkPart(b *testing.B) {
	m := sample()
	m.Body = bytes.Repeat([]byte{0x5a}, 16<<20)
	frame, err := Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("send/old", func(b *testing.B) {
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			e, err := Encode(m)
			if err != nil {
				b.Fatal(err)
			}
			if err := WriteFrame(io.Discard, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("send/new", func(b *testing.B) {
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			e, err := EncodeParts(m)
			if err != nil {
				b.Fatal(err)
			}
			if err := WriteEncoded(io.Discard, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("receive/old", func(b *testing.B) {
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			if _, err := Decode(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("receive/new", func(b *testing.B) {
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			if _, err := DecodeOwned(frame); err != nil { // read-only: the frame may be decoded again
				b.Fatal(err)
			}
		}
	})
}
