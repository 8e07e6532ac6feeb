package bicluster

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/cohortdm/cohort/paillier"
)

// The pairwise merge test on encrypted representatives (Ahmad and
// Khokhar, "Phoenix", §3.6: a secure Euclidean distance between two
// locals' representatives, compared with a threshold β; here with a
// blinded comparison under the consortium's threshold key). For a
// candidate pair (a, b) of local biclusters of parties A < B, over the
// union U of their column sets (u = |U|), with
// representatives v (a's) and m (b's) in fixed point V = round(v·2^F),
// M = round(m·2^F), S_V = Σ_U V, S_M = Σ_U M, and β² as B = round(β²·2^G):
//
//	D   = 2^G·u·‖V − M‖²
//	x_A = D − B·S_V² − 1,  x_B = D − B·S_M² − 1    similar ⟺ x_A < 0 or x_B < 0
//
// which is PlainSimilar (RMS difference ≤ β·the larger mean) in fixed
// point. The rounds, each a pure function here, the network in
// pairtest_session.go:
//
//  1. A encrypts, under the consortium's threshold key, V_j for j ∈ U,
//     Σ_U V_j² and S_V² (§3.6 broadcasts E(v²), E(−2v), E(−1) under the
//     threshold key too, so no single party can decrypt) and sends them to B
//     (pairEncrypt).
//  2. B evaluates E(x_A) and E(x_B) homomorphically with its plaintext M
//     (§3.6's decomposition with its signs corrected: Σ V² − 2 Σ V·M +
//     Σ M², never a decryption),
//     blinds each as E(r·x + s) with 0 ≤ s < r, re-randomises them and
//     sends them back to A (pairEvaluate).
//  3. A blinds each again, E(r'·y + s') (pairBlind), and packs its pairs'
//     results into few ciphertexts (pairPack).
//  4. The root (secureagg.Root: never the coordinator) threshold-decrypts
//     the packed ciphertexts with t+1 verified shares (secureagg.Decryption;
//     each decryptor first checks them against the digests their producers
//     sent it) and reads the signs (pairSigns); the coordinator commits only
//     their OR, one bit per pair.
//
// Blinding keeps the sign: for an integer x and 0 ≤ s < r, r·x + s < 0
// exactly when x < 0. Each r is (2^32 + u)·2^e with u a uniform 32-bit
// integer and e uniform in [0, 64), so log2 r is spread over 64 bits:
// the decrypted z = r_A·r_B·x + … shows log2 |x| only blurred by the sum
// of two such exponents, and A, who knows r_A and s_A, sees y only, which
// shows log2 |x| blurred by r_B's. This is a blinded comparison, not a
// comparison protocol that reveals nothing but the bit (DGK-style); its
// extra leakage is stated in the package doc's leakage profile.
const (
	pairBetaBits  = 16 // G: β² in fixed point
	pairMaskBits  = 32 // the uniform part u of a blinding factor
	pairShiftBits = 64 // the exponent e of a blinding factor is below this
)

// errPairRange is a representative value outside the fixed-point bound.
var errPairRange = errors.New("bicluster: representative outside the fixed-point range")

// pairCode is the fixed-point and packing layout of the pair test, the
// same at every party: it depends only on public parameters and the key.
type pairCode struct {
	fp        paillier.FixedPoint
	valueBits int
	beta      *big.Int // B = round(β²·2^G)
	slotBits  int      // W: one blinded result plus its offset
	perCt     int      // results per packed plaintext
}

// newPairCode sizes the slots for representatives bounded by
// |V| < 2^valueBits over at most maxCols columns, and checks that at least
// one slot fits the key's plaintexts.
func newPairCode(pk *paillier.PublicKey, fracBits, valueBits int, beta float64, maxCols int) (*pairCode, error) {
	b := new(big.Float).SetFloat64(beta * beta * math.Exp2(pairBetaBits))
	B, _ := b.Int(nil)
	if B.Sign() < 0 || math.IsInf(beta*beta, 0) {
		return nil, fmt.Errorf("%w: β = %v", ErrParams, beta)
	}
	l := bitLen(maxCols)
	// 0 ≤ D = u·2^G·‖V−M‖² < 2^(l + G + 2·(valueBits + 1) + l) and
	// 0 ≤ B·S² < 2^(bits(B) + 2·(l + valueBits)); |x| is below the larger.
	xBits := max(pairBetaBits+2*valueBits+2+2*l, B.BitLen()+2*(l+valueBits)) + 1
	rBits := pairMaskBits + 1 + pairShiftBits // r < 2^(33+64)
	// |y| < 2^(xBits+rBits), |z| < 2^(xBits+2·rBits); one more for the
	// offset that makes a slot non-negative.
	slot := xBits + 2*rBits + 2
	room := pk.PlaintextModulus().BitLen() - 1
	if slot > room {
		return nil, fmt.Errorf("%w: a pair test needs %d-bit plaintexts, the key has %d bits", ErrParams, slot, room)
	}
	return &pairCode{fp: paillier.FixedPoint{FracBits: max(fracBits, 0)}, valueBits: valueBits,
		beta: B, slotBits: slot, perCt: room / slot}, nil
}

