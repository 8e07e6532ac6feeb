package mpc

import (
	"bytes"
	"testing"
)

// FuzzDecodeVec checks that DecodeVec never panics and that whatever
// it accepts re-encodes to the same bytes (one encoding per vector).
func FuzzDecodeVec(f *testing.F) {
	f.Add(AppendVec(nil, nil))
	f.Add(AppendVec(nil, []Elem{NewElem(1), FromInt(-1), Pow2(126)}))
	f.Add([]byte{0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeVec(b)
		if err != nil {
			return
		}
		if got := AppendVec(nil, v); !bytes.Equal(got, b) {
			t.Fatalf("accepted %x, re-encodes to %x", b, got)
		}
	})
}

// FuzzDecodeElem checks that DecodeElem never panics, accepts only
// values below p, and round-trips what it accepts.
func FuzzDecodeElem(f *testing.F) {
	p := Elem{pHi, pLo}.Bytes() // the raw limbs of p, not reduced
	f.Add(p[:])
	f.Add(make([]byte, ElemSize))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeElem(b)
		if err != nil {
			return
		}
		if toBig(e).Cmp(bigP) >= 0 {
			t.Fatalf("accepted %x, not below p", b)
		}
		if got := e.Bytes(); !bytes.Equal(got[:], b) {
			t.Fatalf("accepted %x, re-encodes to %x", b, got)
		}
	})
}
