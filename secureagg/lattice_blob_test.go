package secureagg

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// appended is a blob that appends itself (lattice's aggregates, masks and
// shares do so through their encodings).
type appended []byte

func (a appended) AppendBinary(b []byte) ([]byte, error) { return append(b, a...), nil }

// TestMarshalBlobIsSplitBlob checks that marshalBlob's parts are byte for
// byte splitBlob's, for a blob of one part, of exactly two, of a part and a
// bit, and empty, with part 0 built in place (not a copy of the blob).
func TestMarshalBlobIsSplitBlob(t *testing.T) {
	const partSize = 1000
	for _, n := range []int{0, 1, 999, 1000, 1001, 2000, 2500} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		want, err := splitBlob("shape-x", data, partSize)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalBlob("shape-x", appended(data), partSize)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d bytes: %d parts, want %d", n, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%d bytes: part %d differs from splitBlob's", n, i)
			}
		}
		if len(got) > 1 && cap(got[0]) != len(got[0]) {
			t.Fatalf("%d bytes: part 0 can grow into part 1's bytes", n)
		}
	}
}

// TestMarshalBlobOfList checks the down message's list built in place
// against encodeList split by splitBlob.
func TestMarshalBlobOfList(t *testing.T) {
	items := list{bytes.Repeat([]byte{1}, 1500), bytes.Repeat([]byte{2}, 700)}
	want, err := splitBlob("s", encodeList(items), 1000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalBlob("s", items, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
		t.Fatal("the list built in place differs from encodeList's parts")
	}
}

// TestMarshalBlobOfResult checks the root's result built in place
// against encodeResult split by splitBlob: with a plaintext of several
// parts (trailing zeros cut), and a failure without one.
func TestMarshalBlobOfResult(t *testing.T) {
	plain := make([]uint64, 400)
	for i := range 300 {
		plain[i] = uint64(i)*0x9e3779b97f4a7c15>>8 + 1
	}
	for _, r := range []*latticeResult{
		{Included: []string{"a", "b"}, Excluded: map[string]string{"b": "x"}, plain: plain},
		{Error: "failed", Missing: []string{"a"}},
	} {
		data, err := encodeResult(r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := splitBlob("s", data, 1000)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalBlob("s", resultBlob{r}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("the result built in place (%d parts) differs from splitBlob's (%d)", len(got), len(want))
		}
	}
}

// FuzzLatticeBlobReader feeds a blob reader two arbitrary part bodies: it
// never panics, and what it assembles is the size its first part declares,
// made of the chunks the parts carry.
func FuzzLatticeBlobReader(f *testing.F) {
	const maxSize, partSize = 2500, 1000
	two, _ := splitBlob("s", bytes.Repeat([]byte{7}, 1500), partSize)
	f.Add(two[0], two[1])
	one, _ := splitBlob("s", []byte{1, 2, 3}, partSize)
	f.Add(one[0], []byte(nil))
	abort, _ := blobAbort([]string{"a"})
	f.Add(abort[0], []byte(nil))
	f.Fuzz(func(t *testing.T, p0, p1 []byte) {
		r := newBlobReader("s", maxSize, partSize, []string{"a", "b"})
		parts, err := r.part(0, p0)
		if err != nil {
			if !errors.Is(err, wire.ErrMalformed) {
				t.Fatalf("error outside wire.ErrMalformed: %v", err)
			}
			return
		}
		_, c0, _ := decodePart(p0, "s", 0, maxSize, partSize, []string{"a", "b"})
		want := bytes.Clone(c0)
		if parts == 2 {
			if _, err := r.part(1, p1); err != nil {
				return
			}
			_, c1, _ := decodePart(p1, "s", 1, maxSize, partSize, []string{"a", "b"})
			want = append(want, c1...)
		} else if parts != 1 {
			return // more parts than the fuzzer gives: nothing assembled yet
		}
		data, missing := r.message()
		if len(missing) > 0 {
			if len(data) > 0 {
				t.Fatal("an abort with data")
			}
			return
		}
		if len(data) != r.first.Size || !bytes.Equal(data, want) {
			t.Fatalf("assembled %d bytes, the parts declare %d", len(data), r.first.Size)
		}
	})
}

// TestDefaultPartFitsAMessage checks that a part of defaultPartSize bytes,
// with the longest framing header a receiver accepts and an envelope whose
// every name is as long as wire allows, is a message wire sends, and that
// the up message of a million values at N = 5, at the widest values
// (62 bits, sum's default), is one part: received without a copy.
func TestDefaultPartFitsAMessage(t *testing.T) {
	shape := strings.Repeat("s", maxBlobHeader-64)
	prefix, err := framePrefix(blobHeader{Shape: shape, Part: math.MaxInt, Parts: math.MaxInt, Size: math.MaxInt})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, len(prefix)+defaultPartSize)
	long := strings.Repeat("x", wire.MaxFieldLen)
	m := &wire.Message{Type: long, Job: long, Phase: long, Round: math.MaxInt, Attempt: math.MaxInt, Channel: long, From: long, Body: body}
	if _, err := wire.EncodeParts(m); err != nil {
		t.Fatalf("a part of %d bytes does not fit a message: %v", defaultPartSize, err)
	}
	p, err := lattice.NewParams(lattice.ParamsBGV13)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lattice.NewLayout(p, 1_000_000, 16, 62, 5)
	if err != nil {
		t.Fatal(err)
	}
	if up := l.Ciphertexts()*p.CiphertextBytes() + headerRoom; partCount(up, defaultPartSize) != 1 {
		t.Fatalf("an up message of %d bytes takes %d parts of %d", up, partCount(up, defaultPartSize), defaultPartSize)
	}
}
