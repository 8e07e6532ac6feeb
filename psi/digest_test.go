package psi

import (
	"bytes"
	"crypto/aes"
	"crypto/sha256"
	"encoding/binary"
	mrand "math/rand/v2"
	"testing"
)

// elementOf inverts shortBlock: the element a block encodes. That it
// exists is what makes short digests collision-free.
func elementOf(b [digestLen]byte) []byte {
	form, l := b[0]>>4, int(b[0]&15)
	if form == 0 {
		return append([]byte{}, b[1:1+l]...)
	}
	x := []byte{keyVersion, 1, form}
	x = binary.BigEndian.AppendUint32(x, uint32(l))
	return append(x, b[1:1+l]...)
}

// TestShortBlock checks which elements fit one block, and that each
// block gives back its element.
func TestShortBlock(t *testing.T) {
	num := func(s string) []byte { return mustKey(t, mustNum(t, s)) }
	text := func(s string) []byte { return mustKey(t, mustText(t, s)) }
	two := mustKey(t, IntValue(10), IntValue(20))
	for _, c := range []struct {
		name  string
		x     []byte
		short bool
	}{
		{"empty", nil, true},
		{"15 bytes", bytes.Repeat([]byte{0xff}, 15), true},
		{"16 bytes", bytes.Repeat([]byte{0xff}, 16), false},
		{"number key", num("524287"), true},
		{"15-digit number key (22 bytes)", num("123456789012345"), true},
		{"16-digit number key", num("1234567890123456"), false},
		{"15-byte text key", text("abcdefghijklmno"), true},
		{"16-byte text key", text("abcdefghijklmnop"), false},
		{"two-value key (16 bytes)", two, false},
		{"two-value key (14 bytes)", mustKey(t, IntValue(1), IntValue(2)), true},
		{"key header with a wrong length", append(num("5")[:keyHeaderLen:keyHeaderLen], '5', '5'), true},
		{"key header with another type", []byte{keyVersion, 1, 3, 0, 0, 0, 1, '5'}, true},
	} {
		b, ok := shortBlock(c.x)
		if ok != c.short {
			t.Errorf("%s: short %v, want %v", c.name, ok, c.short)
			continue
		}
		if ok && !bytes.Equal(elementOf(b), c.x) {
			t.Errorf("%s: block %x gives back %x", c.name, b, elementOf(b))
		}
	}
}

// FuzzShortBlock checks that shortBlock is injective: each block gives
// back its element, so two different elements never share one.
func FuzzShortBlock(f *testing.F) {
	f.Add([]byte{}, []byte{0})
	f.Add([]byte{keyVersion, 1, byte(Number), 0, 0, 0, 1, '7'}, []byte{1, '7'})
	f.Add([]byte("abcdefghijklmno"), []byte("abcdefghijklmnop"))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		bx, okx := shortBlock(x)
		by, oky := shortBlock(y)
		if okx && !bytes.Equal(elementOf(bx), x) {
			t.Fatalf("block %x of %x gives back %x", bx, x, elementOf(bx))
		}
		if okx && oky && bx == by && !bytes.Equal(x, y) {
			t.Fatalf("%x and %x share the block %x", x, y, bx)
		}
		if !okx && len(x) < digestLen {
			t.Fatalf("%x (%d bytes) has no block", x, len(x))
		}
	})
}

// TestDigestForms checks every digest of a mixed set against its
// definition computed alone: AES-128 of the short block under the tag's
// short key, or truncated SHA-256, across batches and goroutines.
func TestDigestForms(t *testing.T) {
	tag := []byte("job/phase/0/edge")
	dg := newDigester(tag)
	key := sha256.Sum256(append([]byte("cohort-psi-ot-v1:digest:"), tag...))
	sk := sha256.Sum256(append([]byte("cohort-psi-v1:short-digest:"), key[:]...))
	blk, err := aes.NewCipher(sk[:16])
	if err != nil {
		t.Fatal(err)
	}
	rng := mrand.New(mrand.NewPCG(7, 8))
	elems := make([][]byte, 5000)
	for i := range elems {
		elems[i] = make([]byte, rng.IntN(30))
		for j := range elems[i] {
			elems[i][j] = byte(rng.Uint32())
		}
		if i%3 == 0 {
			elems[i] = benchElems(i*977, 1)[0]
		}
	}
	got := dg.digests(elems)
	seen := map[[digestLen]byte]bool{}
	for i, x := range elems {
		var want [digestLen]byte
		if b, ok := shortBlock(x); ok {
			blk.Encrypt(want[:], b[:])
		} else {
			s := sha256.Sum256(append(key[:], x...))
			copy(want[:], s[:])
		}
		if got[i] != want {
			t.Fatalf("element %d (%d bytes): digest %x, want %x", i, len(x), got[i], want)
		}
		seen[got[i]] = true
	}
	if len(seen) != distinctCount(elems) {
		t.Fatalf("%d distinct digests of %d distinct elements", len(seen), distinctCount(elems))
	}
}

// TestRekey checks that rekey is AES under the seed's digest key, the
// same for both parties' copies, and different under another seed.
func TestRekey(t *testing.T) {
	dg := newDigester([]byte("tag"))
	ds := dg.digests(benchElems(0, 300))
	orig := append([][digestLen]byte{}, ds...)
	var seed, other [32]byte
	seed[0], other[0] = 1, 2
	rekey(ds, seed)
	blk, err := aes.NewCipher(derive(seed, "digest"))
	if err != nil {
		t.Fatal(err)
	}
	again := append([][digestLen]byte{}, orig...)
	rekey(again, other)
	for i := range ds {
		var want [digestLen]byte
		blk.Encrypt(want[:], orig[i][:])
		if ds[i] != want {
			t.Fatalf("digest %d re-keyed to %x, want %x", i, ds[i], want)
		}
		if again[i] == ds[i] {
			t.Fatalf("digest %d re-keys to %x under two seeds", i, ds[i])
		}
	}
}

// TestSeedOnce checks that a prepared set refuses a second seed, which
// would re-key its digests twice and match nothing.
func TestSeedOnce(t *testing.T) {
	set := &otSet{dg: newDigester([]byte("tag")), ds: make([][digestLen]byte, 3)}
	set.seed([]byte("r"), []byte("s"))
	if set.ds[0] == ([digestLen]byte{}) {
		t.Fatal("seed did not re-key the digests")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second seed did not panic")
		}
	}()
	set.seed([]byte("r"), []byte("s"))
}
