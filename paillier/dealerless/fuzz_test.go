package dealerless

import (
	"bytes"
	"math/big"
	"testing"
)

// FuzzDecodeElems: the decoder of every ring-element message never panics,
// accepts only whole elements below the modulus, and re-encodes to its
// input.
func FuzzDecodeElems(f *testing.F) {
	r := newRing(600)
	f.Add(encodeElems([]*big.Int{big.NewInt(1), new(big.Int).Sub(r.P, big.NewInt(1))}, r.width), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, r.width), uint8(0))
	f.Add([]byte{1, 2, 3}, uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, take uint8) {
		el, err := decodeElems(b, r.width, r.P)
		if err != nil {
			return
		}
		for _, x := range el {
			if x.Sign() < 0 || x.Cmp(r.P) >= 0 {
				t.Fatalf("element %v out of range", x)
			}
		}
		if !bytes.Equal(encodeElems(el, r.width), b) {
			t.Fatal("re-encoding differs")
		}
		rd := &reader{from: "party 2", elems: el}
		got := rd.take(int(take))
		if err := rd.done(); (err == nil) != (int(take) == len(el)) || (err == nil && len(got) != len(el)) {
			t.Fatalf("reader: took %d of %d: %v", take, len(el), err)
		}
	})
}
