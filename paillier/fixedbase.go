package paillier

import (
	"crypto/sha256"
	"math/big"
	"sync"
	"sync/atomic"
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
// double-length product: twice the documented memory.)
type fixedBase struct {
	g    *big.Int // the base, for exponents longer than the table
	m    *big.Int
	w    int
	bits int
	k    int          // words per element
	rows [][]big.Word // rows[i][(j−1)·k : j·k] = g^(j·2^(w·i)) mod m
}

const wordBytes = 4 << (^uint(0) >> 63)

// tableBytes is the memory of a table for exponents of bits bits, window w
// and elements of k words: the slabs plus one slice header per row. It is
// what tableFor charges to the budget; BenchmarkFixedBaseMemory measures
// the real heap growth, which is at most 2 % more (allocator size classes:
// a 32 256-byte row of the 2048-bit v table occupies 32 KiB).
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

func newFixedBase(g, m *big.Int, bits, w int) *fixedBase {
	nw := (bits + w - 1) / w
	k := len(m.Bits())
	fb := &fixedBase{g: new(big.Int).Set(g), m: m, w: w, bits: nw * w, k: k, rows: make([][]big.Word, nw)}
	size := 1<<w - 1
	base := new(big.Int).Mod(g, m)
	// Rows are independent once their base is known; compute the bases
	// serially (w squarings each), then fill the rows in parallel.
	bases := make([]*big.Int, nw)
	for i := 0; i < nw; i++ {
		bases[i] = new(big.Int).Set(base)
		for j := 0; j < w; j++ {
			base.Mul(base, base)
			base.Mod(base, m)
		}
	}
	parallel(nw, func(i int) {
		row := make([]big.Word, size*k)
		cur := new(big.Int).Set(bases[i])
		prod, quo := new(big.Int), new(big.Int)
		for j := 0; j < size; j++ {
			copy(row[j*k:(j+1)*k], cur.Bits()) // the rest stays zero
			if j+1 < size {
				prod.Mul(cur, bases[i])
				quo.QuoRem(prod, m, cur)
			}
		}
		fb.rows[i] = row
	})
	return fb
}

// elem returns element (i, d) as a read-only big.Int sharing the slab.
func (fb *fixedBase) elem(t *big.Int, i int, d uint) *big.Int {
	lo := (int(d) - 1) * fb.k
	return t.SetBits(fb.rows[i][lo : lo+fb.k : lo+fb.k])
}

// exp returns g^e mod m for 0 <= e < 2^bits; larger exponents fall back to
// a plain exponentiation.
func (fb *fixedBase) exp(e *big.Int) *big.Int {
	if e.Sign() < 0 || e.BitLen() > fb.bits {
		return new(big.Int).Exp(fb.g, e, fb.m)
	}
	acc := big.NewInt(1)
	words := e.Bits()
	mask := uint(1)<<fb.w - 1
	nw := (e.BitLen() + fb.w - 1) / fb.w
	first := true
	// Reused product and quotient buffers: no allocation per step. t only
	// ever aliases the table and is only read.
	prod, quo, t := new(big.Int), new(big.Int), new(big.Int)
	for i := 0; i < nw; i++ {
		d := window(words, i*fb.w, fb.w) & mask
		if d == 0 {
			continue
		}
		if first {
			acc.Set(fb.elem(t, i, d))
			first = false
			continue
		}
		prod.Mul(acc, fb.elem(t, i, d))
		quo.QuoRem(prod, fb.m, acc)
	}
	return acc
}

// Tables are cached process-wide per (base, modulus, exponent length,
// window), so that the many copies and decodings of one key share one
// table, and evicted least-recently-used first when the next table would
// exceed the budget. The budget counts tables in the cache; a table evicted
// while an exponentiation still uses it lives until that call returns.
const defaultTableBudget = 256 << 20

type tableKey struct {
	digest [32]byte // SHA-256 of base and modulus
	bits   int
	window int
}

type tableEntry struct {
	once  sync.Once
	fb    *fixedBase
	bytes int64
	stamp uint64
}

var (
	tablesMu    sync.Mutex
	tables      = map[tableKey]*tableEntry{}
	tableTick   uint64
	tablesBytes int64 // sum of bytes over tables
	tableBudget atomic.Int64
)

func init() { tableBudget.Store(defaultTableBudget) }

// SetFixedBaseBudget sets the memory the process may keep in fixed-base
// tables (encryption bases H, verification base v) and returns the previous
// budget; the default is 256 MiB, enough for the 2048-bit encryption and
// verification tables of three keys (57 + 23 MiB each, measured). Tables
// beyond the budget evict the least recently used ones; a table larger than
// the whole budget is not built and its exponentiations run without one
// (a full exponentiation instead of one multiplication per window: several
// times slower). A budget of 0 disables the tables.
func SetFixedBaseBudget(bytes int64) int64 {
	bytes = max(bytes, 0)
	tablesMu.Lock()
	defer tablesMu.Unlock()
	prev := tableBudget.Swap(bytes)
	evictTables(0)
	return prev
}

// evictTables drops least recently used tables until need more bytes fit
// in the budget. tablesMu must be held.
func evictTables(need int64) {
	budget := tableBudget.Load()
	for tablesBytes+need > budget && len(tables) > 0 {
		var oldest tableKey
		first := true
		for key, v := range tables {
			if first || v.stamp < tables[oldest].stamp {
				oldest, first = key, false
			}
		}
		tablesBytes -= tables[oldest].bytes
		delete(tables, oldest)
	}
}

// tableFor returns the shared table of base modulo m for exponents of bits
// bits, with the widest window up to maxW that fits maxTableBytes, or nil if
// no window fits or the table exceeds the process budget.
func tableFor(base, m *big.Int, bits, maxW int) *fixedBase {
	k := len(m.Bits())
	w := windowFor(bits, k, maxW)
	if w == 0 {
		return nil
	}
	size := tableBytes(bits, w, k)
	h := sha256.New()
	h.Write(base.Bytes())
	h.Write([]byte{0})
	h.Write(m.Bytes())
	var key tableKey
	copy(key.digest[:], h.Sum(nil))
	key.bits, key.window = bits, w
	tablesMu.Lock()
	tableTick++
	e, ok := tables[key]
	if !ok {
		if size > tableBudget.Load() {
			tablesMu.Unlock()
			return nil
		}
		evictTables(size)
		e = &tableEntry{bytes: size}
		tables[key] = e
		tablesBytes += size
	}
	e.stamp = tableTick
	tablesMu.Unlock()
	e.once.Do(func() { e.fb = newFixedBase(base, m, bits, w) })
	return e.fb
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
