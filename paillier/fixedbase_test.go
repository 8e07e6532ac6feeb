package paillier

import (
	"crypto/rand"
	"math/big"
	"runtime"
	"testing"
	"time"
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
// (the elements themselves, nothing else; it used to take more than twice
// as much, because each element kept the double-length buffer of the
// product it was reduced from), and takes it outside the Go heap, so that
// the collector's headroom does not double it; once the table is
// unreachable, its memory is given back.
func TestFixedBaseMemory(t *testing.T) {
	_, _, sk := testKeys(t)
	bits, w := sk.randBits(), sk.encWindow()
	want := tableBytes(bits, w, len(sk.NS1.Bits()))
	mapped := MappedFixedBaseBytes()
	heap, fb := heapGrowth(func() any { return newFixedBase(sk.H, sk.NS1, bits, w) })
	got := MappedFixedBaseBytes() - mapped
	if float64(got) > 1.05*float64(want) || float64(got) < 0.95*float64(want) {
		t.Fatalf("table of %d bits, window %d: %d bytes mapped, tableBytes says %d", bits, w, got, want)
	}
	if heap > want/50 {
		t.Fatalf("table of %d bits, window %d: the Go heap grew by %d bytes (of %d): the slab is on the heap", bits, w, heap, want)
	}
	r := big.NewInt(1<<40 + 12345)
	if fb.(*fixedBase).exp(r).Cmp(new(big.Int).Exp(sk.H, r, sk.NS1)) != 0 {
		t.Fatal("the mapped table computes a wrong power")
	}
	runtime.KeepAlive(fb)
	fb = nil
	// The cleanup that unmaps it runs after a collection finds it
	// unreachable, on the runtime's cleanup goroutine: wait for it.
	for i := 0; MappedFixedBaseBytes() > mapped; i++ {
		if i == 1000 {
			t.Fatalf("%d bytes still mapped after 1000 collections", MappedFixedBaseBytes()-mapped)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
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
	if fb := tableFor(sk.H, sk.NS1, sk.randBits(), encMaxWindow, 1); fb != nil {
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
		k.PublicKey.precomputeH()
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

// TestPowerTable: the bucket method agrees with big.Int.Exp for exponents
// of every length up to the table's, zero, and beyond it (fallback).
func TestPowerTable(t *testing.T) {
	_, _, sk := testKeys(t)
	m := sk.NS1
	g, err := rand.Int(rand.Reader, m)
	if err != nil {
		t.Fatal(err)
	}
	bits := sk.randBits()
	for _, w := range []int{1, 3, smallWindow(bits), 8} {
		pt := newPowerTable(g, m, bits, w)
		for _, eb := range []int{0, 1, 2, w - 1, w, w + 1, bits / 2, bits - 1, bits, pt.bits, pt.bits + 1, pt.bits + 70} {
			for trial := 0; trial < 3; trial++ {
				e := big.NewInt(0)
				if eb > 0 {
					e, _ = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(eb)))
					e.SetBit(e, eb-1, 1)
				}
				want := new(big.Int).Exp(g, e, m)
				if got := pt.exp(e); got.Cmp(want) != 0 {
					t.Fatalf("window %d, %d-bit exponent: got %x, want %x", w, eb, got, want)
				}
			}
		}
	}
	// All-ones and single-window exponents fill one bucket or all.
	pt := newPowerTable(g, m, bits, 4)
	for _, e := range []*big.Int{new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits)), big.NewInt(1)), big.NewInt(15), new(big.Int).Lsh(big.NewInt(9), 40)} {
		if got, want := pt.exp(e), new(big.Int).Exp(g, e, m); got.Cmp(want) != 0 {
			t.Fatalf("exponent %x: got %x, want %x", e, got, want)
		}
	}
}

