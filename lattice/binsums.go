package lattice

// Per-bin sums of an encrypted vector, for gradient boosting (package
// boost's lattice path; docs/boost.md, "The lattice path"). A class holder
// encrypts each join row's gradient and hessian; another party, which
// knows the bin of each row in each of its columns but not the gradients,
// computes, under encryption, the sums of the gradients and hessians of
// every bin of one column in a single plaintext product, and masks the
// product so that its decryption shows those sums and nothing else.
//
// Placement (BinLayout). With B bins, row r of a chunk of Rows = n/(2B)
// rows puts its gradient at coefficient 2B·r and its hessian at 2B·r + B.
// The summing party multiplies the chunk's ciphertext by the plaintext
// W = Σ_r w_r·X^(bin(r) − 2B·r) (w_r the row's weight, 0 for a row not in
// the tree node; X^−m = −X^(n−m) in Z[X]/(X^n + 1)). Row r's own terms land
// at exponents bin(r) and B + bin(r), in [0, 2B); a term of row r' ≠ r lands
// at 2B·(r'−r) + [0, 2B), which is at least 2B, or (wrapped, with its sign
// flipped) at least n − 2B·(Rows−1) = 2B: never in [0, 2B). So coefficient b
// of the product is Σ_{r: bin(r)=b} w_r·g_r and coefficient B + b the same
// of the hessians, exactly, for every b at once; chunks' products add up.
//
// Masking (BinSummer.Sum). Every other coefficient of the product is a sum
// of gradients weighted by the bins of other rows: decrypted, they would
// tell the bins. The summing party adds a fresh encryption of a plaintext
// that is zero on [0, 2B) and uniform modulo T elsewhere, so the decryption
// is the 2B sums followed by uniform noise, and the fresh encryption
// re-randomises the ciphertext (its c1 would otherwise be the class
// holder's c1 times W, from which the holder, who knows its c1, could
// divide W out). The product's noise depends on W; the decryption shares'
// smudging (package doc, Smudging) hides it as it hides any ciphertext
// noise as it hides any ciphertext noise, as long as the product's noise
// bound stays 2^40 below the smudging width: Sum refuses weights whose
// total would pass it (maxBinNoiseBits).

