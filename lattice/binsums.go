package lattice

// Per-bin sums of an encrypted vector, for gradient boosting (package
// boost's lattice path; docs/boost.md, "The lattice path"). A class holder
// encrypts each join row's gradient and hessian; another party, which
// knows the bin of each row in each of its columns but not the gradients,
// computes, under encryption, the sums of the gradients and hessians of
// every bin of one column in a single plaintext product, and masks the
// product so that its decryption shows those sums and nothing else.
//
// Placement (BinLayout). With B bins and K nodes (groups of bins: a tree
// level's open nodes, whose rows the summing party cannot tell apart), a
// row's slot is 2S = 2·K·B coefficients wide, and a chunk holds
// Rows = n/(2S) rows. Row r puts node k's gradient at coefficient 2S·r + k·B
// and its hessian at 2S·r + S + k·B (K = 1: 2B·r and 2B·r + B). The summing
// party multiplies the chunk's ciphertext by the plaintext
// W = Σ_r Σ_j w_rj·X^(b_rj − 2S·r), one term per bin b_rj in which row r
// counts w_rj times (a row of the class holder's that stands for a join
// value matches several of the summing party's rows, in several bins;
// X^−m = −X^(n−m) in Z[X]/(X^n + 1)). Row r's own terms land at exponents
// k·B + b and S + k·B + b, in [0, 2S) since b < B; a term of row r' ≠ r
// lands at 2S·(r'−r) + [0, 2S), which is at least 2S, or (wrapped, with its
// sign flipped) at least n − 2S·(Rows−1) = 2S: never in [0, 2S). So
// coefficient k·B + b of the product is Σ_{r,j: b_rj=b} w_rj·g_rk and
// coefficient S + k·B + b the same of the hessians, exactly, for every node
// and bin at once; chunks' products add up.
//
// Masking (BinSummer.Sum). Every other coefficient of the product is a sum
// of gradients weighted by the bins of other rows: decrypted, they would
// tell the bins. The summing party adds a fresh encryption of a plaintext
// that is zero on [0, 2S) and uniform modulo T elsewhere, so the decryption
// is the 2S sums followed by uniform noise, and the fresh encryption
// re-randomises the ciphertext (its c1 would otherwise be the class
// holder's c1 times W, from which the holder, who knows its c1, could
// divide W out). The product's noise depends on W; the decryption shares'
// smudging (package doc, Smudging) hides it as it hides any ciphertext
// noise, as long as the product's noise bound stays 2^40 below the
// smudging width: Sum refuses weights whose total would pass it
// (maxBinNoiseBits).

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// BinLayout places rows' (gradient, hessian) pairs, one per node, for
// sums over bins bins.
type BinLayout struct {
	params Params
	bins   int
	nodes  int
	rows   int // rows per ciphertext: n / (2·nodes·bins)
}

// NewBinLayout returns the layout for bins bins and one node (1 ≤ bins ≤
// n/4, so that a ciphertext holds at least two rows).
func NewBinLayout(p Params, bins int) (*BinLayout, error) { return NewNodeBinLayout(p, bins, 1) }

// NewNodeBinLayout returns the layout for bins bins in each of nodes
// nodes (1 ≤ nodes·bins ≤ n/4).
func NewNodeBinLayout(p Params, bins, nodes int) (*BinLayout, error) {
	n := p.Slots()
	if bins < 1 || nodes < 1 || nodes > n || 4*bins*nodes > n {
		return nil, fmt.Errorf("%w: %d bins in %d nodes: want 1 to %d bins in all", ErrParams, bins, nodes, n/4)
	}
	return &BinLayout{params: p, bins: bins, nodes: nodes, rows: n / (2 * bins * nodes)}, nil
}

// MaxNodes is the most nodes of bins bins a layout under p holds.
func MaxNodes(p Params, bins int) int { return p.Slots() / (4 * max(bins, 1)) }

// Rows is how many rows one ciphertext holds.
func (l *BinLayout) Rows() int { return l.rows }

// Chunks is how many ciphertexts rows rows take.
func (l *BinLayout) Chunks(rows int) int { return (rows + l.rows - 1) / l.rows }

// Bins is the number of bins a sum covers in each node.
func (l *BinLayout) Bins() int { return l.bins }

// Nodes is the number of nodes a row's slot holds.
func (l *BinLayout) Nodes() int { return l.nodes }

// span is S, the half of a row's slot: nodes·bins.
func (l *BinLayout) span() int { return l.nodes * l.bins }

