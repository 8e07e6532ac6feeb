package psi

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
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

// binFactor is the cuckoo table's size over the receiver's set size: 1.27
// bins per element with 3 hash functions (Pinkas, Schneider, Tkachenko,
// Yanai, "Efficient circuit-based PSI with linear communication",
// EUROCRYPT 2019, table 4: ε = 1.27 gives failure probability below 2^-40
// without a stash for n ≥ 2^12; below that the rounding up to 128 bins
// gives much more room).
const binFactor = 1.27

// numBins is the number of cuckoo bins for a receiver's set of n: ⌈1.27·n⌉
// rounded up to a multiple of 128 (one AES block of every column), at
// least 128. Both parties compute it from the announced n.
func numBins(n int) int {
	m := int(math.Ceil(binFactor * float64(n)))
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

// digester reduces elements to 128-bit digests under a domain tag:
// SHA-256(SHA-256("cohort-psi-ot-v1:digest" ‖ dst) ‖ x), truncated. Equal
// elements have equal digests; two different elements collide with
// probability 2^-128 per pair, which the receiver also checks.
type digester struct{ key [32]byte }

func newDigester(dst []byte) digester {
	return digester{key: sha256.Sum256(append([]byte("cohort-psi-ot-v1:digest:"), dst...))}
}

// digests returns the digests of elems, on every core.
func (d digester) digests(elems [][]byte) [][digestLen]byte {
	out := make([][digestLen]byte, len(elems))
	_ = parallel(len(elems), func(lo, hi int) error {
		h := sha256.New()
		var sum [32]byte
		for i := lo; i < hi; i++ {
			h.Reset()
			h.Write(d.key[:])
			h.Write(elems[i])
			copy(out[i][:], h.Sum(sum[:0]))
		}
		return nil
	})
	return out
}

// otKeys are the public keys both parties derive from the joint seed:
// the pseudorandom code's AES keys (one per hash function and 128-bit
// block of a code word) and the seed the OPRF output hashes in.
type otKeys struct {
	seed [32]byte
	code [hashCount][otRowWords / 2]cipher.Block
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
		for j := range otRowWords / 2 {
			b, err := aes.NewCipher(derive(seed, "code", h, j))
			if err != nil {
				panic("psi: internal error: AES-128 key: " + err.Error())
			}
			k.code[h][j] = b
		}
	}
	return k
}

// codeWord writes C(d, h) to row: block j of the k-bit code word is
// AES_{K_{h,j}}(d), a pseudorandom code (KKRT16 §3 instantiates it as a
// random oracle; a PRP on distinct inputs is one up to the PRP/PRF switch).
// The hash-function index selects the keys, so one digest under two hash
// functions gives unrelated code words (the OPRF input is x‖h).
func (k *otKeys) codeWord(row []byte, d *[digestLen]byte, h int) {
	for j := range otRowWords / 2 {
		k.code[h][j].Encrypt(row[16*j:16*j+16], d[:])
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
var errCuckoo = fmt.Errorf("psi: cuckoo insertion failed")

// cuckoo places every digest in one of its 3 bins, one per bin, by random
// walk (evict a random other candidate), at most maxKicks evictions per
// insertion; on failure it returns errCuckoo, never a table missing an
// element.
func cuckoo(ds [][digestLen]byte, hs cuckooHasher, m int) (*cuckooTable, error) {
	t := &cuckooTable{item: make([]int32, m), fn: make([]uint8, m)}
	var seed [32]byte
	rand.Read(seed[:])
	r := mrand.New(mrand.NewChaCha8(seed))
	maxKicks := 100 + 10*bits.Len(uint(len(ds)))
	for i := range ds {
		cur, curFn := int32(i+1), -1
		cand := hs.bins(&ds[i])
		placed := false
		for kick := 0; kick <= maxKicks; kick++ {
			// An empty candidate takes it.
			for h, b := range cand {
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
			h := r.IntN(hashCount)
			if h == curFn {
				h = (h + 1 + r.IntN(hashCount-1)) % hashCount
			}
			b := cand[h]
			cur, t.item[b] = t.item[b], cur
			oldFn := int(t.fn[b])
			t.fn[b] = uint8(h)
			cand = hs.bins(&ds[cur-1])
			curFn = oldFn
		}
		if !placed {
			return nil, errCuckoo
		}
	}
	return t, nil
}

// prg fills dst with the AES-CTR keystream of key starting at 128-bit
// block ctr: the PRG G of the extension, where bit r of a column is row r.
func prg(dst []byte, key []byte, ctr uint64) {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("psi: internal error: AES-128 key: " + err.Error())
	}
	var iv [16]byte
	binary.BigEndian.PutUint64(iv[8:], ctr)
	clear(dst)
	cipher.NewCTR(b, iv[:]).XORKeyStream(dst, dst)
}

// prgXor xors the keystream of prg(key, ctr) into dst.
func prgXor(dst []byte, key []byte, ctr uint64) {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("psi: internal error: AES-128 key: " + err.Error())
	}
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

// oprfOut is F(i, v): SHA-256 of the joint seed, the bin index and the
// k-bit row v, truncated to l bytes into out (KKRT16's correlation-robust
// hash H, with the bin index as the OPRF instance).
func oprfOut(out []byte, seed *[32]byte, bin int, v []byte, l int, buf *[32 + 8 + otRowBytes]byte) {
	copy(buf[:32], seed[:])
	binary.LittleEndian.PutUint64(buf[32:], uint64(bin))
	copy(buf[40:], v)
	s := sha256.Sum256(buf[:])
	copy(out[:l], s[:l])
}
