package psi

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	mrand "math/rand/v2"
)

// The pure pieces of the KKRT16 OPRF-based PSI (package doc, "Fast mode"),
// separate from its rounds and tested alone: digests, cuckoo hashing, the
// pseudorandom code, the PRG, bit-matrix transposition and the OPRF
// output.

const (
	// otWidth is KKRT's code width k in bits: the number of base OTs and
	// of columns of the extension matrix. See the package doc for why 512.
	otWidth = 512
	// otRowBytes is one row of the extension matrix (k bits).
	otRowBytes = otWidth / 8
	// otRowWords is one row in 64-bit words.
	otRowWords = otWidth / 64
	// otBlockRows is the number of matrix rows one AES block of a column
	// covers: the unit in which bins are counted and chunks cut.
	otBlockRows = 128
	// hashCount is the number of cuckoo hash functions.
	hashCount = 3
	// digestLen is the length of an element's digest: 128 bits.
	digestLen = 16
	// seedLen is each party's share of the joint seed.
	seedLen = 16
	// maxCuckooAttempts bounds the rehashes of a cuckoo table that fails
	// (each with keys derived from the joint seed and the attempt number).
	maxCuckooAttempts = 8
	// statSecurity is λ, the statistical security parameter in bits.
	statSecurity = 40
)

// binFactor is the cuckoo table's size over the receiver's set size for
// large sets: 1.27 bins per element with 3 hash functions and no stash,
// the setting of KKRT-style PSIs since Pinkas, Schneider, Weinert and
// Wieder (EUROCRYPT 2018), whose failure probability falls with n; below
// smallSet elements psi uses 2 bins per element, where failures are
// otherwise measurably frequent (2 in 10^4 at 100 elements in 128 bins).
const binFactor = 1.27

// smallSet is the set size below which the table has 2n bins.
const smallSet = 4096

// numBins is the number of cuckoo bins for a receiver's set of n:
// ⌈1.27·n⌉ (2n below 4096 elements) rounded up to a multiple of 128 (one
// AES block of every column), at least 128. Both parties compute it from
// the announced n.
func numBins(n int) int {
	m := int(math.Ceil(binFactor * float64(n)))
	if n < smallSet {
		m = 2 * n
	}
	m = (m + otBlockRows - 1) / otBlockRows * otBlockRows
	return max(m, otBlockRows)
}

// outLen is the length in bytes of an OPRF output compared across the
// parties: λ + log2(3·n_R·n_S) bits, rounded up, so that the chance of any
// false match among the 3·n_R·n_S comparisons is at most 2^-λ.
func outLen(nR, nS int) int {
	b := statSecurity + math.Log2(float64(hashCount)*float64(max(nR, 1))*float64(max(nS, 1)))
	return min(int(math.Ceil(b/8)), 16)
}

// otKeys are the public keys both parties derive from the joint seed:
// the pseudorandom code's AES keys (one per hash function) and the seed
// the OPRF output hashes in.
type otKeys struct {
	seed [32]byte
	code [hashCount]cipher.Block
}

// jointSeed combines both parties' seed shares: SHA-256 of a label, the
// domain tag's key and the receiver's then the sender's share.
func jointSeed(d digester, recv, send []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("cohort-psi-ot-v1:seed:"))
	h.Write(d.key[:])
	h.Write(recv)
	h.Write(send)
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// derive returns a 16-byte key for label and index from the seed.
func derive(seed [32]byte, label string, idx ...int) []byte {
	h := sha256.New()
	h.Write(seed[:])
	h.Write([]byte(label))
	for _, i := range idx {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		h.Write(b[:])
	}
	return h.Sum(nil)[:16]
}

func newOTKeys(seed [32]byte) *otKeys {
	k := &otKeys{seed: seed}
	for h := range hashCount {
		b, err := aes.NewCipher(derive(seed, "code", h))
		if err != nil {
			panic("psi: internal error: AES-128 key: " + err.Error())
		}
		k.code[h] = b
	}
	return k
}

// codeWord writes C(d, h) to row: the k-bit code word is
// AES_{K_h}(d′) ‖ AES_{K_h}(d′+1) ‖ AES_{K_h}(d′+2) ‖ AES_{K_h}(d′+3),
// d′ being d with the two low bits of its last byte cleared (so the four
// AES inputs of distinct d′ never overlap; two digests share a d′ with
// probability 2^-126), i.e. 64 bytes of the AES-CTR keystream of K_h
// from d′ (computed block by block: a CTR object per code word costs
// more than the AES). A pseudorandom code (KKRT16 §3 instantiates
// it as a random oracle; a PRP on distinct inputs is one up to the
// PRP/PRF switch). The hash-function index selects the key, so one
// digest under two hash functions gives unrelated code words (the OPRF
// input is x‖h).
func (k *otKeys) codeWord(row []byte, d *[digestLen]byte, h int) {
	in := *d
	for j := range otRowWords / 2 {
		in[digestLen-1] = d[digestLen-1]&^3 | byte(j) // d′ + j
		k.code[h].Encrypt(row[16*j:16*j+16], in[:])
	}
}