// TestTableGrowsWithUse: a family serves its small table until its uses
// reach the threshold, then the wide one, with the same results; the
// threshold is where the wide table pays for itself (about 490 uses for
// 2048-bit encryption, 400 for v).
func TestTableGrowsWithUse(t *testing.T) {
	_, _, sk := testKeys(t)
	g, err := rand.Int(rand.Reader, sk.NS1) // a base of its own: a fresh family
	if err != nil {
		t.Fatal(err)
	}
	bits := sk.randBits()
	first := tableFor(g, sk.NS1, bits, encMaxWindow, 0)
	if _, ok := first.(*powerTable); !ok {
		t.Fatalf("first table is %T, want the small *powerTable", first)
	}
	tablesMu.Lock()
	f := tables[tableKey{digest: familyDigest(g, sk.NS1), bits: bits, maxW: encMaxWindow}]
	tablesMu.Unlock()
	if f == nil || f.wideAfter <= 1 {
		t.Fatalf("family %+v: want a threshold above 1", f)
	}
	if tab := tableFor(g, sk.NS1, bits, encMaxWindow, f.wideAfter-1); tab != first {
		t.Fatalf("below the threshold: %T, want the small table", tab)
	}
	wide := tableFor(g, sk.NS1, bits, encMaxWindow, 1)
	if _, ok := wide.(*fixedBase); !ok {
		t.Fatalf("at the threshold: %T, want the wide *fixedBase", wide)
	}
	e := randPlain(t, &sk.PublicKey)
	if a, b := first.exp(e), wide.exp(e); a.Cmp(b) != 0 {
		t.Fatal("small and wide tables disagree")
	}
	// The documented thresholds at 2048 bits (64-word n^2).
	for _, c := range []struct {
		bits, maxW int
		lo, hi     int64
	}{{2048, encMaxWindow, 400, 600}, {4096 + challengeBits + statBits + 1, vWindow, 300, 500}} {
		saved, build := wideCost(c.bits, windowFor(c.bits, 64, c.maxW), smallWindow(c.bits))
		if n := (build + saved - 1) / saved; n < c.lo || n > c.hi {
			t.Errorf("%d-bit exponents: wide table after %d uses", c.bits, n)
		}
	}
}

// TestEncryptManyBuildsWide: a batch that pays for the wide table gets it
// before the workers start, and so does PrecomputeFor with such a count; a
// small one does not.
func TestEncryptManyBuildsWide(t *testing.T) {
	sk, err := GenerateKey(rand.Reader, testBits) // a key of its own: fresh tables
	if err != nil {
		t.Fatal(err)
	}
	pk := &sk.PublicKey
	ms := []*big.Int{big.NewInt(1), big.NewInt(2)}
	cs, err := pk.EncryptMany(rand.Reader, ms)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pk.hTable(0).(*powerTable); !ok {
		t.Fatal("two encryptions built the wide table")
	}
	tablesMu.Lock()
	after := tables[tableKey{digest: familyDigest(pk.H, pk.NS1), bits: pk.randBits(), maxW: encMaxWindow}].wideAfter
	tablesMu.Unlock()
	many := make([]*big.Int, after)
	for i := range many {
		many[i] = ms[i%2]
	}
	cs2, err := pk.EncryptMany(rand.Reader, many)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pk.hTable(0).(*fixedBase); !ok {
		t.Fatalf("a batch of %d did not build the wide table", after)
	}
	// PrecomputeFor counts the encryptions announced.
	sk3, err := GenerateKey(rand.Reader, testBits)
	if err != nil {
		t.Fatal(err)
	}
	sk3.PrecomputeFor(2)
	if _, ok := sk3.hTable(0).(*powerTable); !ok {
		t.Fatal("PrecomputeFor(2) built the wide table")
	}
	sk3.PrecomputeFor(int(after))
	if _, ok := sk3.hTable(0).(*fixedBase); !ok {
		t.Fatalf("PrecomputeFor(%d) did not build the wide table", after)
	}
	for i, c := range append(cs, cs2[:2]...) {
		if got, err := sk.Decrypt(c); err != nil || got.Cmp(ms[i%2]) != 0 {
			t.Fatalf("ciphertext %d: %v %v", i, got, err)
		}
	}
}

// TestPrecomputeTables: the key's wide tables exist right after
// PrecomputeTables, encryption and share proofs still check with them,
// and a budget too small for them says so instead of building them.
func TestPrecomputeTables(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	prev := SetFixedBaseBudget(0)
	if tpk.PrecomputeTables() {
		t.Fatal("tables reported built with a zero budget")
	}
	SetFixedBaseBudget(prev)
	if !tpk.PrecomputeTables() {
		t.Fatal("the wide tables were not built within the default budget")
	}
	if _, ok := tpk.hTable(0).(*fixedBase); !ok {
		t.Fatal("no wide encryption table after PrecomputeTables")
	}
	if _, ok := tableFor(tpk.V, tpk.ns1(), tpk.rhoBits()+1, vWindow, 0).(*fixedBase); !ok {
		t.Fatal("no wide v table after PrecomputeTables")
	}
	m := big.NewInt(77)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m)}
	d, err := shares[0].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tpk.VerifyShare(cs, d, testCtx); err != nil {
		t.Fatalf("proof with the wide v table: %v", err)
	}
}
