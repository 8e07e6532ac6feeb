package boost_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/boost"
)

// TestLatticeCacheCap: the cap on each party's kept Ws
// (LatticeCrypto.CacheBytes, the node's boost_lattice_cache_bytes in the
// job) changes no model, and bounds what is kept: on the three-party
// star with both edges many-to-many (an entry's rows in one bin make one
// term), with no Ws kept, with room for two, and with the default,
// the model equals the one in the clear byte for byte; under the small
// cap (two Ws with their chunk's most terms) what each party's cache
// counts (polynomials, terms, records: lattice.KeptBytes) stays within
// the cap, and the memory that dropping
// its kept Ws frees (the live heap after a collection, with them and
// without) is within the cap; the default keeps more than the small cap,
// so the small cap is what bounded it.
func TestLatticeCacheCap(t *testing.T) {
	c := starCase(t, 1, 90)
	p := testParams()
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	crypto := latticeCrypto(t, c.g)
	poly, entry := boost.KeptEntryBytes(crypto.PK)
	small := 2 * entry
	kept := map[int64]int{}
	for _, cap := range []int64{boost.NoLatticeCache, small, 0} {
		crypto.CacheBytes = cap
		got, ws, err := boost.TrainLatticeKept(c.g, c.data, p, crypto)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
			t.Fatalf("cap %d: the model differs from the clear one\n got: %s\nwant: %s", cap, a, b)
		}
		parties := slices.Sorted(func(yield func(string) bool) {
			for q := range ws {
				if !yield(q) {
					return
				}
			}
		})
		for _, q := range parties {
			k := ws[q]
			if cap == boost.NoLatticeCache {
				if k.Bytes() != 0 {
					t.Errorf("no cache: party %s kept %d bytes", q, k.Bytes())
				}
				continue
			}
			kept[cap] += k.Bytes()
			if cap != small {
				continue
			}
			if k.Bytes() > int(cap) {
				t.Errorf("party %s kept %d bytes of Ws under a cap of two (%d bytes each at most, %d their polynomials)", q, k.Bytes(), entry, poly)
			}
			k0 := k.Bytes()
			ws[q] = nil
			freed := freedBy(func() { k = nil })
			t.Logf("party %s, cap %d: %d bytes of Ws kept, %d bytes of heap freed by dropping them", q, cap, k0, freed)
			if freed > uint64(cap) {
				t.Errorf("party %s: its kept Ws held %d bytes of heap, over the cap of %d", q, freed, cap)
			}
		}
	}
	if kept[small] == 0 || kept[0] <= kept[small] {
		t.Errorf("kept %d bytes under the small cap and %d under the default: the small cap did not bound it", kept[small], kept[0])
	}
}

// freedBy is how much the live heap shrinks when drop drops a reference.
func freedBy(drop func()) uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	before := m.HeapAlloc
	drop()
	runtime.GC()
	runtime.ReadMemStats(&m)
	if m.HeapAlloc >= before {
		return 0
	}
	return before - m.HeapAlloc
}