// cuckooHasher maps a digest to its 3 candidate bins.
type cuckooHasher struct {
	b cipher.Block
	m uint64
}

func newCuckooHasher(seed [32]byte, attempt, m int) cuckooHasher {
	b, err := aes.NewCipher(derive(seed, "cuckoo", attempt))
	if err != nil {
		panic("psi: internal error: AES-128 key: " + err.Error())
	}
	return cuckooHasher{b: b, m: uint64(m)}
}

// bins returns the 3 bins of d: the first three 32-bit words of
// AES_K(d), each reduced to [0, m) by multiplication (Lemire).
func (c cuckooHasher) bins(d *[digestLen]byte) [hashCount]int {
	var e [16]byte
	c.b.Encrypt(e[:], d[:])
	var out [hashCount]int
	for h := range hashCount {
		w := uint64(binary.LittleEndian.Uint32(e[4*h:]))
		out[h] = int((w * c.m) >> 32)
	}
	return out
}

// cuckooTable is the receiver's placement: bin i holds item[i]−1 (0:
// empty) placed by hash function fn[i].
type cuckooTable struct {
	item []int32
	fn   []uint8
}

// errCuckoo is a failed insertion: the caller rehashes with new keys.
var errCuckoo = errors.New("psi: cuckoo insertion failed")

// cuckoo places every digest in one of its 3 bins (cand[i]), one per
// bin, by random walk (evict a random other candidate, with choices drawn
// from walk), at most maxKicks evictions per insertion; on failure it
// returns errCuckoo, never a table missing an element.
func cuckoo(cand [][hashCount]int32, m int, walk *mrand.Rand) (*cuckooTable, error) {
	t := &cuckooTable{item: make([]int32, m), fn: make([]uint8, m)}
	maxKicks := 100 + 10*bits.Len(uint(len(cand)))
	for i := range cand {
		cur, curFn := int32(i+1), -1
		placed := false
		for kick := 0; kick <= maxKicks; kick++ {
			c := &cand[cur-1]
			// An empty candidate takes it.
			for h, b := range c {
				if t.item[b] == 0 {
					t.item[b], t.fn[b] = cur, uint8(h)
					placed = true
					break
				}
			}
			if placed {
				break
			}
			// Evict from a random candidate other than the one it left.
			h := walk.IntN(hashCount)
			if h == curFn {
				h = (h + 1 + walk.IntN(hashCount-1)) % hashCount
			}
			b := c[h]
			oldFn := int(t.fn[b])
			cur, t.item[b] = t.item[b], cur
			t.fn[b] = uint8(h)
			curFn = oldFn
		}
		if !placed {
			return nil, errCuckoo
		}
	}
	return t, nil
}

// placeCuckoo cuckoo-hashes the digests into m bins with the hash
// functions of attempt from, from+1, ... (keys and walk derived from the
// joint seed and the attempt), and returns the table and the attempt that
// succeeded, or an error after maxCuckooAttempts: an element is never
// silently left out.
func placeCuckoo(ds [][digestLen]byte, seed [32]byte, m, from int) (*cuckooTable, int, error) {
	cand := make([][hashCount]int32, len(ds))
	for attempt := from; attempt < maxCuckooAttempts; attempt++ {
		hs := newCuckooHasher(seed, attempt, m)
		_ = parallel(len(ds), func(lo, hi int) error {
			for i := lo; i < hi; i++ {
				for h, b := range hs.bins(&ds[i]) {
					cand[i][h] = int32(b)
				}
			}
			return nil
		})
		var ws [32]byte
		copy(ws[:], derive(seed, "walk", attempt))
		t, err := cuckoo(cand, m, mrand.New(mrand.NewChaCha8(ws)))
		if err == nil {
			return t, attempt, nil
		}
	}
	return nil, 0, fmt.Errorf("%w: %d elements into %d bins, attempts %d to %d", errCuckoo, len(ds), m, from, maxCuckooAttempts-1)
}

