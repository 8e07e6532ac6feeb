package boost

import (
	"fmt"
	"math/big"
	"math/bits"

	"github.com/cohortdm/cohort/paillier"
)

// Packed is a Vec sealed under Paillier: W values packed many per
// plaintext (paillier.Packing) and encrypted, holding the sum of N packed
// vectors (the offsets to take off when it is opened).
type Packed struct {
	C []*paillier.Ciphertext
	N uint64
	W int
}

// PaillierRing adds Packed sums under pk.
type PaillierRing struct{ PK *paillier.PublicKey }

// AddMul adds x·k to acc homomorphically.
func (r PaillierRing) AddMul(acc, x Sum, k uint64) Sum {
	xp := x.(*Packed)
	if k == 0 {
		return acc
	}
	cs := xp.C
	if k != 1 {
		kb := new(big.Int).SetUint64(k)
		cs = make([]*paillier.Ciphertext, len(xp.C))
		for i, c := range xp.C {
			cs[i] = r.PK.MulPlain(c, kb)
		}
	}
	if acc == nil {
		return &Packed{C: cs, N: xp.N * k, W: xp.W}
	}
	ap := acc.(*Packed)
	out := &Packed{C: make([]*paillier.Ciphertext, len(cs)), N: ap.N + xp.N*k, W: xp.W}
	for i, c := range cs {
		out.C[i] = r.PK.Add(ap.C[i], c)
	}
	return out
}

// PaillierCrypto seals with pool under pk, packing values of join-row
// sums over at most rows join rows, and opens with decrypt (a private key
// in process; nil in the job, whose class holder opens the joint
// decryption's plaintexts with Unpack): OpenBins compresses a table's bin
// sums several to a ciphertext (compress.go) before decrypting them.
func PaillierCrypto(pk *paillier.PublicKey, pool *paillier.RandomizerPool, rows uint64, decrypt func(*paillier.Ciphertext) (*big.Int, error)) (Crypto, error) {
	valueBits := FracBits + bits.Len64(rows) + 1
	pack, err := paillier.NewPacking(pk, valueBits, int(min(rows, 1<<40)))
	if err != nil {
		return Crypto{}, fmt.Errorf("boost: packing: %w", err)
	}
	seal := func(v Vec) (Sum, error) {
		in := make([]*big.Int, len(v))
		for i, x := range v {
			in[i] = big.NewInt(x)
		}
		pts, err := pack.Pack(in)
		if err != nil {
			return nil, fmt.Errorf("boost: a gradient sum does not fit the packing: %w", err)
		}
		out := &Packed{C: make([]*paillier.Ciphertext, len(pts)), N: 1, W: len(v)}
		for i, m := range pts {
			if out.C[i], err = pool.Encrypt(m); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	unpack := func(pts []*big.Int, w int, n uint64) (Vec, error) {
		vals, err := pack.Unpack(pts, w, int(min(n, 1<<40)))
		if err != nil {
			return nil, fmt.Errorf("boost: bin sums: %w", err)
		}
		out := make(Vec, len(vals))
		for i, x := range vals {
			out[i] = x.Int64()
		}
		return out, nil
	}
	lay := Layout{SlotBits: pack.SlotBits, ValueBits: pack.ValueBits}
	c := Crypto{Ring: PaillierRing{PK: pk}, Seal: seal, Unpack: unpack, Layout: lay, MaxWidth: pack.Slots}
	if decrypt == nil {
		return c, nil
	}
	c.Open = func(s Sum) (Vec, error) {
		p := s.(*Packed)
		pts := make([]*big.Int, len(p.C))
		for i, ct := range p.C {
			var err error
			if pts[i], err = decrypt(ct); err != nil {
				return nil, err
			}
		}
		return unpack(pts, p.W, p.N)
	}
	bp, err := newBinPacker(pk, lay)
	if err != nil {
		return Crypto{}, err
	}
	c.OpenBins = func(bs SealedBins) (BinSums, error) {
		return bp.open(bs, decrypt, unpack)
	}
	return c, nil
}
