package boost

import (
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// FuzzDownDecode: a down message from a peer (gradient sums, re-used
// entries' references) decodes or fails with an error, never panics, and
// what decodes encodes back to the same entries.
func FuzzDownDecode(f *testing.F) {
	testkit.SmallKeys()
	sk, err := paillier.GenerateKey(rand.Reader, 512)
	if err != nil {
		f.Fatal(err)
	}
	pk := &sk.PublicKey
	c, err := pk.Encrypt(rand.Reader, big.NewInt(7))
	if err == nil {
		ds := DownSummary{Edge: 0, Values: []string{"a", "b"}, Width: 4, Layout: Layout{SlotBits: 60, ValueBits: 40}, Entries: [][]DownEntry{
			{{Combo: "0|", Sums: &Packed{C: []*paillier.Ciphertext{c}, N: 1, W: 4}}},
			{{Combo: "1|", Reuse: &Reuse{Ref: 0, Node: 1}}, {Combo: "0|", Reuse: &Reuse{Ref: 1, Node: -1}}},
		}}
		w, err := encodeDown(pk, ds)
		if err != nil {
			f.Fatal(err)
		}
		b, err := wire.Marshal(w)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var w wireDown
		if wire.Unmarshal(b, &w) != nil {
			return
		}
		ds, err := w.decode(pk, 0)
		if err != nil {
			return
		}
		back, err := encodeDown(pk, ds)
		if err != nil {
			return // sums of differing widths: refused when sent
		}
		for i := range ds.Entries {
			if len(back.Combos[i]) != len(ds.Entries[i]) {
				t.Fatalf("value %d: %d entries decoded, %d encoded back", i, len(ds.Entries[i]), len(back.Combos[i]))
			}
		}
	})
}
