package psi

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// The unbalanced mode's decoders of peer bytes: each returns a result or
// an error wrapping ErrPeer or ErrRestarted, never panics, and what it
// accepts keeps its bounds.

func FuzzDecodeUpFilter(f *testing.F) {
	fps := []uint64{1, 5, 1 << 40, 3<<40 | 7}
	good, n := buildFilter(fps, 2)
	f.Add(good, n, uint(2))
	f.Add([]byte{0}, 0, uint(0))
	f.Add([]byte{0x01, 0, 0, 0, 0, 0}, 1, uint(0))
	f.Fuzz(func(t *testing.T, b []byte, n int, h uint) {
		if n > 1<<16 {
			return // decodeOffer bounds n before a filter is fetched
		}
		flt, err := decodeUpFilter(b, n, h)
		if err != nil {
			if !errors.Is(err, ErrPeer) {
				t.Fatalf("error not ErrPeer: %v", err)
			}
			return
		}
		// Every element decoded is found, and nothing above 2^(h+40) is.
		elem := 0
		for bit, bucket := 0, 0; bit < n+1<<h; bit++ {
			if flt.highs[bit/8]&(1<<(bit%8)) == 0 {
				bucket++
				continue
			}
			if !flt.contains(uint64(bucket)<<fpLowBits | flt.low(elem)) {
				t.Fatalf("element %d not found", elem)
			}
			elem++
		}
		if flt.contains(1 << (h + fpLowBits)) {
			t.Fatal("a fingerprint out of range is found")
		}
	})
}

func FuzzDecodeOffer(f *testing.F) {
	id := bytes.Repeat([]byte{1}, upIDLen)
	good, _ := wire.Marshal(&upOffer{Run: bytes.Repeat([]byte{2}, runIDLen), ID: id, Epoch: id, N: 5000, FN: 5000, H: 13})
	f.Add(good)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeOffer(b)
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if o.N > UnbalancedMaxServer || o.FN > o.N || filterLen(o.FN, o.H) > 5*UnbalancedMaxServer+(4*UnbalancedMaxServer+2)/8+1 {
			t.Fatalf("accepted %+v", o)
		}
	})
}

func FuzzDecodeUpMessages(f *testing.F) {
	run := bytes.Repeat([]byte{3}, runIDLen)
	fetch, _ := wire.Marshal(&upFetch{Run: run, Echo: run, Fetch: true})
	part, _ := wire.Marshal(&upFilterPart{Echo: run, Index: 0, Bytes: []byte{1, 2, 3}})
	match, _ := wire.Marshal(&upMatch{Echo: run, FPs: []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9}})
	f.Add(fetch, 0, 3, 4, uint(2))
	f.Add(part, 0, 3, 4, uint(2))
	f.Add(match, 0, 3, 4, uint(2))
	f.Fuzz(func(t *testing.T, b []byte, index, total, limit int, h uint) {
		if _, err := decodeFetch(b, run); err != nil {
			checkOTErr(t, err)
		}
		if index >= 0 && total >= 0 && index*upFilterChunk < max(total, 1) {
			p, err := decodeFilterPart(b, index, total, run)
			if err != nil {
				checkOTErr(t, err)
			} else if len(p) != min(upFilterChunk, total-index*upFilterChunk) {
				t.Fatalf("chunk %d of %d bytes accepted with %d", index, total, len(p))
			}
		}
		if limit < 0 || h > upMaxHigh {
			return
		}
		m, err := decodeMatch(b, limit, h, run)
		if err != nil {
			checkOTErr(t, err)
			return
		}
		for i, v := range m {
			if len(m) > limit || v>>(h+fpLowBits) != 0 || (i > 0 && v <= m[i-1]) {
				t.Fatalf("accepted %v for %d under %d bits", m, limit, h)
			}
		}
	})
}
