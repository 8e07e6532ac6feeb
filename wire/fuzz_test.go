package wire

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func seedMessages(f *testing.F) {
	for _, m := range []*Message{sample(), {Type: "t", Job: "j"}, {Version: 2, Type: "t", Job: "j", Round: 1 << 40}} {
		b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0xc0})
	f.Add([]byte{0x98, 0x01, 0xa1, 't', 0xa1, 'j', 0xa0, 0x00, 0x00, 0xa0, 0xc4, 0x00}) // array form
}

// FuzzDecode checks that Decode never panics, that what it accepts is valid,
// and that an accepted message re-encodes to something Decode accepts again.
func FuzzDecode(f *testing.F) {
	seedMessages(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if m != nil {
				t.Fatal("message returned with an error")
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadVersion) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error outside the documented kinds: %v", err)
			}
			return
		}
		if m.Version != Version || m.Type == "" || m.Job == "" || m.Round < 0 || m.Attempt < 0 {
			t.Fatalf("invalid message accepted: %v", m)
		}
		b2, err := Encode(m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, err := Decode(b2)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !equalMessages(m, m2) {
			t.Fatalf("re-decode changed %v into %v", m, m2)
		}
	})
}

// FuzzReadMessage feeds arbitrary streams to the framed reader: no panic,
// frames beyond the limit refused, and the stream never over-read.
func FuzzReadMessage(f *testing.F) {
	for _, m := range []*Message{sample(), {Type: "t", Job: "j"}} {
		var buf bytes.Buffer
		if err := WriteMessage(&buf, m); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add(frame(1<<30, nil))
	f.Add(frame(0xffffffff, []byte{1, 2}))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for range 4 { // a few messages from one stream
			before := r.Len()
			m, err := ReadMessage(r)
			if err != nil {
				if m != nil {
					t.Fatal("message returned with an error")
				}
				return
			}
			used := before - r.Len()
			if used < 4 || used > 4+MaxMessageSize {
				t.Fatalf("consumed %d bytes for one message", used)
			}
			if m.Type == "" || m.Job == "" {
				t.Fatalf("invalid message accepted: %v", m)
			}
		}
	})
}

// fuzzBody has the field types job packages put in message bodies. It has
// no interface-typed field: see TestKnownBugUnmarshalArrayLengthAllocates.
type fuzzBody struct {
	Name   string            `msgpack:"name"`
	N      int64             `msgpack:"n"`
	Small  uint8             `msgpack:"small"`
	X      float64           `msgpack:"x"`
	OK     bool              `msgpack:"ok"`
	Blob   []byte            `msgpack:"blob"`
	Labels []string          `msgpack:"labels"`
	Counts map[string]int    `msgpack:"counts"`
	Rows   [][]int32         `msgpack:"rows"`
	At     time.Time         `msgpack:"at"`
	Child  *fuzzBody         `msgpack:"child"`
	Tags   map[string][]byte `msgpack:"tags"`
}

// FuzzUnmarshal checks Unmarshal into a typed body: no panic, and whatever
// it accepts survives a Marshal/Unmarshal round trip.
func FuzzUnmarshal(f *testing.F) {
	seeds := []fuzzBody{
		{},
		{Name: "a", N: -3, Small: 200, X: 1.5, OK: true, Blob: []byte{1}, Labels: []string{"x", ""},
			Counts: map[string]int{"yes": 3}, Rows: [][]int32{{1, 2}, nil}, At: time.Unix(1700000000, 5).UTC(),
			Child: &fuzzBody{Name: "c"}, Tags: map[string][]byte{"k": {9}}},
	}
	for _, s := range seeds {
		b, err := Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x81, 0xa6, 'l', 'a', 'b', 'e', 'l', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var v fuzzBody
		if err := Unmarshal(b, &v); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error outside ErrMalformed: %v", err)
			}
			return
		}
		b2, err := Marshal(v)
		if err != nil {
			t.Fatalf("re-marshal of accepted body: %v", err)
		}
		var v2 fuzzBody
		if err := Unmarshal(b2, &v2); err != nil {
			t.Fatalf("re-unmarshal: %v", err)
		}
		if v2.Name != v.Name || v2.N != v.N || len(v2.Labels) != len(v.Labels) || len(v2.Counts) != len(v.Counts) || !bytes.Equal(v2.Blob, v.Blob) {
			t.Fatalf("round trip changed %+v into %+v", v, v2)
		}
	})
}