import (
	crand "crypto/rand"
	"fmt"
	"math/big"
	"math/bits"
	mrand "math/rand/v2"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// BinLayout places rows' (gradient, hessian) pairs for sums over bins bins.
type BinLayout struct {
	params Params
	bins   int
	rows   int // rows per ciphertext: n / (2·bins)
}

// NewBinLayout returns the layout for bins bins (1 ≤ bins ≤ n/4, so that a
// ciphertext holds at least two rows).
func NewBinLayout(p Params, bins int) (*BinLayout, error) {
	n := p.Slots()
	if bins < 1 || 4*bins > n {
		return nil, fmt.Errorf("%w: %d bins: want 1 to %d", ErrParams, bins, n/4)
	}
	return &BinLayout{params: p, bins: bins, rows: n / (2 * bins)}, nil
}

// Rows is how many rows one ciphertext holds.
func (l *BinLayout) Rows() int { return l.rows }

// Chunks is how many ciphertexts rows rows take.
func (l *BinLayout) Chunks(rows int) int { return (rows + l.rows - 1) / l.rows }

// Bins is the number of bins a sum covers.
func (l *BinLayout) Bins() int { return l.bins }

// centred maps v to its residue modulo t.
func centred(v int64, t uint64) uint64 {
	if v >= 0 {
		return uint64(v) % t
	}
	return t - uint64(-v)%t
}

// place returns chunk k's plaintext coefficients of g and h.
func (l *BinLayout) place(g, h []int64, k int) []uint64 {
	t := l.params.PlaintextModulus()
	coeffs := make([]uint64, l.params.Slots())
	for r := 0; r < l.rows && k*l.rows+r < len(g); r++ {
		i := k*l.rows + r
		coeffs[2*l.bins*r] = centred(g[i], t)
		coeffs[2*l.bins*r+l.bins] = centred(h[i], t)
	}
	return coeffs
}

// Read returns the bins' gradient and hessian sums from the coefficients
// of a decrypted BinSummer.Sum, as signed values (a sum must lie within
// ±T/2, which the caller's fixed point guarantees).
func (l *BinLayout) Read(coeffs []uint64) (g, h []int64, err error) {
	if len(coeffs) < 2*l.bins {
		return nil, nil, fmt.Errorf("%w: %d coefficients for %d bins", ErrMalformed, len(coeffs), l.bins)
	}
	t := l.params.PlaintextModulus()
	signed := func(c uint64) int64 {
		if c > t/2 {
			return -int64(t - c)
		}
		return int64(c)
	}
	g, h = make([]int64, l.bins), make([]int64, l.bins)
	for b := range l.bins {
		g[b], h[b] = signed(coeffs[b]), signed(coeffs[l.bins+b])
	}
	return g, h, nil
}

// EncryptPairs encrypts rows' gradients g and hessians h (fixed point,
// equal lengths) in l's placement, one ciphertext per chunk of l.Rows().
func (e *Encryptor) EncryptPairs(l *BinLayout, g, h []int64) ([]*rlwe.Ciphertext, error) {
	if len(g) != len(h) {
		return nil, fmt.Errorf("%w: %d gradients and %d hessians", ErrMismatch, len(g), len(h))
	}
	params := e.pk.Params.bgv
	out := make([]*rlwe.Ciphertext, l.Chunks(len(g)))
	err := safely(func() error {
		pt := bgv.NewPlaintext(params, params.MaxLevel())
		pt.IsBatched = false
		for k := range out {
			if err := e.ecd.Encode(l.place(g, h, k), pt); err != nil {
				return err
			}
			out[k] = bgv.NewCiphertext(params, 1, params.MaxLevel())
			if err := e.enc.Encrypt(pt, out[k]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxBinNoiseBits bounds the noise of a masked sum (in units of T): 40
// bits below the decryption shares' smudging width, so that a decryption
// share hides the product's noise, which depends on the weights, within
// 2^-40 per coefficient (the package doc, Smudging).
const maxBinNoiseBits = smudgeBits - 40

// BinSummer computes masked per-bin sums for a party that holds rows'
// bins. Not safe for concurrent use.
type BinSummer struct {
	pk   *PublicKey
	l    *BinLayout
	enc  *rlwe.Encryptor
	ecd  *bgv.Encoder
	rq   *ring.Ring
	w    ring.Poly
	rng  *mrand.ChaCha8
	zero []uint64
}

// NewBinSummer returns a BinSummer under pk for layout l.
func NewBinSummer(pk *PublicKey, l *BinLayout) (*BinSummer, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("lattice: mask seed: %w", err)
	}
	s := &BinSummer{pk: pk, l: l, rng: mrand.NewChaCha8(seed), zero: make([]uint64, l.params.Slots())}
	err := safely(func() error {
		params := pk.Params.bgv
		s.enc = rlwe.NewEncryptor(params, pk.key)
		s.ecd = bgv.NewEncoder(params)
		s.rq = params.RingQ().AtLevel(params.MaxLevel())
		s.w = s.rq.NewPoly()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Sum returns the masked per-bin sums of the rows of cts: bins[i] is row
// i's bin (−1: the row is not counted) and weights[i] its weight (nil: 1),
// rows numbered as EncryptPairs numbered them.
func (s *BinSummer) Sum(cts []*rlwe.Ciphertext, bins []int, weights []uint64) (*rlwe.Ciphertext, error) {
	l := s.l
	if len(bins) > len(cts)*l.rows || (weights != nil && len(weights) != len(bins)) {
		return nil, fmt.Errorf("%w: %d rows' bins for %d ciphertexts", ErrMismatch, len(bins), len(cts))
	}
	if err := s.checkNoise(bins, weights); err != nil {
		return nil, err
	}
	var out *rlwe.Ciphertext
	err := safely(func() error {
		params := l.params.bgv
		out = bgv.NewCiphertext(params, 1, params.MaxLevel())
		out.IsBatched = false // coefficient encoding, as EncryptPairs
		for k, ct := range cts {
			if !s.weigh(bins, weights, k) {
				continue
			}
			if !ct.IsNTT || ct.IsBatched || ct.Level() != params.MaxLevel() {
				return fmt.Errorf("%w: a ciphertext not as EncryptPairs makes them", ErrMismatch)
			}
			for i := range 2 {
				s.rq.MulCoeffsMontgomeryThenAdd(ct.Value[i], s.w, out.Value[i])
			}
		}
		return s.mask(out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkNoise bounds the masked sum's noise: each counted row adds its
// weight times a fresh encryption's noise bound (and, at most, its weight
// for the product's carries past T), and the mask adds one fresh noise.
func (s *BinSummer) checkNoise(bins []int, weights []uint64) error {
	var sum uint64
	for i := range bins {
		var carry uint64
		if sum, carry = bits.Add64(sum, s.weight(bins, weights, i), 0); carry != 0 {
			return fmt.Errorf("%w: the rows' weights add up to more than 64 bits, beyond the noise a decryption share hides", ErrRange)
		}
	}
	total := new(big.Int).SetUint64(sum)
	fresh := s.l.params.aggregateNoise(len(s.pk.Members), 1)
	bound := new(big.Int).Mul(fresh, total)
	bound.Add(bound, total)
	bound.Add(bound, fresh)
	if bound.BitLen() > maxBinNoiseBits {
		return fmt.Errorf("%w: the rows' weights add up to %d bits, beyond the noise a decryption share hides", ErrRange, total.BitLen())
	}
	return nil
}

// weight is row i's weight in a sum: 0 when its bin is out of range (−1:
// not counted), else weights[i], or 1 without weights.
func (s *BinSummer) weight(bins []int, weights []uint64, i int) uint64 {
	switch {
	case bins[i] < 0 || bins[i] >= s.l.bins:
		return 0
	case weights == nil:
		return 1
	}
	return weights[i]
}

// weigh sets s.w to chunk k's W in NTT and Montgomery form, and reports
// whether any of the chunk's rows counts.
func (s *BinSummer) weigh(bins []int, weights []uint64, k int) bool {
	l, n := s.l, s.l.params.Slots()
	for j := range s.w.Coeffs {
		clear(s.w.Coeffs[j])
	}
	any := false
	for r := 0; r < l.rows && k*l.rows+r < len(bins); r++ {
		i := k*l.rows + r
		w := s.weight(bins, weights, i)
		if w == 0 {
			continue
		}
		any = true
		e, neg := bins[i]-2*l.bins*r, false
		if e < 0 {
			e, neg = e+n, true
		}
		for j, q := range s.rq.ModuliChain() {
			v := w % q
			if neg && v != 0 {
				v = q - v
			}
			s.w.Coeffs[j][e] = v
		}
	}
	if any {
		s.rq.NTT(s.w, s.w)
		s.rq.MForm(s.w, s.w)
	}
	return any
}

// mask adds a fresh encryption of zeros on [0, 2B) and uniform residues
// modulo T elsewhere.
func (s *BinSummer) mask(out *rlwe.Ciphertext) error {
	params := s.l.params.bgv
	t := params.PlaintextModulus()
	coeffs := s.zero
	width := 64 - bits.Len64(t)
	for i := range coeffs {
		coeffs[i] = 0
		for i >= 2*s.l.bins { // uniform below T by rejection
			if v := s.rng.Uint64() >> width; v < t {
				coeffs[i] = v
				break
			}
		}
	}
	pt := bgv.NewPlaintext(params, params.MaxLevel())
	pt.IsBatched = false
	if err := s.ecd.Encode(coeffs, pt); err != nil {
		return err
	}
	fresh := bgv.NewCiphertext(params, 1, params.MaxLevel())
	if err := s.enc.Encrypt(pt, fresh); err != nil {
		return err
	}
	for i := range 2 {
		s.rq.Add(out.Value[i], fresh.Value[i], out.Value[i])
	}
	return nil
}
