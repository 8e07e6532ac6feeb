package boost

import (
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/paillier"
)

// Several bin sums in one ciphertext before the decryption. A bin sum of
// an open level fills W = 2·(open nodes) of a plaintext's slots (2 of
// 32 at 2048 bits and 2^15 join rows), and every ciphertext
// costs a decryption: in the job a decryption share and its proof from
// each decryptor and their verification, several full exponentiations
// modulo n². The sender therefore moves consecutive ciphertexts into one
// before sending them, by Horner's rule on the plaintexts:
//
//	C = c_1 · (c_2 · (… c_k^(2^(w_{k−1}·s)) …))^(2^(w_1·s))  decrypts to
//	M = m_1 + 2^(w_1·s)·(m_2 + 2^(w_2·s)·(… + 2^(w_{k−1}·s)·m_k))
//
// for slot width s, where ciphertext i holds w_i slots (a bin sum of W
// values in K ciphertexts: each full but the last). Bounds: the packing
// keeps every slot of a sum of at most Additions vectors below 2^s and the
// unused slots zero (paillier.Packing), so m_i < 2^(w_i·s), and a run is
// closed before Σw_i exceeds slots = ⌊(|n^s| − 1)/s⌋, so M < 2^(slots·s)
// < n^s: M is the integer, not a residue, and each m_i is read back as
// M's bits [o_i·s, (o_i + w_i)·s) with o_i = Σ_{j<i} w_j. A run costs at
// most slots·s < |n| squarings modulo n² (one exponentiation by a power of
// two), against a decryption saved per ciphertext moved in.
//
// What it discloses: nothing new. The class holder decrypts M, from which
// it reads exactly the m_i it would have decrypted one by one; the layout
// is its own packing, and the sender uses it only if a down message told
// it (the class holder's children; a table below another party's table
// is told no layout and sends its bin sums as before).

// binPacker compresses and expands under one packing layout.
type binPacker struct {
	pk    *paillier.PublicKey
	lay   Layout
	slots int // slots per plaintext
}

// newBinPacker checks lay against pk: a slot of at least ValueBits + 1
// bits, at least one slot per plaintext.
func newBinPacker(pk *paillier.PublicKey, lay Layout) (*binPacker, error) {
	avail := pk.PlaintextModulus().BitLen() - 1
	if lay.ValueBits < 1 || lay.SlotBits <= lay.ValueBits || lay.SlotBits > avail {
		return nil, fmt.Errorf("%w: the bin sums' packing layout does not fit the key", ErrWire)
	}
	return &binPacker{pk: pk, lay: lay, slots: avail / lay.SlotBits}, nil
}

// widths lists the slots each ciphertext of the entries holds, in order:
// an entry of W values has ⌈W/slots⌉ ciphertexts.
func (bp *binPacker) widths(es []binEntry) ([]int, error) {
	var out []int
	for _, e := range es {
		if e.W < 1 || e.K != (e.W+bp.slots-1)/bp.slots {
			return nil, fmt.Errorf("%w: a bin sum's ciphertext count does not fit its width", ErrWire)
		}
		for i := 0; i < e.K; i++ {
			out = append(out, min(bp.slots, e.W-i*bp.slots))
		}
	}
	return out, nil
}

// runs splits widths into runs of consecutive ciphertexts of at most
// bp.slots slots in all, greedily, and returns their lengths.
func (bp *binPacker) runs(widths []int) []int {
	var out []int
	used := 0
	for _, w := range widths {
		if len(out) == 0 || used+w > bp.slots {
			out = append(out, 0)
			used = 0
		}
		out[len(out)-1]++
		used += w
	}
	return out
}