// extendReceiver is the OPRF receiver's extension step for cnt rows
// (a multiple of 128) starting at row lo: given the rows C(r_i) in code,
// it returns the columns u^j = G(k0_j) ⊕ G(k1_j) ⊕ c^j (column j at
// [j·cnt/8, (j+1)·cnt/8)) and leaves the rows t_i of t^j = G(k0_j) in
// code. u and t are buffers of at least cnt·otRowBytes bytes (u is
// returned, resliced; t is scratch). On every core.
func extendReceiver(code []byte, cnt int, k0, k1 []cipher.Block, lo int, u, t []byte) []byte {
	u, t = u[:cnt*otRowBytes], t[:cnt*otRowBytes]
	rowsToCols(u, code, cnt)
	cb := cnt / 8
	_ = parallel(otWidth, func(jlo, jhi int) error {
		for j := jlo; j < jhi; j++ {
			tj, uj := t[j*cb:(j+1)*cb], u[j*cb:(j+1)*cb]
			prg(tj, k0[j], uint64(lo/otBlockRows))
			subtleXor(uj, tj)
			prgXor(uj, k1[j], uint64(lo/otBlockRows))
		}
		return nil
	})
	colsToRows(code, t, cnt)
	return u
}

// extendSender is the OPRF sender's: from the columns u^j of cnt rows at
// row lo (overwritten), it writes the rows q_i of q^j = G(k_{s_j}) ⊕
// s_j·u^j, i.e. q_i = t_i ⊕ (C(r_i) ∧ s), to q. On every core.
func extendSender(q, u []byte, cnt int, ks []cipher.Block, choice []int, lo int) {
	cb := cnt / 8
	_ = parallel(otWidth, func(jlo, jhi int) error {
		for j := jlo; j < jhi; j++ {
			col := u[j*cb : (j+1)*cb]
			if choice[j] == 1 {
				prgXor(col, ks[j], uint64(lo/otBlockRows))
			} else {
				prg(col, ks[j], uint64(lo/otBlockRows))
			}
		}
		return nil
	})
	colsToRows(q, u, cnt)
}

// binEntry is one value the sender computes: for element k (in sent
// order) and hash function h, entry e = k·3+h, its bin b and its digest.
type binEntry struct {
	d [digestLen]byte
	e int32
	b int32
}

// bucketBins computes the 3 bins of every digest (on every core) and
// sorts the entries by the chunk of rows their bin falls in (counting
// sort), so the sender can use each chunk of the extension matrix for
// exactly the values that need it, reading entries in order.
func bucketBins(ds [][digestLen]byte, hs cuckooHasher, m, rows int) [][]binEntry {
	binOf := make([][hashCount]int32, len(ds))
	_ = parallel(len(ds), func(lo, hi int) error {
		for k := lo; k < hi; k++ {
			for h, b := range hs.bins(&ds[k]) {
				binOf[k][h] = int32(b)
			}
		}
		return nil
	})
	nc := numChunks(m, rows)
	count := make([]int, nc)
	for k := range binOf {
		for _, b := range binOf[k] {
			count[int(b)/rows]++
		}
	}
	all := make([]binEntry, hashCount*len(ds))
	out := make([][]binEntry, nc)
	off := 0
	for c, n := range count {
		out[c] = all[off : off : off+n]
		off += n
	}
	for k := range binOf {
		for h, b := range binOf[k] {
			c := int(b) / rows
			out[c] = append(out[c], binEntry{d: ds[k], e: int32(hashCount*k + h), b: b})
		}
	}
	return out
}

// subtleXor sets dst ^= src (equal lengths).
func subtleXor(dst, src []byte) { subtle.XORBytes(dst, dst, src) }

// prgCiphers expands each PRG seed into its AES-128 key schedule once.
func prgCiphers(seeds [][]byte) []cipher.Block {
	out := make([]cipher.Block, len(seeds))
	for j, k := range seeds {
		b, err := aes.NewCipher(k)
		if err != nil {
			panic("psi: internal error: AES-128 key: " + err.Error())
		}
		out[j] = b
	}
	return out
}

// prg fills dst with the AES-CTR keystream of b starting at 128-bit
// block ctr: the PRG G of the extension, where bit r of a column is row r.
func prg(dst []byte, b cipher.Block, ctr uint64) {
	clear(dst)
	prgXor(dst, b, ctr)
}

// prgXor xors the keystream of prg(b, ctr) into dst.
func prgXor(dst []byte, b cipher.Block, ctr uint64) {
	var iv [16]byte
	binary.BigEndian.PutUint64(iv[8:], ctr)
	cipher.NewCTR(b, iv[:]).XORKeyStream(dst, dst)
}

