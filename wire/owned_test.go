package wire

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"
)

// ownedSample is a body with byte strings beside other fields, as
// boosting's lattice messages have.
type ownedSample struct {
	Edge int    `msgpack:"edge"`
	C    Blobs  `msgpack:"c"`
	Tail string `msgpack:"tail"`
}

// copiedSample is ownedSample with C as a plain [][]byte.
type copiedSample struct {
	Edge int      `msgpack:"edge"`
	C    [][]byte `msgpack:"c"`
	Tail string   `msgpack:"tail"`
}

// within says whether x lies inside b's memory.
func within(x, b []byte) bool {
	if len(x) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(x)) <= lo+uintptr(len(b))
}

// TestUnmarshalOwned checks that UnmarshalOwned decodes Blobs as
// sub-slices of the payload with their capacity cut, Unmarshal as copies,
// both equal to the [][]byte the sender encoded, and that a Blobs encodes
// as a [][]byte does.
func TestUnmarshalOwned(t *testing.T) {
	in := copiedSample{Edge: 3, C: [][]byte{bytes.Repeat([]byte{7}, 300), {1, 2, 3}, nil, bytes.Repeat([]byte{9}, 70_000)}, Tail: "t"}
	b, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	if nb, err := Marshal(&ownedSample{Edge: in.Edge, C: in.C, Tail: in.Tail}); err != nil || !bytes.Equal(nb, b) {
		t.Fatalf("a Blobs encodes differently from a [][]byte (%v)", err)
	}
	var owned, copied ownedSample
	if err := UnmarshalOwned(b, &owned); err != nil {
		t.Fatal(err)
	}
	if err := Unmarshal(b, &copied); err != nil {
		t.Fatal(err)
	}
	for k, want := range in.C {
		if !bytes.Equal(owned.C[k], want) || !bytes.Equal(copied.C[k], want) {
			t.Fatalf("blob %d decoded as %d and %d bytes, want %d", k, len(owned.C[k]), len(copied.C[k]), len(want))
		}
		if len(want) > 0 && (!within(owned.C[k], b) || cap(owned.C[k]) != len(owned.C[k])) {
			t.Errorf("blob %d: not a capacity-cut sub-slice of the payload", k)
		}
		if within(copied.C[k], b) {
			t.Errorf("blob %d: Unmarshal did not copy", k)
		}
	}
	if owned.Edge != in.Edge || owned.Tail != in.Tail || owned.C[2] != nil {
		t.Errorf("decoded %+v around the blobs", owned)
	}
	if err := UnmarshalOwned(b[:len(b)-40], &owned); !errors.Is(err, ErrMalformed) {
		t.Errorf("a cut payload: %v, want ErrMalformed", err)
	}
}

// FuzzUnmarshalOwned checks that UnmarshalOwned accepts and refuses what
// Unmarshal does on any payload, with the same values, and never panics.
func FuzzUnmarshalOwned(f *testing.F) {
	for _, s := range []copiedSample{{Edge: 1, C: [][]byte{{1}, nil, {}}, Tail: "x"}, {}} {
		b, err := Marshal(&s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x81, 0xa1, 'c', 0x91, 0xc4, 0x05, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var owned ownedSample
		var copied copiedSample
		eo, ec := UnmarshalOwned(bytes.Clone(b), &owned), Unmarshal(b, &copied)
		if (eo == nil) != (ec == nil) {
			t.Fatalf("owned: %v, copied: %v", eo, ec)
		}
		if eo != nil {
			return
		}
		if owned.Edge != copied.Edge || owned.Tail != copied.Tail || len(owned.C) != len(copied.C) || (owned.C == nil) != (copied.C == nil) {
			t.Fatalf("owned %+v, copied %+v", owned, copied)
		}
		for k := range copied.C {
			if !bytes.Equal(owned.C[k], copied.C[k]) {
				t.Fatalf("blob %d: %x against %x", k, owned.C[k], copied.C[k])
			}
		}
	})
}

// blobsLast has its Blobs as its last field, as MarshalBlobs needs.
type blobsLast struct {
	Edge  int      `msgpack:"edge"`
	Names []string `msgpack:"names,omitempty"`
	C     Blobs    `msgpack:"c"`
}

// TestMarshalBlobs checks that MarshalBlobs gives Marshal's bytes for
// every header size of the array and the bins, with omitted fields, and
// refuses a payload whose last field is not the nil key.
func TestMarshalBlobs(t *testing.T) {
	for _, c := range []struct{ n, size int }{{0, 5}, {1, 0}, {3, 255}, {15, 256}, {16, 3}, {2, 70_000}, {70_000, 1}} {
		for _, names := range [][]string{nil, {"a", "b"}} {
			blobs := make(Blobs, c.n)
			for k := range blobs {
				blobs[k] = bytes.Repeat([]byte{byte(k)}, c.size)
			}
			want, err := Marshal(&blobsLast{Edge: 9, Names: names, C: blobs})
			if err != nil {
				t.Fatal(err)
			}
			got, err := MarshalBlobs(&blobsLast{Edge: 9, Names: names}, "c", c.n, c.size, func(k int, dst []byte) error {
				if len(dst) != c.size || cap(dst) != c.size {
					t.Fatalf("blob %d: %d bytes, capacity %d", k, len(dst), cap(dst))
				}
				copy(dst, blobs[k])
				return nil
			})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d blobs of %d bytes: %d bytes (%v), Marshal's %d", c.n, c.size, len(got), err, len(want))
			}
			if cap(got) != len(got) {
				t.Errorf("%d blobs of %d bytes: capacity %d for %d bytes", c.n, c.size, cap(got), len(got))
			}
		}
	}
	if _, err := MarshalBlobs(&ownedSample{Edge: 1}, "c", 1, 1, func(int, []byte) error { return nil }); err == nil {
		t.Error("a payload whose last field is not c was built")
	}
	if _, err := MarshalBlobs(&blobsLast{C: Blobs{{1}}}, "c", 1, 1, func(int, []byte) error { return nil }); err == nil {
		t.Error("a payload whose c was not nil was built")
	}
	boom := errors.New("boom")
	if _, err := MarshalBlobs(&blobsLast{}, "c", 2, 1, func(int, []byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("put's error: %v", err)
	}
}