// compress returns one ciphertext per run of cts (widths[i] slots each).
func (bp *binPacker) compress(cts []*paillier.Ciphertext, widths []int) ([]*paillier.Ciphertext, error) {
	if len(cts) != len(widths) {
		return nil, fmt.Errorf("boost: %d bin ciphertexts for %d widths", len(cts), len(widths))
	}
	var out []*paillier.Ciphertext
	at := 0
	for _, n := range bp.runs(widths) {
		acc := cts[at+n-1]
		for i := at + n - 2; i >= at; i-- {
			shift := new(big.Int).Lsh(one, uint(widths[i]*bp.lay.SlotBits))
			acc = bp.pk.Add(cts[i], bp.pk.MulPlain(acc, shift))
		}
		out = append(out, acc)
		at += n
	}
	return out, nil
}

// expand reads compress's plaintexts back into one plaintext per original
// ciphertext. A plaintext at or above 2^(its run's slots·SlotBits) is an
// error: no honest sum reaches it.
func (bp *binPacker) expand(pts []*big.Int, widths []int) ([]*big.Int, error) {
	rs := bp.runs(widths)
	if len(pts) != len(rs) {
		return nil, fmt.Errorf("%w: %d compressed bin sums, the entries need %d", ErrWire, len(pts), len(rs))
	}
	out := make([]*big.Int, 0, len(widths))
	at := 0
	for r, n := range rs {
		rest := new(big.Int).Set(pts[r])
		total := 0
		for _, w := range widths[at : at+n] {
			total += w
		}
		if rest.Sign() < 0 || rest.BitLen() > total*bp.lay.SlotBits {
			return nil, fmt.Errorf("%w: a compressed bin sum out of its slots", ErrWire)
		}
		for _, w := range widths[at : at+n] {
			bits := uint(w * bp.lay.SlotBits)
			mask := new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
			out = append(out, new(big.Int).And(rest, mask))
			rest.Rsh(rest, bits)
		}
		at += n
	}
	return out, nil
}

var one = big.NewInt(1)

// openEntries turns the entries of one table (in order, their K
// plaintexts each at the head of pts) into bin sums of nfeat features with
// unpack, and returns the plaintexts left over. A feature is as long as
// its last non-empty bin (an empty bin after it is no split candidate:
// its right side is empty).
func openEntries(es []binEntry, pts []*big.Int, nfeat int, unpack func([]*big.Int, int, uint64) (Vec, error)) (BinSums, []*big.Int, error) {
	out := make(BinSums, nfeat)
	for _, e := range es {
		if e.Feature < 0 || e.Feature >= nfeat || e.Bin < 0 || e.Bin >= maxBins || e.K < 1 || e.K > len(pts) {
			return nil, nil, fmt.Errorf("%w: bin sums that do not fit the table's features", ErrWire)
		}
		for len(out[e.Feature]) <= e.Bin {
			out[e.Feature] = append(out[e.Feature], nil)
		}
		if out[e.Feature][e.Bin] != nil {
			return nil, nil, fmt.Errorf("%w: a bin sum sent twice", ErrWire)
		}
		v, err := unpack(pts[:e.K], e.W, e.N)
		if err != nil {
			return nil, nil, err
		}
		out[e.Feature][e.Bin] = v
		pts = pts[e.K:]
	}
	return out, pts, nil
}

// open decrypts a table's sealed bin sums, compressed, in one process.
// Features keep their length (empty bins nil), as Open gives them.
func (bp *binPacker) open(bs SealedBins, decrypt func(*paillier.Ciphertext) (*big.Int, error), unpack func([]*big.Int, int, uint64) (Vec, error)) (BinSums, error) {
	es, cts, err := flattenBins(0, bs)
	if err != nil {
		return nil, err
	}
	widths, err := bp.widths(es)
	if err != nil {
		return nil, err
	}
	packed, err := bp.compress(cts, widths)
	if err != nil {
		return nil, err
	}
	pts := make([]*big.Int, len(packed))
	for i, c := range packed {
		if pts[i], err = decrypt(c); err != nil {
			return nil, err
		}
	}
	if pts, err = bp.expand(pts, widths); err != nil {
		return nil, err
	}
	out, _, err := openEntries(es, pts, len(bs), unpack)
	if err != nil {
		return nil, err
	}
	for f := range out {
		for len(out[f]) < len(bs[f]) {
			out[f] = append(out[f], nil)
		}
	}
	return out, nil
}
