package paillier

import (
	"crypto/sha256"
	"math/big"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cohortdm/cohort/paillier/internal/mont"
)

// fixedBase is a fixed-base exponentiation table (the "fixed-base windowing"
// of Menezes, van Oorschot and Vanstone, Handbook of Applied Cryptography,
// §14.6.3, without the squarings): element (i, j) holds g^(j·2^(w·i)) mod m
// for j = 1..2^w−1 and every w-bit window i of an exponent of up to bits
// bits. An exponentiation then costs one modular multiplication per
// non-zero window and no squarings.
//
// Elements are stored as exactly k = len(m.Bits()) little-endian words each,
// in one slab per row. (The first version kept each element as the big.Int
// that Mod left behind, whose buffer still had the capacity of the
// double-length product: twice the documented memory.) They are in
// Montgomery form (package mont): the modulus (n^(s+1)) is odd, and a
// Montgomery multiplication replaces math/big's Mul and QuoRem, two
// thirds of whose time was the division (docs/boost.md, "Time per tree").
//
// The slabs are one anonymous mapping outside the Go heap (newSlab),
// unmapped by a cleanup once the table is unreachable (evicted and no
// exponentiation using it). On the heap, a node's two wide tables (80 MiB
// at 2048 bits, live for the process's life) counted towards the
// collector's pacing: with GOGC=100 the heap grows to twice the live heap
// between collections, so the tables cost their size again in garbage
// headroom, and a node with them sat near 200 MiB anonymous RSS
// (docs/runtime.md, "Memory flat"). Outside it they cost their own size,
// and the collector neither scans nor counts them. They hold no pointers.
type fixedBase struct {
	g    *big.Int // the base, for exponents longer than the table
	m    *big.Int
	mm   *mont.Modulus
	w    int
	bits int
	k    int          // words per element
	rows [][]big.Word // rows[i][(j−1)·k : j·k] = g^(j·2^(w·i))·R mod m
}

// mappedTableBytes is the memory of the tables' slabs mapped outside the
// Go heap and not yet unmapped.
var mappedTableBytes atomic.Int64

// MappedFixedBaseBytes returns the memory the process's fixed-base tables
// hold outside the Go heap (mapped, not yet released): what RSS holds
// besides the Go runtime's own figures, so that a node can report it.
func MappedFixedBaseBytes() int64 { return mappedTableBytes.Load() }

// allocSlab returns the zeroed slab of a table of words words: mapped
// outside the heap, with a cleanup on owner that unmaps it once owner is
// unreachable, or from the heap where no mapping is to be had.
func allocSlab(owner *fixedBase, words int) []big.Word {
	slab := newSlab(words)
	if slab == nil {
		return make([]big.Word, words)
	}
	n := int64(words) * wordBytes
	mappedTableBytes.Add(n)
	runtime.AddCleanup(owner, func(s []big.Word) {
		freeSlab(s)
		mappedTableBytes.Add(-n)
	}, slab)
	return slab
}

const wordBytes = 4 << (^uint(0) >> 63)

// tableBytes is the memory of a table for exponents of bits bits, window w
// and elements of k words: the slabs plus one slice header per row. It is
// what tableFor charges to the budget; BenchmarkFixedBaseMemory measures
// the real growth, the slab rounded up to whole pages (the heap's size
// classes added up to 2 % when the rows were on the heap).
func tableBytes(bits, w, k int) int64 {
	nw := int64((bits + w - 1) / w)
	return nw * (int64(1<<w-1)*int64(k)*wordBytes + 24)
}

// maxTableBytes caps one table, whatever the key: the window shrinks until
// the table fits. Within MaxCiphertextBits (an n^(s+1) of 16384 bits) some
// window always fits (v at s = 3, 4096 bits: 3 bits, 76 MiB).
const maxTableBytes = 80 << 20

// windowFor returns the widest window in 1..maxW whose table for exponents
// of bits bits and elements of k words fits maxTableBytes, or 0.
func windowFor(bits, k, maxW int) int {
	for w := maxW; w >= 1; w-- {
		if tableBytes(bits, w, k) <= maxTableBytes {
			return w
		}
	}
	return 0
}

