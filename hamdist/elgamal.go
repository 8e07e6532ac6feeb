package hamdist

import (
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"sync"

	"github.com/cloudflare/circl/group"
)

// g is the group: ristretto255 (RFC 9496), prime order ℓ ≈ 2^252, where
// the decisional Diffie–Hellman assumption the paper's proofs rest on is
// believed to hold. The paper writes it multiplicatively (g^m, c₁·c₂);
// circl writes it additively (m·G, C₁+C₂); comments give the paper's form.
var g = group.Ristretto255

// ElementLen is the length of an encoded ristretto255 element.
const ElementLen = 32

// CiphertextLen is the length of an encoded ciphertext: c₁ then c₂.
const CiphertextLen = 2 * ElementLen

// PrivateKey is the key holder's (the paper's Alice's) ElGamal key pair
// (Yang, Zhong and Wright, §3.2): x uniform in [1, ℓ−1] and h = g^x. It is
// drawn fresh for each run and never leaves the key holder.
type PrivateKey struct {
	x group.Scalar
	h group.Element
}

// PublicKey is h = g^x.
type PublicKey struct{ h group.Element }

// GenerateKey draws a key pair from crypto/rand.
func GenerateKey() *PrivateKey {
	x := g.RandomNonZeroScalar(rand.Reader)
	return &PrivateKey{x: x, h: g.NewElement().MulGen(x)}
}

// Public returns the public half.
func (k *PrivateKey) Public() PublicKey { return PublicKey{h: k.h} }

// Ciphertext is an ElGamal ciphertext (c₁, c₂) = (m·h^k, g^k).
type Ciphertext struct{ C1, C2 group.Element }

// Value is an input to the generalised protocol: an exponent m, encrypted
// as g^m. Exact comparisons use HashValue (two values meet only when they
// are equal), thresholded ones IntValue.
type Value struct{ s group.Scalar }

// valueDST separates HashValue's scalars from every other use of the hash.
var valueDST = []byte("cohort-hamdist-v1:value")

// HashValue maps a canonical value encoding (psi.EncodeKey's) to an
// exponent; distinct encodings collide with probability about 2^-252.
func HashValue(canon []byte) Value { return Value{g.HashToScalar(canon, valueDST)} }

// IntValue is v as an exponent (v mod ℓ): v and v+d differ by d in the
// exponent, which the thresholded comparison relies on.
func IntValue(v int64) Value {
	s := g.NewScalar()
	if v >= 0 {
		s.SetUint64(uint64(v))
	} else {
		s.SetUint64(uint64(-(v + 1)))
		s.Add(s, g.NewScalar().SetUint64(1))
		s.Neg(s)
	}
	return Value{s}
}

// Encrypt is Fig. 2, step 1, for each a_i: E(g^{a_i}) with fresh k_i.
// The work is spread over every core.
func (k *PrivateKey) Encrypt(a []Value) []Ciphertext {
	out := make([]Ciphertext, len(a))
	parallel(len(a), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = encrypt(k.h, g.NewElement().MulGen(a[i].s))
		}
	})
	return out
}

// encrypt is E(m) = (m·h^r, g^r) with r uniform.
func encrypt(h, m group.Element) Ciphertext {
	r := g.RandomScalar(rand.Reader)
	c1 := g.NewElement().Mul(h, r)
	return Ciphertext{C1: c1.Add(c1, m), C2: g.NewElement().MulGen(r)}
}

// Windows gives, for each position i, the values w_{i,1..W} the peer's
// a_i is compared with: one (b_i itself) for the paper's generalised
// Hamming distance, b_i−t … b_i+t for the thresholded one. All windows
// have the same width W, and the values of one window are distinct.
type Windows [][]Value

// ExactWindows is the paper's comparison: a_i against b_i.
func ExactWindows(b []Value) Windows {
	out := make(Windows, len(b))
	for i, v := range b {
		out[i] = []Value{v}
	}
	return out
}

// ThresholdWindows compares a_i with every integer within t of b_i, so
// that position i counts as equal iff |a_i − b_i| ≤ t.
func ThresholdWindows(b []int64, t int) Windows {
	out := make(Windows, len(b))
	for i, v := range b {
		w := make([]Value, 0, 2*t+1)
		for d := -t; d <= t; d++ {
			w = append(w, IntValue(v+int64(d)))
		}
		out[i] = w
	}
	return out
}

// ErrLength is returned when the peer's vector has another length than
// the caller's.
var ErrLength = errors.New("hamdist: vector lengths differ")