func bitLen(n int) int { return big.NewInt(int64(max(n, 1))).BitLen() }

// encode is the fixed-point V of rep on cols.
func (pc *pairCode) encode(rep []float64, cols []int) ([]*big.Int, error) {
	bound := new(big.Int).Lsh(big.NewInt(1), uint(pc.valueBits))
	out := make([]*big.Int, len(cols))
	for i, j := range cols {
		if j < 0 || j >= len(rep) {
			return nil, fmt.Errorf("%w: column %d outside the representative", ErrColumns, j)
		}
		v, err := pc.fp.Encode(rep[j])
		if err != nil || new(big.Int).Abs(v).Cmp(bound) >= 0 {
			return nil, fmt.Errorf("%w: mean %v of column %d", errPairRange, rep[j], j)
		}
		out[i] = v
	}
	return out, nil
}

// pairEncrypt is round 1 at A for one pair: E(V_j) for each j ∈ U, then
// E(Σ V_j²) and E(S_V²), u+2 ciphertexts (pairCiphertexts). The session
// encrypts each V_j of a local once for all its pairs (pairSums gives the
// other two).
func pairEncrypt(pk *paillier.PublicKey, random io.Reader, v []*big.Int) ([]*paillier.Ciphertext, error) {
	plain := make([]*big.Int, 0, pairCiphertexts(len(v)))
	for _, x := range v {
		e, err := pk.EncodeSigned(x)
		if err != nil {
			return nil, fmt.Errorf("bicluster: encode a representative: %w", err)
		}
		plain = append(plain, e)
	}
	sq, s2 := pairSums(v)
	plain = append(plain, sq, s2)
	cts, err := pk.EncryptMany(random, plain)
	if err != nil {
		return nil, fmt.Errorf("bicluster: encrypt a representative: %w", err)
	}
	return cts, nil
}

// pairSums are Σ V_j² and (Σ V_j)², both non-negative.
func pairSums(v []*big.Int) (sumSq, sqSum *big.Int) {
	sumSq, sum := new(big.Int), new(big.Int)
	for _, x := range v {
		sumSq.Add(sumSq, new(big.Int).Mul(x, x))
		sum.Add(sum, x)
	}
	return sumSq, sum.Mul(sum, sum)
}

// pairCiphertexts is how many ciphertexts A sends per pair on u columns.
func pairCiphertexts(u int) int { return u + 2 }

// blinder draws r = (2^32 + u)·2^e and s uniform in [0, r).
func blinder(random io.Reader) (r, s *big.Int, err error) {
	var b [5]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return nil, nil, fmt.Errorf("bicluster: blinding randomness: %w", err)
	}
	u := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	e := uint(b[4]) % pairShiftBits
	r = new(big.Int).Lsh(new(big.Int).SetUint64(1<<pairMaskBits+u), e)
	if s, err = rand.Int(random, r); err != nil {
		return nil, nil, fmt.Errorf("bicluster: blinding randomness: %w", err)
	}
	return r, s, nil
}

// blind is E(r·x + s) for fresh r, s: a sign-preserving mask.
func blind(pk *paillier.PublicKey, random io.Reader, c *paillier.Ciphertext) (*paillier.Ciphertext, error) {
	r, s, err := blinder(random)
	if err != nil {
		return nil, err
	}
	return pk.AddPlain(pk.MulPlain(c, r), s), nil
}

// pairEvaluate is round 2 at B: from A's ciphertexts (pairEncrypt of V)
// and B's own M, E(r·x_A + s) and E(r'·x_B + s'), re-randomised.
func (pc *pairCode) pairEvaluate(pk *paillier.PublicKey, random io.Reader, enc []*paillier.Ciphertext, m []*big.Int) ([2]*paillier.Ciphertext, error) {
	var out [2]*paillier.Ciphertext
	u := len(m)
	if len(enc) != pairCiphertexts(u) || u == 0 {
		return out, fmt.Errorf("bicluster: %d ciphertexts for a pair test on %d columns", len(enc), u)
	}
	scale := new(big.Int).Lsh(big.NewInt(int64(u)), pairBetaBits) // 2^G·u
	sumM, sumM2 := new(big.Int), new(big.Int)
	for _, x := range m {
		sumM.Add(sumM, x)
		sumM2.Add(sumM2, new(big.Int).Mul(x, x))
	}
	// D = scale·(ΣV² − 2ΣV·M + ΣM²): E(ΣV²) raised to scale, each E(V_j)
	// to −2·scale·M_j, and the constant added.
	// The terms with negative exponents (M_j > 0) are multiplied up
	// first and inverted once: an inverse modulo n² costs more than the
	// short exponentiation.
	pos := pk.MulPlain(enc[u], scale)
	var neg *paillier.Ciphertext
	for j, x := range m {
		k := new(big.Int).Mul(x, scale)
		k.Lsh(k, 1) // the exponent is −k
		switch k.Sign() {
		case 1:
			neg = addOr(pk, neg, pk.MulPlain(enc[j], k))
		case -1:
			pos = pk.Add(pos, pk.MulPlain(enc[j], k.Neg(k)))
		}
	}
	d := pos
	if neg != nil {
		d = pk.Sub(pos, neg)
	}
	d = pk.AddPlain(d, mod(new(big.Int).Mul(scale, sumM2), pk.PlaintextModulus()))
	// x_A = D − B·S_V² − 1, x_B = D − B·S_M² − 1.
	xa := pk.AddPlain(pk.Sub(d, pk.MulPlain(enc[u+1], pc.beta)), mod(big.NewInt(-1), pk.PlaintextModulus()))
	cb := new(big.Int).Mul(pc.beta, new(big.Int).Mul(sumM, sumM))
	xb := pk.AddPlain(d, mod(cb.Neg(cb.Add(cb, big.NewInt(1))), pk.PlaintextModulus()))
	for i, x := range []*paillier.Ciphertext{xa, xb} {
		y, err := blind(pk, random, x)
		if err != nil {
			return out, err
		}
		if out[i], err = pk.Rerandomize(random, y); err != nil {
			return out, fmt.Errorf("bicluster: re-randomise: %w", err)
		}
	}
	return out, nil
}