// transpose64 transposes a 64×64 bit matrix in place: bit c of a[r]
// (least significant first) becomes bit r of a[c]. Six rounds of block
// swaps, each exchanging the off-diagonal halves of 2j×2j blocks.
func transpose64(a *[64]uint64) {
	j := 32
	m := uint64(0x00000000FFFFFFFF)
	for j != 0 {
		for k := 0; k < 64; k = (k + j + 1) &^ j {
			t := ((a[k] >> uint(j)) ^ a[k+j]) & m
			a[k+j] ^= t
			a[k] ^= t << uint(j)
		}
		j >>= 1
		m ^= m << uint(j)
	}
}

// colsToRows transposes a chunk of the extension matrix from columns to
// rows: cols holds otWidth columns of n/8 bytes each (bit r of a column,
// LSB first, is row r), rows receives n rows of otRowBytes (bit c of a
// row, LSB first, is column c). n is a multiple of 128. On every core.
func colsToRows(rows, cols []byte, n int) {
	colBytes := n / 8
	_ = parallel(n/64, func(lo, hi int) error {
		var a [64]uint64
		for half := lo; half < hi; half++ { // rows 64·half .. 64·half+63
			for g := range otRowWords { // columns 64·g .. 64·g+63
				for c := range 64 {
					a[c] = binary.LittleEndian.Uint64(cols[(64*g+c)*colBytes+8*half:])
				}
				transpose64(&a)
				for r := range 64 {
					binary.LittleEndian.PutUint64(rows[(64*half+r)*otRowBytes+8*g:], a[r])
				}
			}
		}
		return nil
	})
}

// rowsToCols is colsToRows's inverse.
func rowsToCols(cols, rows []byte, n int) {
	colBytes := n / 8
	_ = parallel(n/64, func(lo, hi int) error {
		var a [64]uint64
		for half := lo; half < hi; half++ {
			for g := range otRowWords {
				for r := range 64 {
					a[r] = binary.LittleEndian.Uint64(rows[(64*half+r)*otRowBytes+8*g:])
				}
				transpose64(&a)
				for c := range 64 {
					binary.LittleEndian.PutUint64(cols[(64*g+c)*colBytes+8*half:], a[c])
				}
			}
		}
		return nil
	})
}

// oprfBuf holds the input of F: the joint seed, a bin index and a row.
type oprfBuf [32 + 8 + otRowBytes]byte

func newOPRFBuf(seed *[32]byte) *oprfBuf {
	var b oprfBuf
	copy(b[:32], seed[:])
	return &b
}

// row is where the caller puts the k-bit row v.
func (b *oprfBuf) row() []byte { return b[40:] }

// out writes F(bin, v) for the row v in b to out[:l]: SHA-256 of the
// joint seed, the bin index and v, truncated (KKRT16's correlation-robust
// hash H, with the bin index as the OPRF instance).
func (b *oprfBuf) out(out []byte, bin int, l int) {
	binary.LittleEndian.PutUint64(b[32:], uint64(bin))
	s := sha256.Sum256(b[:])
	copy(out[:l], s[:l])
}

// idxTable is an open-addressing hash table from pseudorandom 64-bit
// keys (prefixes of digests or OPRF outputs) to int32 values, with linear
// probing: several entries may share a key (or its low 32 bits, which is
// all a slot keeps), and the caller checks the full value of each
// candidate. Faster than a Go map for the million lookups of the
// matching step (one cache line per probe), and sized once, at load ≤ ½.
type idxTable struct {
	slots []idxSlot
	shift uint
}

type idxSlot struct {
	key uint32
	val int32 // value+1; 0 marks an empty slot
}

func newIdxTable(n int) *idxTable {
	b := bits.Len(uint(2 * n)) // 2^b > 2n: load < ½
	return &idxTable{slots: make([]idxSlot, 1<<b), shift: uint(64 - b)}
}

func (t *idxTable) slot(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> t.shift }

// add inserts (k, v).
func (t *idxTable) add(k uint64, v int32) {
	mask := uint64(len(t.slots) - 1)
	for i := t.slot(k); ; i = (i + 1) & mask {
		if t.slots[i].val == 0 {
			t.slots[i] = idxSlot{key: uint32(k), val: v + 1}
			return
		}
	}
}

// find calls f with each value stored under k until f returns true; it
// reports whether one did.
func (t *idxTable) find(k uint64, f func(v int32) bool) bool {
	mask := uint64(len(t.slots) - 1)
	for i := t.slot(k); t.slots[i].val != 0; i = (i + 1) & mask {
		if t.slots[i].key == uint32(k) && f(t.slots[i].val-1) {
			return true
		}
	}
	return false
}

// prefix64 reads up to the first 8 bytes of b as a little-endian key.
func prefix64(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var k [8]byte
	copy(k[:], b)
	return binary.LittleEndian.Uint64(k[:])
}