// newFixedBase builds the table of g modulo m, which must be odd (every
// modulus here is a power of the odd n).
func newFixedBase(g, m *big.Int, bits, w int) *fixedBase {
	nw := (bits + w - 1) / w
	mm := mont.New(m)
	k := mm.Words()
	fb := &fixedBase{g: new(big.Int).Set(g), m: m, mm: mm, w: w, bits: nw * w, k: k, rows: make([][]big.Word, nw)}
	size := 1<<w - 1
	slab := allocSlab(fb, nw*size*k)
	base := new(big.Int).Mod(g, m)
	// Rows are independent once their base is known; compute the bases
	// serially (w squarings each), then fill the rows in parallel.
	bases := make([][]big.Word, nw)
	for i := 0; i < nw; i++ {
		bases[i] = mm.ToForm(base)
		for j := 0; j < w; j++ {
			base.Mul(base, base)
			base.Mod(base, m)
		}
	}
	parallel(nw, func(i int) {
		row := slab[i*size*k : (i+1)*size*k : (i+1)*size*k]
		copy(row, bases[i])
		t := make([]big.Word, mm.ScratchWords())
		for j := 1; j < size; j++ {
			mm.Mul(row[j*k:(j+1)*k], row[(j-1)*k:j*k], bases[i], t)
		}
		fb.rows[i] = row
	})
	return fb
}

// elem returns element (i, d), in Montgomery form, sharing the slab.
func (fb *fixedBase) elem(i int, d uint) []big.Word {
	lo := (int(d) - 1) * fb.k
	return fb.rows[i][lo : lo+fb.k : lo+fb.k]
}

// exp returns g^e mod m for 0 <= e < 2^bits; larger exponents fall back to
// a plain exponentiation.
func (fb *fixedBase) exp(e *big.Int) *big.Int {
	if e.Sign() < 0 || e.BitLen() > fb.bits {
		return new(big.Int).Exp(fb.g, e, fb.m)
	}
	words := e.Bits()
	mask := uint(1)<<fb.w - 1
	nw := (e.BitLen() + fb.w - 1) / fb.w
	// The product of the forms is the form of the product: one
	// multiplication per non-zero window, one conversion at the end.
	acc := make([]big.Word, fb.k)
	t := make([]big.Word, fb.mm.ScratchWords())
	first := true
	for i := 0; i < nw; i++ {
		d := window(words, i*fb.w, fb.w) & mask
		if d == 0 {
			continue
		}
		if first {
			copy(acc, fb.elem(i, d))
			first = false
			continue
		}
		fb.mm.Mul(acc, acc, fb.elem(i, d), t)
	}
	// The slab is unmapped once fb is unreachable: keep it until the last
	// element is read.
	runtime.KeepAlive(fb)
	if first {
		return big.NewInt(1) // e = 0
	}
	return fb.mm.FromForm(acc)
}

// powerTable holds g^(2^(w·i)) mod m for every w-bit window i of an
// exponent of up to bits bits: the first column of a fixedBase table, and
// all that the bucket method of Brickell, Gordon, McCurley and Wilson
// ("Fast exponentiation with precomputation", EUROCRYPT '92, §3) needs.
// Building it costs bits squarings (25 ms for a 2048-bit r at 2048-bit n);
// an exponentiation costs one multiplication per non-zero window plus
// 2·(2^w−1) to combine the buckets: about twice a fixedBase exponentiation
// at 9 bits, a third of a plain one. It is what a key gets first; the wide
// fixedBase follows once the key has been used enough to pay for it.
type powerTable struct {
	g, m *big.Int
	mm   *mont.Modulus
	w    int
	bits int
	k    int
	pows []big.Word // pows[i·k : (i+1)·k] = g^(2^(w·i))·R mod m (Montgomery form)
}

// smallWindow returns the window that minimises a powerTable
// exponentiation's multiplications for exponents of bits bits.
func smallWindow(bits int) int {
	best, bestCost := 1, 0
	for w := 1; w <= 10; w++ {
		if c := (bits+w-1)/w + 2*(1<<w-1); w == 1 || c < bestCost {
			best, bestCost = w, c
		}
	}
	return best
}

func smallTableBytes(bits, w, k int) int64 {
	return int64((bits+w-1)/w) * int64(k) * wordBytes
}

// newPowerTable builds the table of g modulo m, which must be odd.
func newPowerTable(g, m *big.Int, bits, w int) *powerTable {
	nw := (bits + w - 1) / w
	mm := mont.New(m)
	k := mm.Words()
	pt := &powerTable{g: new(big.Int).Set(g), m: m, mm: mm, w: w, bits: nw * w, k: k, pows: make([]big.Word, nw*k)}
	copy(pt.pows, mm.ToForm(new(big.Int).Mod(g, m)))
	t := make([]big.Word, mm.ScratchWords())
	for i := 1; i < nw; i++ {
		cur := pt.pows[i*k : (i+1)*k]
		copy(cur, pt.pows[(i-1)*k:i*k])
		for j := 0; j < w; j++ {
			mm.Mul(cur, cur, cur, t)
		}
	}
	return pt
}

