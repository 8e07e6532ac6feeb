package boost_test

import (
	"sync/atomic"
	"testing"

	"github.com/cohortdm/cohort/boost"
)

// counting counts c's seals.
func counting(c boost.Crypto, n *atomic.Int64) boost.Crypto {
	seal := c.Seal
	c.Seal = func(v boost.Vec) (boost.Sum, error) {
		n.Add(1)
		return seal(v)
	}
	return c
}

func plainCrypto() boost.Crypto {
	return boost.Crypto{Ring: boost.PlainRing{}, Seal: func(v boost.Vec) (boost.Sum, error) { return v, nil }, Open: boost.OpenPlain}
}

// TestReuse: with the gradient ciphertexts re-used within a tree, the
// model is the one with every entry sealed at every level (and so the
// reference's), and the class holder seals fewer entries: on a one-to-one
// join only the first level's, on the many-to-many chain (whose class
// table's rows part join values between nodes, and whose middle table
// passes placed sums on to the far one) fewer than without re-use.
func TestReuse(t *testing.T) {
	t.Parallel()
	p := testParams()
	p.Trees = 3
	for _, tc := range []struct {
		name string
		c    *joinCase
	}{{"one-to-one", fanoutCase(t, 300, 1)}, {"chain", chainCase(t, 3, 240)}} {
		t.Run(tc.name, func(t *testing.T) {
			p.Reuse = false
			var off, on atomic.Int64
			want, err := boost.TrainWith(tc.c.g, tc.c.data, p, counting(plainCrypto(), &off))
			if err != nil {
				t.Fatal(err)
			}
			p.Reuse = true
			got, err := boost.TrainWith(tc.c.g, tc.c.data, p, counting(plainCrypto(), &on))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
				t.Fatalf("model with re-use differs\n got: %s\nwant: %s", a, b)
			}
			if on.Load() >= off.Load() {
				t.Fatalf("%d seals with re-use, %d without", on.Load(), off.Load())
			}
			if first := int64(p.Trees * tc.c.data["C"].NumRows()); tc.name == "one-to-one" && on.Load() != first {
				t.Fatalf("%d seals with re-use on a one-to-one join, want the first levels' %d", on.Load(), first)
			}
			t.Logf("%d seals with re-use, %d without", on.Load(), off.Load())
		})
	}
}

// TestReusePaillier: re-use under packed Paillier (placement by shifting
// the plaintext and adding the packing's offsets) gives the model in the
// clear, on the chain, whose middle table passes placed sums on.
func TestReusePaillier(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 3, 120)
	p := testParams()
	p.Trees = 2
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := boost.TrainWith(c.g, c.data, p, paillierCrypto(t, 1024, 1<<16))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
		t.Fatalf("encrypted model with re-use differs\n got: %s\nwant: %s", a, b)
	}
}

// TestPlaceRefuses: a re-used entry's placement refuses layouts and widths
// that do not fit the key (a hostile sender's), without allocating them.
func TestPlaceRefuses(t *testing.T) {
	t.Parallel()
	c := paillierCrypto(t, 1024, 1<<10)
	ring := c.Ring.(boost.PaillierRing)
	x, err := c.Seal(boost.Vec{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		node, width int
		lay         boost.Layout
	}{
		{0, 4, boost.Layout{SlotBits: 1 << 62, ValueBits: 40}},
		{0, 4, boost.Layout{SlotBits: 60, ValueBits: 60}},
		{0, 1 << 20, c.Layout},
		{2, 4, c.Layout},
		{-1, 4, c.Layout},
		{0, 40, c.Layout}, // 40 slots do not fit one 1024-bit plaintext
	} {
		if _, err := ring.Place(x, tc.node, tc.width, 1, tc.lay); err == nil {
			t.Errorf("node %d width %d layout %+v placed", tc.node, tc.width, tc.lay)
		}
	}
	if _, err := ring.Place(x, 1, 4, 2, c.Layout); err != nil {
		t.Fatalf("a fitting placement refused: %v", err)
	}
}
