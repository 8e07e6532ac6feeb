package boost

import (
	"crypto/rand"
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// compressKey is a 512-bit key with its crypto for rows join rows, and a
// count of the decryptions made.
func compressKey(t testing.TB, rows uint64) (*paillier.PrivateKey, Crypto, *int) {
	t.Helper()
	testkit.SmallKeys()
	sk, err := paillier.GenerateKey(rand.Reader, 512)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := paillier.NewRandomizerPool(t.Context(), &sk.PublicKey, nil, 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	n := new(int)
	dec := func(c *paillier.Ciphertext) (*big.Int, error) {
		*n++
		return sk.Decrypt(c)
	}
	c, err := PaillierCrypto(&sk.PublicKey, pool, rows, dec)
	if err != nil {
		t.Fatal(err)
	}
	return sk, c, n
}

// TestCompressedBinsAtTheBound: bin sums whose every slot is at the
// packing's bound (rows summands of the largest or the most negative
// value), of widths 2 to 2·slots (several ciphertexts each), open
// compressed to exactly what they open bin by bin, with fewer
// decryptions; and every run holds at most slots slots.
func TestCompressedBinsAtTheBound(t *testing.T) {
	const rows = 1000
	_, c, decs := compressKey(t, rows)
	slots := c.MaxWidth
	top := int64(1)<<c.Layout.ValueBits - 1
	var bs SealedBins
	for f, widths := range [][]int{{2, 2, 2, 2, 2, 2, 2}, {4, 8, 4, 8}, {slots, 2, slots + 3}, {2 * slots, 2}} {
		bs = append(bs, nil)
		for b, w := range widths {
			v := make(Vec, w)
			for i := range v {
				v[i] = top
				if (i+b+f)%2 == 1 {
					v[i] = -top
				}
			}
			x, err := c.Seal(v)
			if err != nil {
				t.Fatal(err)
			}
			bs[f] = append(bs[f], c.Ring.AddMul(nil, x, rows))
		}
		bs[f] = append(bs[f], nil) // an empty bin keeps its place
	}
	want, err := Open(bs, c.Open)
	if err != nil {
		t.Fatal(err)
	}
	single := *decs
	*decs = 0
	got, err := c.OpenBins(bs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, func(a, b []Vec) bool { return slices.EqualFunc(a, b, slices.Equal) }) {
		t.Fatalf("compressed bin sums %v, want %v", got, want)
	}
	if *decs >= single {
		t.Fatalf("%d decryptions compressed, %d bin by bin", *decs, single)
	}
	es, _, err := flattenBins(0, bs)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := newBinPacker(c.Ring.(PaillierRing).PK, c.Layout)
	if err != nil {
		t.Fatal(err)
	}
	widths, err := bp.widths(es)
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, n := range bp.runs(widths) {
		sum := 0
		for _, w := range widths[at : at+n] {
			sum += w
		}
		if sum > slots || n < 1 || (at+n < len(widths) && sum+widths[at+n] <= slots) {
			t.Fatalf("run of %d ciphertexts, %d slots: not greedy within %d", n, sum, slots)
		}
		at += n
	}
	if *decs != len(bp.runs(widths)) {
		t.Fatalf("%d decryptions for %d runs", *decs, len(bp.runs(widths)))
	}
}

// TestExpandRefuses: a compressed plaintext with a bit above its run's
// slots, a count of plaintexts that does not fit the entries, an entry
// whose ciphertext count does not fit its width, and a layout wider than
// the key are wire errors.
func TestExpandRefuses(t *testing.T) {
	_, c, _ := compressKey(t, 100)
	pk := c.Ring.(PaillierRing).PK
	bp, err := newBinPacker(pk, c.Layout)
	if err != nil {
		t.Fatal(err)
	}
	widths := []int{2, 4}
	high := new(big.Int).Lsh(big.NewInt(1), uint(6*c.Layout.SlotBits))
	for name, pts := range map[string][]*big.Int{
		"bit above the slots": {high},
		"negative":            {big.NewInt(-1)},
		"two for one run":     {big.NewInt(1), big.NewInt(1)},
	} {
		if _, err := bp.expand(pts, widths); !errors.Is(err, ErrWire) {
			t.Errorf("%s: %v, want ErrWire", name, err)
		}
	}
	if _, err := bp.widths([]binEntry{{W: 2 * bp.slots, K: 1}}); !errors.Is(err, ErrWire) {
		t.Errorf("K too small: %v, want ErrWire", err)
	}
	if _, err := bp.widths([]binEntry{{W: 0, K: 0}}); !errors.Is(err, ErrWire) {
		t.Errorf("W 0: %v, want ErrWire", err)
	}
	wide := Layout{SlotBits: pk.N.BitLen(), ValueBits: 10}
	if _, err := newBinPacker(pk, wide); !errors.Is(err, ErrWire) {
		t.Errorf("layout wider than the key: %v, want ErrWire", err)
	}
}

// FuzzBinsExpand: the class holder's reading of a peer's bin sums (the
// wire message, then the plaintexts of its ciphertexts expanded and
// unpacked into bins) fails with an error or gives bins, never panics.
func FuzzBinsExpand(f *testing.F) {
	_, c, _ := compressKey(f, 100)
	pk := c.Ring.(PaillierRing).PK
	seed, err := wire.Marshal(&wireBins{Entries: []binEntry{{Feature: 0, Bin: 1, N: 3, W: 2, K: 1}, {Feature: 1, Bin: 0, N: 1, W: 4, K: 1}}, SlotBits: c.Layout.SlotBits})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, []byte{1, 2, 3})
	f.Add([]byte{0x80}, []byte{})
	f.Fuzz(func(t *testing.T, b, plain []byte) {
		var w wireBins
		if wire.Unmarshal(b, &w) != nil || len(w.Entries) > 64 {
			return
		}
		lay := c.Layout
		lay.SlotBits = w.SlotBits
		bp, err := newBinPacker(pk, lay)
		if err != nil {
			return
		}
		widths, err := bp.widths(w.Entries)
		if err != nil || len(widths) > 1024 {
			return
		}
		pts := make([]*big.Int, len(bp.runs(widths)))
		for i := range pts {
			pts[i] = new(big.Int).SetBytes(plain)
			pts[i].Lsh(pts[i], uint(i))
		}
		out, err := bp.expand(pts, widths)
		if err != nil {
			return
		}
		if len(out) != len(widths) {
			t.Fatalf("%d plaintexts expanded for %d ciphertexts", len(out), len(widths))
		}
		_, _, _ = openEntries(w.Entries, out, 4, c.Unpack)
	})
}