// centred maps v to its residue modulo t.
func centred(v int64, t uint64) uint64 {
	if v >= 0 {
		return uint64(v) % t
	}
	return t - uint64(-v)%t
}

// place returns chunk k's plaintext coefficients of g and h (row i's node
// j at i·nodes + j).
func (l *BinLayout) place(g, h []int64, k int) []uint64 {
	t := l.params.PlaintextModulus()
	coeffs := make([]uint64, l.params.Slots())
	s, per := l.span(), l.nodes
	for r := 0; r < l.rows && (k*l.rows+r)*per < len(g); r++ {
		i := (k*l.rows + r) * per
		for j := range per {
			coeffs[2*s*r+j*l.bins] = centred(g[i+j], t)
			coeffs[2*s*r+s+j*l.bins] = centred(h[i+j], t)
		}
	}
	return coeffs
}

// Read returns the bins' gradient and hessian sums from the coefficients
// of a decrypted BinSummer.Sum, as signed values (a sum must lie within
// ±T/2, which the caller's fixed point guarantees): node j's bin b at
// j·bins + b.
func (l *BinLayout) Read(coeffs []uint64) (g, h []int64, err error) {
	s := l.span()
	if len(coeffs) < 2*s {
		return nil, nil, fmt.Errorf("%w: %d coefficients for %d bins", ErrMalformed, len(coeffs), s)
	}
	t := l.params.PlaintextModulus()
	signed := func(c uint64) int64 {
		if c > t/2 {
			return -int64(t - c)
		}
		return int64(c)
	}
	g, h = make([]int64, s), make([]int64, s)
	for b := range s {
		g[b], h[b] = signed(coeffs[b]), signed(coeffs[s+b])
	}
	return g, h, nil
}

