package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// TestEncodePartsIsMsgpack checks that the head and body EncodeParts
// returns are, joined, msgpack's own encoding of the message, at every
// bin header's size boundary and with nil, empty and long bodies: the
// transport's bytes on the wire are what they were before it stopped
// copying bodies.
func TestEncodePartsIsMsgpack(t *testing.T) {
	sizes := []int{0, 1, 255, 256, 65535, 65536, 1 << 20}
	var msgs []*Message
	msgs = append(msgs, &Message{Type: "t", Job: "j"}, &Message{Type: "t", Job: "j", Channel: "part/3", Body: nil})
	for _, n := range sizes {
		m := sample()
		m.Body = bytes.Repeat([]byte{0xa5}, n)
		msgs = append(msgs, m)
	}
	long := sample()
	long.Type, long.Phase, long.Channel = strings.Repeat("t", MaxFieldLen), "p", strings.Repeat("c", 40)
	long.Round, long.Attempt = 1<<40, 70000
	msgs = append(msgs, long)
	for _, m := range msgs {
		c := *m
		c.Version = Version
		want, err := msgpack.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		e, err := EncodeParts(m)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if !bytes.Equal(e.Bytes(), want) {
			t.Fatalf("%v: EncodeParts differs from msgpack's encoding", m)
		}
		if len(m.Body) > 0 && &e.Body[0] != &m.Body[0] {
			t.Fatalf("%v: the body was copied", m)
		}
		got, err := Encode(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%v: Encode differs from msgpack's encoding (%v)", m, err)
		}
		var framed, old bytes.Buffer
		if err := WriteEncoded(&framed, e); err != nil {
			t.Fatal(err)
		}
		if err := WriteFrame(&old, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(framed.Bytes(), old.Bytes()) {
			t.Fatalf("%v: WriteEncoded frames differently from WriteFrame", m)
		}
	}
}

// TestEncodePartsRefuses checks that EncodeParts refuses what Encode did:
// a message without type or job, an oversized field or body.
func TestEncodePartsRefuses(t *testing.T) {
	for name, m := range map[string]*Message{
		"no type":    {Job: "j"},
		"no job":     {Type: "t"},
		"negative":   {Type: "t", Job: "j", Round: -1},
		"long field": {Type: "t", Job: strings.Repeat("j", MaxFieldLen+1)},
		"large body": {Type: "t", Job: "j", Body: make([]byte, MaxMessageSize)},
	} {
		if _, err := EncodeParts(m); err == nil {
			t.Errorf("%s: encoded", name)
		}
		if err := WriteMessage(&bytes.Buffer{}, m); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}

// TestDecodeOwnedSharesTheFrame checks that DecodeOwned's body is the
// frame's own bytes, cut at its end, while Decode's is a copy.
func TestDecodeOwnedSharesTheFrame(t *testing.T) {
	m := sample()
	m.Body = bytes.Repeat([]byte{3}, 1000)
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	owned, err := DecodeOwned(b)
	if err != nil {
		t.Fatal(err)
	}
	if !equalMessages(owned, m) {
		t.Fatalf("got %v, want %v", owned, m)
	}
	if &owned.Body[len(owned.Body)-1] != &b[len(b)-1] || cap(owned.Body) != len(owned.Body) {
		t.Fatal("DecodeOwned's body is not the end of its frame, cut at its length")
	}
	copied, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] = 4
	if copied.Body[len(copied.Body)-1] != 3 {
		t.Fatal("Decode's body shares the frame")
	}
}

// FuzzDecodeOwned checks DecodeOwned against Decode on arbitrary bytes:
// it never panics, accepts exactly what Decode accepts, with the same
// message, and refuses with errors of the documented kinds.
func FuzzDecodeOwned(f *testing.F) {
	seedMessages(f)
	f.Add([]byte{0x81, 0xa1, 'b', 0xc4, 0x05, 1, 2}) // a body longer than what is left
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := Decode(b)
		got, err := DecodeOwned(bytes.Clone(b))
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("DecodeOwned error %v, Decode error %v", err, wantErr)
		}
		if err != nil {
			if got != nil {
				t.Fatal("message returned with an error")
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadVersion) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error outside the documented kinds: %v", err)
			}
			return
		}
		if !equalMessages(got, want) || (got.Body == nil) != (want.Body == nil) {
			t.Fatalf("DecodeOwned gave %v, Decode %v", got, want)
		}
	})
}
