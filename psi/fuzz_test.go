package psi

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// Every decoder of peer bytes is fuzzed: it returns a result or an error
// wrapping ErrPeer (or ErrTooLarge), and never panics.

func FuzzDecodeChunk(f *testing.F) {
	p := HashBlind([][]byte{[]byte("a"), []byte("b")}, []byte("t"), NewSecret())
	run := bytes.Repeat([]byte{7}, runIDLen)
	good, _ := encodeChunk(2, 0, p, run, nil)
	f.Add(good, 0, 4, 10, -1)
	f.Add(good, 0, 1, 10, 2)
	empty, _ := encodeChunk(0, 0, nil, run, run)
	f.Add(empty, 0, 4, 10, 0)
	f.Add([]byte{0x83}, 0, 4, 10, -1)
	f.Fuzz(func(t *testing.T, b []byte, index, chunk, max, total int) {
		if chunk <= 0 || chunk > 1<<16 || max < 0 || max > 1<<20 || index < 0 || total > max {
			return // the caller's own arguments are always in range
		}
		n, pts, err := decodeChunk(b, index, chunk, max, total, &runs{peer: run})
		if err != nil {
			if !errors.Is(err, ErrPeer) && !errors.Is(err, ErrRestarted) {
				t.Fatalf("error not ErrPeer or ErrRestarted: %v", err)
			}
			return
		}
		if n < 0 || n > max || (total >= 0 && n != total) || len(pts) != chunkLen(n, chunk, index) {
			t.Fatalf("accepted total %d with %d points (index %d, chunk %d, max %d, total %d)", n, len(pts), index, chunk, max, total)
		}
		if _, err := DoubleBlind(pts, NewSecret()); err != nil && !errors.Is(err, ErrPeer) {
			t.Fatalf("DoubleBlind: %v", err)
		}
	})
}

func FuzzDoubleBlind(f *testing.F) {
	p := HashBlind([][]byte{[]byte("a")}, []byte("t"), NewSecret())
	f.Add(p[0][:])
	f.Add(bytes.Repeat([]byte{0xff}, PointLen))
	f.Add(make([]byte, PointLen))
	s := NewSecret()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != PointLen {
			return
		}
		var q Point
		copy(q[:], b)
		d, err := DoubleBlind([]Point{q}, s)
		if err != nil {
			if !errors.Is(err, ErrPeer) {
				t.Fatalf("error not ErrPeer: %v", err)
			}
			return
		}
		// An accepted point is canonical: its double decodes too.
		if _, err := DoubleBlind(d, s); err != nil {
			t.Fatalf("double of an accepted point rejected: %v", err)
		}
	})
}

func FuzzDecodeFilter(f *testing.F) {
	run := bytes.Repeat([]byte{7}, runIDLen)
	good, _ := encodeFilter([]bool{true, false, true}, run)
	f.Add(good, 3)
	f.Add(good, 8)
	f.Add([]byte{0x82, 0xa1, 'n', 0x00, 0xa1, 'b', 0xc4, 0x00}, 0)
	f.Fuzz(func(t *testing.T, b []byte, total int) {
		if total < 0 || total > 1<<20 {
			return
		}
		bits, err := decodeFilter(b, total, run)
		if err != nil {
			if !errors.Is(err, ErrRestarted) && (!errors.Is(err, ErrPeer) || !errors.Is(err, wire.ErrMalformed)) {
				t.Fatalf("error not ErrRestarted, nor ErrPeer and ErrMalformed: %v", err)
			}
			return
		}
		if len(bits) != total {
			t.Fatalf("%d bits for %d elements", len(bits), total)
		}
		again, err := encodeFilter(bits, run)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decodeFilter(again, total, run); err != nil || len(back) != total {
			t.Fatalf("re-encoded filter does not decode: %v", err)
		}
	})
}

// FuzzDecodeKey: keys are not peer bytes (each party encodes its own),
// but DecodeKey must still never panic, and what it accepts re-encodes to
// the same bytes (the encoding is canonical).
func FuzzDecodeKey(f *testing.F) {
	k, _ := EncodeKey(IntValue(7), Value{Type: Text, canon: "x"})
	f.Add(k)
	f.Add([]byte{1, 1, 2, 0, 0, 0, 3, '1', '.', '5'})
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := DecodeKey(b)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Fatalf("error not ErrKey: %v", err)
			}
			return
		}
		again, err := EncodeKey(vals...)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("DecodeKey accepted %x, which re-encodes as %x (%v)", b, again, err)
		}
	})
}

// FuzzParseNumber: the canonical form is a fixed point.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1.50", "-0", "1e2", ".5", "0.000e-3", "12e+4", "+7."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseNumber(s)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Fatalf("error not ErrKey: %v", err)
			}
			return
		}
		w, err := ParseNumber(v.String())
		if err != nil || w != v {
			t.Fatalf("%q → %q → %q (%v)", s, v, w, err)
		}
	})
}
