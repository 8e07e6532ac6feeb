package psi

import (
	"cmp"
	"errors"
	mrand "math/rand/v2"
	"slices"
	"testing"
)

func randDigests(r *mrand.Rand, n int) [][digestLen]byte {
	ds := make([][digestLen]byte, n)
	for i := range ds {
		for j := range ds[i] {
			ds[i][j] = byte(r.Uint32())
		}
	}
	return ds
}

// TestOKVSRoundTrip encodes random keys and values at several sizes and
// decodes every key back to its value; keys outside the store decode to
// values unrelated to the encoded ones.
func TestOKVSRoundTrip(t *testing.T) {
	r := mrand.New(mrand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 3, 100, 1000, 20000} {
		var seed [32]byte
		seed[0] = byte(n)
		h := newOKVSHasher(seed, 0, okvsSize(n))
		ds := randDigests(r, n)
		vals := make([]gf, n)
		for i := range vals {
			vals[i] = randGF(r)
		}
		p, err := okvsEncode(h, ds, vals, testFill())
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(p) != okvsSize(n) {
			t.Fatalf("n=%d: %d columns, want %d", n, len(p), okvsSize(n))
		}
		for i := range ds {
			if got := okvsDecode(h, p, &ds[i]); got != vals[i] {
				t.Fatalf("n=%d: key %d decodes to %x, want %x", n, i, got, vals[i])
			}
		}
		if n > 0 {
			other := randDigests(r, 1)
			if okvsDecode(h, p, &other[0]) == vals[0] {
				t.Fatalf("n=%d: a foreign key decodes to an encoded value", n)
			}
		}
	}
}

// TestOKVSFailure checks that an unsolvable system is reported, never
// encoded wrong: more keys than columns, and one key with two values.
func TestOKVSFailure(t *testing.T) {
	r := mrand.New(mrand.NewPCG(7, 8))
	ds := randDigests(r, 2*okvsBand)
	vals := make([]gf, len(ds))
	for i := range vals {
		vals[i] = randGF(r)
	}
	h := newOKVSHasher([32]byte{1}, 0, okvsBand+okvsBand/2) // fewer columns than keys
	if _, err := okvsEncode(h, ds, vals, testFill()); !errors.Is(err, errOKVS) {
		t.Fatalf("overfull store: err %v, want errOKVS", err)
	}
	ds[1] = ds[0] // the same key twice with different values
	h = newOKVSHasher([32]byte{2}, 0, okvsSize(len(ds)))
	if _, err := okvsEncode(h, ds, vals, testFill()); !errors.Is(err, errOKVS) {
		t.Fatalf("repeated key: err %v, want errOKVS", err)
	}
}

// TestOKVSFailureRate encodes at ε = 0.1 and w = 256 many times under
// fresh keys: at the stated ≈2^-53 per encoding none may fail. The same
// keys into fewer columns than keys must fail every time, so a solver
// that accepted any system would not pass.
func TestOKVSFailureRate(t *testing.T) {
	r := mrand.New(mrand.NewPCG(9, 10))
	const n, trials = 4000, 40
	vals := make([]gf, n)
	for i := range vals {
		vals[i] = randGF(r)
	}
	tight := 0
	for a := range trials {
		ds := randDigests(r, n)
		if _, err := okvsEncode(newOKVSHasher([32]byte{3}, a, okvsSize(n)), ds, vals, testFill()); err != nil {
			t.Fatalf("trial %d: %v", a, err)
		}
		if _, err := okvsEncode(newOKVSHasher([32]byte{4}, a, n-n/8), ds, vals, testFill()); err == nil {
			tight++
		}
	}
	if tight != 0 {
		t.Fatalf("%d of %d encodings of %d keys into %d columns succeeded", tight, trials, n, n-n/8)
	}
}

func BenchmarkOKVS(b *testing.B) {
	r := mrand.New(mrand.NewPCG(11, 12))
	n := 1 << 20
	ds := randDigests(r, n)
	vals := make([]gf, n)
	for i := range vals {
		vals[i] = randGF(r)
	}
	h := newOKVSHasher([32]byte{5}, 0, okvsSize(n))
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := okvsEncode(h, ds, vals, testFill()); err != nil {
				b.Fatal(err)
			}
		}
	})
	p, _ := okvsEncode(h, ds, vals, testFill())
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			for i := range ds {
				_ = okvsDecode(h, p, &ds[i])
			}
		}
	})
	b.Run("decodeAll", func(b *testing.B) {
		for b.Loop() {
			_ = okvsDecodeAll(h, p, ds)
		}
	})
}

// testFill is a fixed-seed source for the OKVS's free columns.
func testFill() *mrand.ChaCha8 { return mrand.NewChaCha8([32]byte{42}) }

// TestOKVSDecodeAll: decoding all keys at once, in the order of their
// starts, gives each key's own decoding in the caller's order.
func TestOKVSDecodeAll(t *testing.T) {
	r := mrand.New(mrand.NewPCG(13, 14))
	ds := randDigests(r, 3000)
	vals := make([]gf, len(ds))
	for i := range vals {
		vals[i] = randGF(r)
	}
	h := newOKVSHasher([32]byte{6}, 0, okvsSize(len(ds)))
	p, err := okvsEncode(h, ds, vals, testFill())
	if err != nil {
		t.Fatal(err)
	}
	probe := append(randDigests(r, 100), ds...) // foreign keys first
	got := okvsDecodeAll(h, p, probe)
	for i := range probe {
		if want := okvsDecode(h, p, &probe[i]); got[i] != want {
			t.Fatalf("key %d: %x, want %x", i, got[i], want)
		}
		if i >= 100 && got[i] != vals[i-100] {
			t.Fatalf("key %d decodes to %x, want its value", i, got[i])
		}
	}
}

// TestRadixSortHigh checks the starts' radix sort against a stable sort
// by the high word, for widths of 1 to 31 bits (one to three passes),
// with many ties at the small widths, and the layout's order and starts
// against the starts computed key by key.
func TestRadixSortHigh(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(11, 12))
	for width := 1; width <= 31; width++ {
		for _, n := range []int{0, 1, 2, 1000} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = rng.Uint64N(1<<width)<<32 | uint64(i)
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>32, b>>32) })
			got := radixSortHigh(keys, make([]uint64, n), width)
			if !slices.Equal(got, want) {
				t.Fatalf("width %d, %d keys: not sorted stably by the high word", width, n)
			}
		}
	}
	h := newOKVSHasher([32]byte{5}, 0, okvsSize(3000))
	ds := make([][digestLen]byte, 3000)
	for i := range ds {
		ds[i] = [digestLen]byte{byte(i), byte(i >> 8), 1}
	}
	order, sorted := h.sortedKeys(ds, nil)
	for k, i := range order {
		in := []gf{okvsInput(&ds[i], 2)}
		h.block.encrypt(in, in)
		if int(sorted[k]) != h.startOf(in[0]) || (k > 0 && (sorted[k] < sorted[k-1] || sorted[k] == sorted[k-1] && i < order[k-1])) {
			t.Fatalf("position %d: key %d, start %d", k, i, sorted[k])
		}
	}
}