func mod(x, n *big.Int) *big.Int { return new(big.Int).Mod(x, n) }

// addOr is a·b, or b when a is nil.
func addOr(pk *paillier.PublicKey, a, b *paillier.Ciphertext) *paillier.Ciphertext {
	if a == nil {
		return b
	}
	return pk.Add(a, b)
}

// pairBlind is round 3 at A: E(r_A·y + s_A) for each of B's results,
// spread over the cores (random must be safe for concurrent use, as
// crypto/rand.Reader is).
func pairBlind(pk *paillier.PublicKey, random io.Reader, ys []*paillier.Ciphertext) ([]*paillier.Ciphertext, error) {
	out := make([]*paillier.Ciphertext, len(ys))
	err := forEach(len(ys), func(i int) error {
		z, err := blind(pk, random, ys[i])
		out[i] = z
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// packedCount is how many ciphertexts pairPack makes of n results.
func (pc *pairCode) packedCount(n int) int { return (n + pc.perCt - 1) / pc.perCt }

// pairPack packs the results, perCt per ciphertext, each slot holding
// z + 2^(W−1) in [0, 2^W): slot i of a ciphertext is the coefficient of
// 2^(W·i), built by Horner's rule (W squarings per slot).
func (pc *pairCode) pairPack(pk *paillier.PublicKey, zs []*paillier.Ciphertext) []*paillier.Ciphertext {
	offset := new(big.Int).Lsh(big.NewInt(1), uint(pc.slotBits-1))
	shift := new(big.Int).Lsh(big.NewInt(1), uint(pc.slotBits))
	out := make([]*paillier.Ciphertext, pc.packedCount(len(zs)))
	_ = forEach(len(out), func(k int) error {
		lo := k * pc.perCt
		chunk := zs[lo:min(lo+pc.perCt, len(zs))]
		acc := pk.AddPlain(chunk[len(chunk)-1], offset)
		for i := len(chunk) - 2; i >= 0; i-- {
			acc = pk.Add(pk.MulPlain(acc, shift), pk.AddPlain(chunk[i], offset))
		}
		out[k] = acc
		return nil
	})
	return out
}

// pairSigns reads n results from the decrypted packed plaintexts: true
// where the result is negative. A slot or plaintext outside what n
// in-range results make is an error, never a guess.
func (pc *pairCode) pairSigns(plain []*big.Int, n int) ([]bool, error) {
	if len(plain) != pc.packedCount(n) {
		return nil, fmt.Errorf("bicluster: %d packed plaintexts for %d results", len(plain), n)
	}
	offset := new(big.Int).Lsh(big.NewInt(1), uint(pc.slotBits-1))
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(pc.slotBits)), big.NewInt(1))
	out := make([]bool, 0, n)
	for k, p := range plain {
		slots := min(pc.perCt, n-k*pc.perCt)
		if p.Sign() < 0 || p.BitLen() > slots*pc.slotBits {
			return nil, fmt.Errorf("bicluster: packed pair results %d out of range", k)
		}
		rest := new(big.Int).Set(p)
		for range slots {
			v := new(big.Int).And(rest, mask)
			out = append(out, v.Cmp(offset) < 0)
			rest.Rsh(rest, uint(pc.slotBits))
		}
	}
	return out, nil
}

// pairSimilar is the merge bit of each pair from its two signs (x_A then
// x_B, as pairEvaluate returns them): similar when either is negative.
func pairSimilar(signs []bool) []bool {
	out := make([]bool, len(signs)/2)
	for i := range out {
		out[i] = signs[2*i] || signs[2*i+1]
	}
	return out
}