// exp returns g^e mod m for 0 <= e < 2^bits by the bucket method: bucket d
// collects the powers whose window of e is d, and ∏ bucket_d^d is computed
// as the product of the running products from the top bucket down. Larger
// exponents fall back to a plain exponentiation.
func (pt *powerTable) exp(e *big.Int) *big.Int {
	if e.Sign() < 0 || e.BitLen() > pt.bits {
		return new(big.Int).Exp(pt.g, e, pt.m)
	}
	mask := uint(1)<<pt.w - 1
	buckets := make([][]big.Word, mask+1) // nil stands for 1
	words := e.Bits()
	t := make([]big.Word, pt.mm.ScratchWords())
	mulInto := func(acc, x []big.Word) []big.Word { // acc·x in form, acc nil = 1
		if acc == nil {
			return append([]big.Word(nil), x...)
		}
		pt.mm.Mul(acc, acc, x, t)
		return acc
	}
	for i := 0; i*pt.w < e.BitLen(); i++ {
		if d := window(words, i*pt.w, pt.w) & mask; d != 0 {
			buckets[d] = mulInto(buckets[d], pt.pows[i*pt.k:(i+1)*pt.k])
		}
	}
	var running, acc []big.Word
	for d := mask; d >= 1; d-- {
		if buckets[d] != nil {
			running = mulInto(running, buckets[d])
		}
		if running != nil {
			acc = mulInto(acc, running)
		}
	}
	if acc == nil {
		return big.NewInt(1) // e = 0
	}
	return pt.mm.FromForm(acc)
}

// expTable is a fixed-base table: a powerTable or a fixedBase.
type expTable interface {
	exp(e *big.Int) *big.Int
}

// Tables are cached process-wide per family (base, modulus, exponent
// length, widest window), so that the many copies and decodings of one key
// share them, and evicted least-recently-used first when the next table
// would exceed the budget. The budget counts tables in the cache; a table
// evicted while an exponentiation still uses it lives until that call
// returns.
//
// A family starts with its small powerTable and counts its uses; once they
// reach wideAfter, the use that crosses it builds the wide fixedBase (the
// others go on with the small table meanwhile), which every later use
// takes. wideAfter is where the wide table's build has paid for itself:
// its cost in multiplications over what it saves per exponentiation (490
// uses for the 2048-bit encryption table, 403 for v). A process that makes
// a few dozen exponentiations with a key (cohort demo: 87 encryptions and
// 39 v powers) never builds the 2.4 s of wide tables.
const defaultTableBudget = 256 << 20

type tableKey struct {
	digest [32]byte // SHA-256 of base and modulus
	bits   int
	maxW   int
}

type tableFamily struct {
	once      sync.Once
	small     *powerTable
	wideW     int   // the wide table's window, 0 if none fits
	wideAfter int64 // uses after which to build it; 0 = never
	uses      atomic.Int64
	wideState atomic.Int32 // 0 none, 1 claimed (building or refused)
	wide      atomic.Pointer[fixedBase]
	bytes     int64 // charged to the budget; under tablesMu
	stamp     uint64
}

var (
	tablesMu    sync.Mutex
	tables      = map[tableKey]*tableFamily{}
	tableTick   uint64
	tablesBytes int64 // sum of bytes over tables
	tableBudget atomic.Int64
)

func init() { tableBudget.Store(defaultTableBudget) }

// SetFixedBaseBudget sets the memory the process may keep in fixed-base
// tables (encryption bases H, verification base v) and returns the previous
// budget; the default is 256 MiB, enough for the wide 2048-bit encryption
// and verification tables of three keys (57 + 23 MiB each, measured); the
// small tables a key starts with take 0.2 and 0.4 MiB. Tables beyond the
// budget evict the least recently used ones; a wide table that does not fit
// is not built (the small one goes on serving), and a key whose small table
// does not fit runs without one (a full exponentiation: several times
// slower). A budget of 0 disables the tables.
func SetFixedBaseBudget(bytes int64) int64 {
	bytes = max(bytes, 0)
	tablesMu.Lock()
	defer tablesMu.Unlock()
	prev := tableBudget.Swap(bytes)
	evictTables(0, nil)
	return prev
}

// evictTables drops least recently used tables other than keep until need
// more bytes fit in the budget. tablesMu must be held.
func evictTables(need int64, keep *tableFamily) {
	budget := tableBudget.Load()
	for tablesBytes+need > budget {
		var oldest tableKey
		found := false
		for key, v := range tables {
			if v != keep && (!found || v.stamp < tables[oldest].stamp) {
				oldest, found = key, true
			}
		}
		if !found {
			return
		}
		tablesBytes -= tables[oldest].bytes
		delete(tables, oldest)
	}
}

// wideCost returns the multiplications a wide table of window w saves per
// exponentiation over a small one of window sw, and its build cost.
func wideCost(bits, w, sw int) (saved, build int64) {
	perExp := func(w int) int64 { // non-zero windows of a uniform exponent
		nw := int64((bits + w - 1) / w)
		return nw - nw>>w
	}
	saved = perExp(sw) + 2*(1<<sw-1) - perExp(w)
	build = int64((bits+w-1)/w)*int64(1<<w-2) + int64(bits)
	return saved, build
}

