package paillier

import (
	"crypto/rand"
	"math/big"
	"runtime"
	"testing"
)

// heapGrowth returns the live heap added by build, measured with
// runtime.MemStats after a full collection, while the built value is still
// reachable.
func heapGrowth(build func() any) (int64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), v
}

// TestFixedBaseMemory: a table takes the memory tableBytes charges for it
// (the elements themselves, nothing else). It used to take more than twice
// as much, because each element kept the double-length buffer of the
// product it was reduced from.
func TestFixedBaseMemory(t *testing.T) {
	_, _, sk := testKeys(t)
	bits, w := sk.randBits(), sk.encWindow()
	want := tableBytes(bits, w, len(sk.NS1.Bits()))
	got, fb := heapGrowth(func() any { return newFixedBase(sk.H, sk.NS1, bits, w) })
	if float64(got) > 1.05*float64(want) || float64(got) < 0.95*float64(want) {
		t.Fatalf("table of %d bits, window %d: heap grew by %d bytes, tableBytes says %d", bits, w, got, want)
	}
	runtime.KeepAlive(fb)
}

// TestTableSizeCapped: for every accepted key shape, up to the largest
// ciphertext modulus a hostile key may declare, each table fits
// maxTableBytes. A forged 8192-bit key used to get a 6-bit v table of over
// 800 MiB.
func TestTableSizeCapped(t *testing.T) {
	for _, c := range []struct{ nBits, s int }{{2048, 1}, {3072, 1}, {4096, 1}, {2048, 7}, {3072, 4}, {4096, 3}} {
		ns1Bits := c.nBits * (c.s + 1)
		k := (ns1Bits + 8*wordBytes - 1) / (8 * wordBytes)
		for _, sh := range []struct {
			name       string
			bits, maxW int
		}{
			{"H full", c.nBits, encMaxWindow},
			{"H short", (c.nBits + 1) / 2, encMaxWindow},
			{"v", ns1Bits + challengeBits + statBits + 1, vWindow},
		} {
			w := windowFor(sh.bits, k, sh.maxW)
			if w == 0 {
				t.Errorf("n %d bits, s %d, %s: no table fits", c.nBits, c.s, sh.name)
				continue
			}
			if b := tableBytes(sh.bits, w, k); b > maxTableBytes {
				t.Errorf("n %d bits, s %d, %s: %d bytes", c.nBits, c.s, sh.name, b)
			}
		}
	}
	// The documented 2048-bit windows are unchanged.
	if w := windowFor(2048, 64, encMaxWindow); w != 9 {
		t.Errorf("2048-bit encryption window %d", w)
	}
	if w := windowFor(4096+challengeBits+statBits+1, 64, vWindow); w != 6 {
		t.Errorf("2048-bit v window %d", w)
	}
}

// TestTableBudget: the cache never holds more than the budget, a table
// larger than the budget is not built, and results stay right without a
// table.
func TestTableBudget(t *testing.T) {
	tpk, shares, sk := testKeys(t)
	prev := SetFixedBaseBudget(0)
	defer SetFixedBaseBudget(prev)

	// No budget: no table, still correct.
	if fb := tableFor(sk.H, sk.NS1, sk.randBits(), encMaxWindow); fb != nil {
		t.Fatal("table built with a zero budget")
	}
	m := big.NewInt(4242)
	if got, err := sk.Decrypt(mustEnc(t, &sk.PublicKey, m)); err != nil || got.Cmp(m) != 0 {
		t.Fatalf("encryption without a table: %v %v", got, err)
	}
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m)}
	d, err := shares[0].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tpk.VerifyShare(cs, d, testCtx); err != nil {
		t.Fatalf("proof without the v table: %v", err)
	}

	// Room for about two tables: the third evicts the least recently used.
	one := tableBytes(sk.randBits(), windowFor(sk.randBits(), len(sk.NS1.Bits()), encMaxWindow), len(sk.NS1.Bits()))
	SetFixedBaseBudget(2*one + one/2)
	keys := []*PrivateKey{sk, testSK2}
	for i := 0; i < 3; i++ {
		k, err := GenerateKey(rand.Reader, testBits)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		k.Precompute()
		tablesMu.Lock()
		used, budget := tablesBytes, tableBudget.Load()
		tablesMu.Unlock()
		if used > budget {
			t.Fatalf("tables hold %d bytes, budget %d", used, budget)
		}
		if got, err := k.Decrypt(mustEnc(t, &k.PublicKey, m)); err != nil || got.Cmp(m) != 0 {
			t.Fatalf("round trip: %v %v", got, err)
		}
	}
	tablesMu.Lock()
	n := len(tables)
	tablesMu.Unlock()
	if n > 2 {
		t.Fatalf("%d tables cached within a budget for two", n)
	}
}