// Compare is Fig. 2, step 2 (Bob), generalised to windows: for every
// position i and every w in window i it forms
//
//	e″ = (E(g^w) / e_i)^r = E(g^{r(w − a_i)}),   r uniform in [1, ℓ−1],
//
// with fresh encryption randomness s, computed as (g^{rw}·h^s·c₁^{−r},
// g^s·c₂^{−r}); e″ decrypts to 1 iff w = a_i, and else to a uniform
// element ≠ 1 (the r hides the difference; the printed derivation drops
// it). The n·W results are returned in a uniformly random order, which
// hides which positions matched.
func Compare(pub PublicKey, e []Ciphertext, win Windows) ([]Ciphertext, error) {
	if len(e) != len(win) {
		return nil, ErrLength
	}
	width := 0
	if len(win) > 0 {
		width = len(win[0])
	}
	for _, w := range win {
		if len(w) != width {
			return nil, errors.New("hamdist: windows of different widths")
		}
	}
	out := make([]Ciphertext, len(e)*width)
	perm := permutation(len(out))
	parallel(len(e), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j, w := range win[i] {
				out[perm[i*width+j]] = blind(pub.h, e[i], w.s)
			}
		}
	})
	return out, nil
}

// blind is one e″ of Compare.
func blind(h group.Element, e Ciphertext, w group.Scalar) Ciphertext {
	r := g.RandomNonZeroScalar(rand.Reader)
	s := g.RandomScalar(rand.Reader)
	nr := g.NewScalar().Neg(r)
	c1 := g.NewElement().MulGen(g.NewScalar().Mul(r, w))
	c1.Add(c1, g.NewElement().Mul(h, s))
	c1.Add(c1, g.NewElement().Mul(e.C1, nr))
	c2 := g.NewElement().MulGen(s)
	c2.Add(c2, g.NewElement().Mul(e.C2, nr))
	return Ciphertext{C1: c1, C2: c2}
}

// decrypt is c₁·(c₂^x)^{−1}.
func (k *PrivateKey) decrypt(c Ciphertext) group.Element {
	m := g.NewElement().Mul(c.C2, k.x)
	return m.Neg(m).Add(m, c.C1)
}

// CountOnes is Fig. 2, step 3 (Alice): how many of e decrypt to 1 (the
// identity). With Compare's windows it is the number of positions whose
// values meet; the generalised Hamming distance is n minus it.
func (k *PrivateKey) CountOnes(e []Ciphertext) int {
	return k.count(e, g.Identity())
}

func (k *PrivateKey) count(e []Ciphertext, want group.Element) int {
	counts := make([]int, len(e))
	parallel(len(e), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if k.decrypt(e[i]).IsEqual(want) {
				counts[i] = 1
			}
		}
	})
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// EncryptBits is Fig. 1, step 1 (binary vectors): E(g) for a_i = 0 and
// E(g^{−1}) for a_i = 1.
func (k *PrivateKey) EncryptBits(a []bool) []Ciphertext {
	out := make([]Ciphertext, len(a))
	parallel(len(a), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			m := g.Generator()
			if a[i] {
				m.Neg(m)
			}
			out[i] = encrypt(k.h, m)
		}
	})
	return out
}

// FlipBits is Fig. 1, step 2 (Bob): e_i rerandomised where b_i = 0, its
// inverse (c₁^{−1}, c₂^{−1}) rerandomised where b_i = 1, in a random order.
// Rerandomising multiplies by a fresh E(1) = (h^s, g^s).
func FlipBits(pub PublicKey, e []Ciphertext, b []bool) ([]Ciphertext, error) {
	if len(e) != len(b) {
		return nil, ErrLength
	}
	out := make([]Ciphertext, len(e))
	perm := permutation(len(e))
	parallel(len(e), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c1, c2 := e[i].C1.Copy(), e[i].C2.Copy()
			if b[i] {
				c1.Neg(c1)
				c2.Neg(c2)
			}
			one := encrypt(pub.h, g.Identity())
			out[perm[i]] = Ciphertext{C1: c1.Add(c1, one.C1), C2: c2.Add(c2, one.C2)}
		}
	})
	return out, nil
}

// CountInverse is Fig. 1, step 3 (Alice): how many of e decrypt to g^{−1},
// the Hamming distance.
func (k *PrivateKey) CountInverse(e []Ciphertext) int {
	return k.count(e, g.NewElement().Neg(g.Generator()))
}

// permutation is a uniformly random permutation of [0, n), from a ChaCha8
// generator seeded from crypto/rand.
func permutation(n int) []int {
	var seed [32]byte
	rand.Read(seed[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return mrand.New(mrand.NewChaCha8(seed)).Perm(n)
}

// parallel runs f over [0, n) split into one contiguous range per core,
// and waits for every range.
func parallel(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i*n/w, (i+1)*n/w)
		}()
	}
	wg.Wait()
}

// fingerprint names a public key in a run's messages (its encoding).
func (p PublicKey) fingerprint() []byte {
	b, err := p.h.MarshalBinaryCompress()
	if err != nil {
		panic(fmt.Sprintf("internal error: ristretto255 encoding failed: %v", err)) // circl's encoding of a valid element cannot fail
	}
	return b
}