// tableFor returns the table of base modulo m for exponents of bits bits
// (window at most maxW), counting uses exponentiations to come: the small
// powerTable until the family's uses reach its threshold, the wide
// fixedBase after. It returns nil if not even the small table fits the
// budget.
func tableFor(base, m *big.Int, bits, maxW int, uses int64) expTable {
	key := tableKey{digest: familyDigest(base, m), bits: bits, maxW: maxW}
	k := len(m.Bits())
	sw := smallWindow(bits)
	tablesMu.Lock()
	tableTick++
	f, ok := tables[key]
	if !ok {
		size := smallTableBytes(bits, sw, k)
		if size > tableBudget.Load() {
			tablesMu.Unlock()
			return nil
		}
		evictTables(size, nil)
		f = &tableFamily{bytes: size, wideW: windowFor(bits, k, maxW)}
		if f.wideW > 0 {
			if saved, build := wideCost(bits, f.wideW, sw); saved > 0 {
				f.wideAfter = (build + saved - 1) / saved
			}
		}
		tables[key] = f
		tablesBytes += size
	}
	f.stamp = tableTick
	tablesMu.Unlock()
	f.once.Do(func() { f.small = newPowerTable(base, m, bits, sw) })
	if wide := f.wide.Load(); wide != nil {
		return wide
	}
	n := f.uses.Add(uses)
	if f.wideAfter == 0 || n < f.wideAfter || !f.wideState.CompareAndSwap(0, 1) {
		return f.small
	}
	if wide := f.buildWide(key, base, m, bits, k); wide != nil {
		return wide
	}
	return f.small
}

// familyDigest is SHA-256 of base and modulus.
func familyDigest(base, m *big.Int) [32]byte {
	h := sha256.New()
	h.Write(base.Bytes())
	h.Write([]byte{0})
	h.Write(m.Bytes())
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// buildWide builds the family's wide table if it fits the budget (evicting
// other families for it) and the family is still cached.
func (f *tableFamily) buildWide(key tableKey, base, m *big.Int, bits, k int) *fixedBase {
	size := tableBytes(bits, f.wideW, k)
	tablesMu.Lock()
	if tables[key] != f || f.bytes+size > tableBudget.Load() {
		tablesMu.Unlock()
		return nil
	}
	evictTables(size, f)
	f.bytes += size
	tablesBytes += size
	tablesMu.Unlock()
	wide := newFixedBase(base, m, bits, f.wideW)
	f.wide.Store(wide)
	return wide
}

// window extracts w bits starting at bit position pos of the little-endian
// word slice.
func window(words []big.Word, pos, w int) uint {
	const wb = 32 << (^uint(0) >> 63)
	idx := pos / wb
	off := pos % wb
	if idx >= len(words) {
		return 0
	}
	v := uint(words[idx]) >> off
	if off+w > wb && idx+1 < len(words) {
		v |= uint(words[idx+1]) << (wb - off)
	}
	return v
}

// multiExp returns ∏ bases[j]^exps[j] mod m for non-negative exponents
// with Straus's interleaved 4-bit windows: the squarings are shared by all
// bases, so for k bases of b-bit exponents it costs b squarings plus about
// k·(b/4 + 14) multiplications instead of k·(b + b/4).
func multiExp(bases, exps []*big.Int, m *big.Int) *big.Int {
	const w = 4
	maxBits := 0
	for _, e := range exps {
		maxBits = max(maxBits, e.BitLen())
	}
	tables := make([][]*big.Int, len(bases))
	for j, b := range bases {
		t := make([]*big.Int, 1<<w)
		t[1] = new(big.Int).Mod(b, m)
		for k := 2; k < 1<<w; k++ {
			t[k] = new(big.Int).Mul(t[k-1], t[1])
			t[k].Mod(t[k], m)
		}
		tables[j] = t
	}
	acc := big.NewInt(1)
	prod, quo := new(big.Int), new(big.Int)
	started := false
	nw := (maxBits + w - 1) / w
	for i := nw - 1; i >= 0; i-- {
		if started {
			for k := 0; k < w; k++ {
				prod.Mul(acc, acc)
				quo.QuoRem(prod, m, acc)
			}
		}
		for j, e := range exps {
			d := window(e.Bits(), i*w, w) & (1<<w - 1)
			if d == 0 {
				continue
			}
			if !started {
				acc.Set(tables[j][d])
				started = true
				continue
			}
			prod.Mul(acc, tables[j][d])
			quo.QuoRem(prod, m, acc)
		}
	}
	return acc
}