// EncryptPairs encrypts rows' gradients g and hessians h (fixed point,
// equal lengths, row i's node j at i·l.Nodes() + j) in l's placement, one
// ciphertext per chunk of l.Rows() rows. Each ciphertext is Encrypt's:
// an encryption of zero plus the plaintext, the encryption of zero taken
// from the pool given to UseZeros when it has one ready (each handed out
// once: ZeroPool says why the ciphertexts are distributed as without it),
// else made with the plaintext in one NTT fewer (binsums_fresh.go).
func (e *Encryptor) EncryptPairs(l *BinLayout, g, h []int64) ([]*rlwe.Ciphertext, error) {
	if len(g) != len(h) || len(g)%l.nodes != 0 {
		return nil, fmt.Errorf("%w: %d gradients and %d hessians for %d nodes a row", ErrMismatch, len(g), len(h), l.nodes)
	}
	params := e.pk.Params.bgv
	out := make([]*rlwe.Ciphertext, l.Chunks(len(g)/l.nodes))
	err := safely(func() error {
		pt := bgv.NewPlaintext(params, params.MaxLevel())
		pt.IsBatched = false
		for k := range out {
			z, ok := e.zeros.take() // from the Encryptor's pool when it has one ready
			if !ok {
				var err error
				if e.fresh == nil {
					if e.fresh, err = newFreshEncrypter(e.pk); err != nil {
						return err
					}
				}
				if out[k], err = e.fresh.encrypt(e.fresh.placed(l, g, h, k)); err != nil {
					return err
				}
				continue
			}
			e.encodePlaced(l, g, h, k, pt)
			params.RingQ().AtLevel(pt.Level()).Add(z.c0, pt.Value, z.c0)
			out[k] = &rlwe.Ciphertext{Element: rlwe.Element[ring.Poly]{MetaData: pt.MetaData.CopyNew(), Value: []ring.Poly{z.c0, z.c1}}}
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
	pk    *PublicKey
	l     *BinLayout
	fresh *freshEncrypter // the masks' encryptions (binsums_fresh.go)
	zeros *ZeroPool       // nil: every mask's encryption of zero made here
	rq    *ring.Ring
	w     ring.Poly
	draws *keystream // the masks' uniform residues (keystream.go)
	ntt   sparseNTT
}

// NewBinSummer returns a BinSummer under pk for layout l.
func NewBinSummer(pk *PublicKey, l *BinLayout) (*BinSummer, error) {
	draws, err := newRandomKeystream()
	if err != nil {
		return nil, fmt.Errorf("lattice: mask seed: %w", err)
	}
	fresh, err := newFreshEncrypter(pk)
	if err != nil {
		return nil, err
	}
	s := &BinSummer{pk: pk, l: l, fresh: fresh, draws: draws}
	s.ntt.useRoots(pk.Params)
	err = safely(func() error {
		params := pk.Params.bgv
		s.rq = params.RingQ().AtLevel(params.MaxLevel())
		s.w = s.rq.NewPoly()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// BinTerm is one term of a sum: row Row counts Weight times in bin Bin
// (a bin outside [0, bins) counts nothing).
type BinTerm struct {
	Row    int
	Bin    int
	Weight uint64
}

// Sum returns the masked per-bin sums of the rows of cts: bins[i] is row
// i's bin (−1: the row is not counted) and weights[i] its weight (nil: 1),
// rows numbered as EncryptPairs numbered them.
func (s *BinSummer) Sum(cts []*rlwe.Ciphertext, bins []int, weights []uint64) (*rlwe.Ciphertext, error) {
	if weights != nil && len(weights) != len(bins) {
		return nil, fmt.Errorf("%w: %d rows' bins and %d weights", ErrMismatch, len(bins), len(weights))
	}
	terms := make([]BinTerm, 0, len(bins))
	for i, b := range bins {
		w := uint64(1)
		if weights != nil {
			w = weights[i]
		}
		terms = append(terms, BinTerm{Row: i, Bin: b, Weight: w})
	}
	return s.SumTerms(cts, terms)
}

// SumTerms is Sum with any number of terms per row: terms sorted by Row,
// a row's terms in any bins (one bin twice: the weights add).
func (s *BinSummer) SumTerms(cts []*rlwe.Ciphertext, terms []BinTerm) (*rlwe.Ciphertext, error) {
	out, err := s.sumEach([][]*rlwe.Ciphertext{cts}, terms, nil, 0)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// SumTermsEach is SumTermsKept of the same terms over several encrypted
// vectors of the same rows in s's layout (sets[i]: one vector's chunks,
// every set as many): one masked sum per set, each what SumTermsKept
// returns for it. Each chunk's W is made (or taken from kept) once for
// all the sets, so that a party sent one layout per group of open nodes
// (boost's lattice path) transforms each W once a level, not once a
// layout. kept may be nil.
func (s *BinSummer) SumTermsEach(sets [][]*rlwe.Ciphertext, terms []BinTerm, kept *WeightCache, col int) ([]*rlwe.Ciphertext, error) {
	return s.sumEach(sets, terms, kept, col)
}

// sumEach is SumTermsEach; every sum of this file comes down to it, by
// way of EachSums (binsums_each.go): all the chunks as one range.
func (s *BinSummer) sumEach(sets [][]*rlwe.Ciphertext, terms []BinTerm, kept *WeightCache, col int) ([]*rlwe.Ciphertext, error) {
	if len(sets) == 0 {
		return nil, nil
	}
	a, err := s.NewEachSums(len(sets), len(sets[0])) // AddEach refuses vectors of other lengths
	if err != nil {
		return nil, err
	}
	if err := s.AddEach(a, sets, 0, terms, kept, col); err != nil {
		return nil, err
	}
	return s.FinishEach(a)
}

// lazyProducts is how many products sumEach adds unreduced before it
// reduces its sums: a sum below q plus k products of Lattigo's lazy
// Montgomery reduction, each below 2q, must stay below 2^64, so k is the
// largest with (2k+1)·q < 2^64 for Q's largest prime (7 for 60-bit
// primes). Reducing once per k chunks instead of once per product takes
// about a third off the products' CPU (docs/boost.md).
func lazyProducts(rq *ring.Ring) int {
	q := slices.Max(rq.ModuliChain()[:rq.Level()+1])
	return int((math.MaxUint64/q - 1) / 2)
}

// splitChunk splits terms (sorted by row) before the first of row end or
// beyond.
func splitChunk(terms []BinTerm, end int) (in, rest []BinTerm) {
	i := 0
	for i < len(terms) && terms[i].Row < end {
		i++
	}
	return terms[:i], terms[i:]
}

// checkNoise bounds the masked sum's noise: each term adds its weight
// times a fresh encryption's noise bound (and, at most, its weight for the
// product's carries past T), and the mask adds one fresh noise. sum is
// the weights of the sum's terms checked before (EachSums checks a range
// of chunks' terms at a time; weights are never negative, so every range
// passes if and only if all the terms together pass); it returns the
// weights with terms'.
func (s *BinSummer) checkNoise(sum uint64, terms []BinTerm) (uint64, error) {
	for _, t := range terms {
		var carry uint64
		if sum, carry = bits.Add64(sum, s.weight(t), 0); carry != 0 {
			return 0, fmt.Errorf("%w: the rows' weights add up to more than 64 bits, beyond the noise a decryption share hides", ErrRange)
		}
	}
	total := new(big.Int).SetUint64(sum)
	fresh := s.l.params.aggregateNoise(len(s.pk.Members), 1)
	bound := new(big.Int).Mul(fresh, total)
	bound.Add(bound, total)
	bound.Add(bound, fresh)
	if bound.BitLen() > maxBinNoiseBits {
		return 0, fmt.Errorf("%w: the rows' weights add up to %d bits, beyond the noise a decryption share hides", ErrRange, total.BitLen())
	}
	return sum, nil
}

// weight is a term's weight in a sum: 0 when its bin is out of range.
func (s *BinSummer) weight(t BinTerm) uint64 {
	if t.Bin < 0 || t.Bin >= s.l.bins {
		return 0
	}
	return t.Weight
}

// weigh sets s.w to chunk k's W (from its terms) in NTT and Montgomery
// form, and reports whether any term counts.
func (s *BinSummer) weigh(terms []BinTerm, k int) bool {
	l, n := s.l, s.l.params.Slots()
	for j := range s.w.Coeffs {
		clear(s.w.Coeffs[j])
	}
	if len(s.ntt.seen) < n {
		s.ntt.seen = make([]bool, n)
	}
	pos, moduli := s.ntt.pos[:0], s.rq.ModuliChain()
	for _, t := range terms {
		w := s.weight(t)
		if w == 0 {
			continue
		}
		e, neg := t.Bin-2*l.span()*(t.Row-k*l.rows), false
		if e < 0 {
			e, neg = e+n, true
		}
		if !s.ntt.seen[e] {
			s.ntt.seen[e] = true
			pos = append(pos, e)
		}
		for j, q := range moduli {
			v := w % q
			if neg && v != 0 {
				v = q - v
			}
			c := &s.w.Coeffs[j][e]
			if *c += v; *c >= q {
				*c -= q
			}
		}
	}
	for _, e := range pos {
		s.ntt.seen[e] = false
	}
	s.ntt.pos = pos
	if len(pos) == 0 {
		return false
	}
	s.ntt.forward(s.rq, s.w, pos, true) // the NTT in Montgomery form, skipping zeros
	return true
}

// mask adds a fresh encryption of zeros on [0, 2S) and uniform residues
// modulo T elsewhere: its encryption of zero from the pool given to
// UseZeros when it has one ready, else made with the plaintext
// (binsums_fresh.go).
func (s *BinSummer) mask(out *rlwe.Ciphertext) error {
	f := s.fresh
	t := f.pk.Params.PlaintextModulus()
	width := 64 - bits.Len64(t)
	add := func(e0 ring.Poly) {
		n := s.l.params.Slots()
		words, k := s.draws.next(8*n), 0 // a word a coefficient, more for the rare one refused
		for i := 2 * s.l.span(); i < n; i++ {
			for { // uniform below T by rejection
				if k == n {
					words, k = s.draws.next(8*n), 0
				}
				v := binary.LittleEndian.Uint64(words[8*k:]) >> width
				k++
				if v < t {
					f.put(e0, i, v)
					break
				}
			}
		}
	}
	var c0, c1 ring.Poly
	if z, ok := s.zeros.take(); ok {
		for j := range f.e.Coeffs {
			clear(f.e.Coeffs[j])
		}
		add(f.e)
		s.ntt.full(s.rq, f.e) // rq.NTT's output (TestFullNTT)
		s.rq.Add(z.c0, f.e, z.c0)
		c0, c1 = z.c0, z.c1
	} else {
		ct, err := f.encrypt(add)
		if err != nil {
			return err
		}
		c0, c1 = ct.Value[0], ct.Value[1]
	}
	s.rq.Add(out.Value[0], c0, out.Value[0])
	s.rq.Add(out.Value[1], c1, out.Value[1])
	return nil
}

// UseZeros lets the summer take its masks' encryptions of zero from p, a
// node's pool (ZeroPool, which says why the ciphertexts are distributed
// as without it: each masks one sum only), and make them itself only when
// p is empty. It refuses a pool of another key.
func (s *BinSummer) UseZeros(p *ZeroPool) error {
	if p != nil && !p.Serves(s.pk) {
		return fmt.Errorf("%w: zero pool of another key", ErrMismatch)
	}
	s.zeros = p
	return nil
}
