package lattice

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// ParamsBGV13 names the one parameter set (see the package doc, Parameters):
// ring degree 2^13, a ciphertext modulus Q of three 60-bit primes (180
// bits), plaintext modulus T a 58-bit prime, ternary secrets, σ = 3.2,
// uniform smudging of 2^114 per decryption share, at most MaxMembers
// members. Key files record the name, so a key is never used with other
// parameters.
const ParamsBGV13 = "bgv-n13-q180-t58"

// MaxMembers bounds the members of a key (and so the summands of an
// aggregate and the size of a quorum): the noise budget of the package doc
// is checked for this many.
const MaxMembers = 64

// The moduli of ParamsBGV13. Each q_i and T is a prime ≡ 1 mod 2^14 (so the
// negacyclic NTT of degree 2^13 exists modulo it), taken as the largest such
// primes below 2^60 (q_i) and 2^58 (T) by Lattigo's NTT-friendly prime
// generator; TestParamsPrimes regenerates them.
var (
	paramsQ = []uint64{0xfffffffffffc001, 0xffffffffffe8001, 0xffffffffffd8001}
	paramsT = uint64(0x3fffffffff34001)
)

const (
	paramsLogN = 13
	// smudgeBits is k: every decryption share carries noise drawn uniformly
	// from [-2^k, 2^k).
	smudgeBits = 114
	// freshNoiseBound bounds one coefficient of a fresh Gaussian error
	// (σ = 3.2 truncated at 19.2, then rounded).
	freshNoiseBound = 19
)

// Errors callers can test with errors.Is.
var (
	// ErrParams is a parameter set, layout or plan the package refuses.
	ErrParams = errors.New("lattice: unsupported parameters")
	// ErrRange is a value outside the declared bound: an input before
	// encryption, or a decrypted sum that no in-range inputs can produce.
	ErrRange = errors.New("lattice: value out of declared range")
	// ErrMalformed is bytes that do not decode to a well-formed object of
	// the expected shape.
	ErrMalformed = errors.New("lattice: malformed encoding")
	// ErrMismatch is an object of another key, context, shape, target or
	// quorum than the one expected.
	ErrMismatch = errors.New("lattice: object does not belong here")
	// ErrPolicy is a decryption the target's inputs do not justify: a
	// contribution missing, added or changed against the committed ones, or
	// fewer inputs than the floor.
	ErrPolicy = errors.New("lattice: refused to decrypt")
	// ErrDisagree means the quorums that decrypted one aggregate disagree:
	// some decryption share is wrong (see Verdict).
	ErrDisagree = errors.New("lattice: decryptions disagree")
)

// Params is a lattice parameter set with the noise budget checked. The zero
// value is unusable; get one from NewParams.
type Params struct {
	name string
	bgv  bgv.Parameters
	// roots is, by prime of Q, its NTT roots with their Shoup companions
	// (rootsOf), made once here and only read: every transform's
	// sparseNTT starts from them rather than making its own (0.3 ms and
	// 0.7 MB each, and a level makes a Decryptor per target).
	roots []*shoupRoots
}

// NewParams builds the named parameter set and checks its noise budget.
func NewParams(name string) (Params, error) {
	if name != ParamsBGV13 {
		return Params{}, fmt.Errorf("%w: unknown parameter set %.64q", ErrParams, name)
	}
	var p Params
	err := safely(func() error {
		b, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
			LogN:             paramsLogN,
			Q:                paramsQ,
			PlaintextModulus: paramsT,
			Xs:               ring.Ternary{P: 2.0 / 3},
			Xe:               rlwe.DefaultXe,
		})
		if err != nil {
			return err
		}
		p = Params{name: name, bgv: b}
		for _, s := range b.RingQ().SubRings {
			p.roots = append(p.roots, rootsOf(s))
		}
		return nil
	})
	if err != nil {
		return Params{}, fmt.Errorf("%w: %w", ErrParams, err)
	}
	if err := p.checkBudget(MaxMembers); err != nil {
		return Params{}, err
	}
	return p, nil
}

// Name is the parameter set's name, as key files record it.
func (p Params) Name() string { return p.name }

// Slots is the number of plaintext coefficients per ciphertext (the ring
// degree).
func (p Params) Slots() int { return p.bgv.N() }

// PlaintextModulus is T.
func (p Params) PlaintextModulus() uint64 { return p.bgv.PlaintextModulus() }

// LogQ is log2 of the ciphertext modulus.
func (p Params) LogQ() float64 { return p.bgv.LogQ() }

// levels is the number of RNS primes of Q.
func (p Params) levels() int { return p.bgv.MaxLevel() + 1 }

// polyBytes is the encoded size of one polynomial modulo Q.
func (p Params) polyBytes() int { return p.levels() * p.Slots() * 8 }

// CiphertextBytes is the encoded size of one ciphertext (two polynomials).
func (p Params) CiphertextBytes() int { return 2 * p.polyBytes() }

// aggregateNoise bounds one coefficient of the noise of a sum of `summands`
// fresh encryptions under the collective key of `members` parties: each is
// u·e_pk + e0 + e1·s (Lattigo's public-key encryption without P), with u
// ternary, e_pk the sum of the members' key-generation errors and s the sum
// of their ternary secrets, so |u·e_pk| and |e1·s| are at most
// n·members·19 and |e0| at most 19 (n the ring degree). This is a worst
// case, not a tail bound: it holds for every draw.
func (p Params) aggregateNoise(members, summands int) *big.Int {
	n := int64(p.Slots())
	one := big.NewInt(1 + 2*n*int64(members))
	one.Mul(one, big.NewInt(freshNoiseBound))
	return one.Mul(one, big.NewInt(int64(summands)))
}

// checkBudget checks that a sum of `members` contributions under a key of
// `members` parties, decrypted by a quorum of `members`, always decrypts
// correctly: T·(|e_ct| + quorum·2^k) + T < Q/2, where the decoder
// recovers m from m + T·e centred modulo Q (the BGV decryption Lattigo
// implements).
func (p Params) checkBudget(members int) error {
	q := p.bgv.RingQ().ModulusAtLevel[p.bgv.MaxLevel()]
	t := new(big.Int).SetUint64(p.PlaintextModulus())
	e := p.aggregateNoise(members, members)
	share := new(big.Int).Lsh(big.NewInt(1), smudgeBits)
	e.Add(e, share.Mul(share, big.NewInt(int64(members))))
	lhs := e.Mul(e, t)
	lhs.Add(lhs, t)
	lhs.Lsh(lhs, 1)
	if lhs.Cmp(q) >= 0 {
		return fmt.Errorf("%w: noise of %d members does not fit the modulus", ErrParams, members)
	}
	return nil
}

// SmudgingDistance is log2 of the statistical distance, per released
// coefficient, between a decryption share of an aggregate of `members`
// contributions and one that depends on nothing but the sum (the package
// doc, Smudging): the uniform noise of one honest share, of width 2^(k+1),
// hides the aggregate's noise, at most B, within B/2^(k+1).
func (p Params) SmudgingDistance(members int) float64 {
	b := p.aggregateNoise(members, members)
	f, _ := new(big.Float).SetInt(b).Float64()
	return math.Log2(f) - float64(smudgeBits+1)
}
