package paillier

import (
	"fmt"
	"math"
	"math/big"

	"github.com/cohortdm/cohort/paillier/internal/gmpexp"
)

// MaxParties is the largest number of decryption parties a threshold key
// may have. Δ = Parties! grows quickly (64! has 296 bits), which lengthens
// only the small Lagrange exponents used by Combine.
const MaxParties = 256

// challengeBits is the length of the Fiat–Shamir challenge e.
const challengeBits = 256

// weightBits is the length of the random-linear-combination weights of
// the batched share proof.
const weightBits = 128

// vWindow is the widest window of the fixed-base table for v (6 bits, a
// 23 MiB table, at 2048-bit n; 5 bits at 4096-bit n, where 6 bits would
// exceed maxTableBytes).
const vWindow = 6

// ThresholdPublicKey is the public key of a t-of-N threshold Damgård–Jurik
// key (Damgård–Jurik 2001 §4, after Shoup 2000) dealt by a trusted dealer
// from safe primes p = 2p'+1, q = 2q'+1.
type ThresholdPublicKey struct {
	PublicKey
	// KeyID is SHA-256 over the canonical encoding of every public value
	// below and of n, s and H. It is bound into every share proof.
	KeyID [32]byte
	// Parties is N, the number of share holders; Threshold is t: any t+1
	// shares decrypt, t shares reveal nothing.
	Parties, Threshold int
	// V generates the group of squares of Z*_{n^(s+1)}.
	V *big.Int
	// VerificationKeys[i-1] = V^(Δ·s_i) mod n^(s+1) for party i.
	VerificationKeys []*big.Int
}

// KeyShare is party Index's secret share.
type KeyShare struct {
	// Index is the party index, 1..Parties.
	Index int
	// Secret is Δ·s_i mod n^s·n', where s_i = f(i) is the party's Shamir
	// share of d (d ≡ 0 mod n', d ≡ 1 mod n^s) and Δ = Parties!. The dealer
	// multiplies by Δ and reduces, which is equivalent for every use (all
	// bases live in the group of squares, of order n^s·n') and keeps the
	// exponent as short as possible.
	Secret *big.Int
	// Public is the threshold public key.
	Public *ThresholdPublicKey
}

// ProofContext is the domain-separation context of a share proof. The key
// id and the party index are bound in addition.
type ProofContext struct {
	Job, Phase     string
	Round, Attempt int
}

// Proof is a Fiat–Shamir proof of equality of discrete logarithms
// log_u ũ = log_v v_i (Chaum–Pedersen over the squares of Z*_{n^(s+1)}).
// E is the challenge (256 bits) and Z = ρ + E·x the response, with ρ
// uniform of |n^(s+1)| + 256 + 128 bits, so that Z hides x statistically.
type Proof struct {
	E, Z *big.Int
}

// DecryptionShare is one party's decryption share for a batch of
// ciphertexts: Values[j] = c_j^(2Δs_i) mod n^(s+1), and one proof for the
// whole batch.
type DecryptionShare struct {
	Index  int
	Values []*big.Int
	Proof  *Proof

	elemSize int // serialised element size, set when the key is known
}

// Delta returns Δ = Parties!.
func (pk *ThresholdPublicKey) Delta() *big.Int {
	return new(big.Int).MulRange(1, int64(pk.Parties))
}

// rhoBits is the length of the proof blinder ρ: at least |x| + |e| + 128
// where x < n^s·n' < n^(s+1).
func (pk *ThresholdPublicKey) rhoBits() int {
	return pk.ns1().BitLen() + challengeBits + statBits
}

// computeKeyID hashes the canonical encoding of the public key.
func (pk *ThresholdPublicKey) computeKeyID() [32]byte {
	t := newTranscript("cohort/paillier/threshold-key/v1")
	t.int(int64(pk.s()))
	t.int(int64(pk.Parties))
	t.int(int64(pk.Threshold))
	t.big(pk.N)
	t.big(pk.H)
	t.big(pk.V)
	for _, vk := range pk.VerificationKeys {
		t.big(vk)
	}
	var id [32]byte
	copy(id[:], t.sum())
	return id
}

func (pk *ThresholdPublicKey) vPow(e *big.Int) *big.Int {
	if pk.V == nil {
		return new(big.Int)
	}
	if fb := tableFor(pk.V, pk.ns1(), pk.rhoBits()+1, vWindow, 1); fb != nil {
		return fb.exp(e)
	}
	// No table within the budget. e is secret when proving (ρ).
	return gmpexp.Exp(pk.V, e, pk.ns1())
}

// Check verifies the public key as the decoders do: the modulus (key-size
// policy, no prime factor below 2^18, not a perfect power, not prime), the
// derived moduli, party counts, the fixed base H, v and every v_i (units,
// not ±1, order above 256; v and the v_i with Jacobi symbol +1, the v_i
// distinct and different from v) and the key id. What it cannot check
// without the factorisation: that n = p·q with safe primes, that v generates
// the squares and that the v_i are powers of v; the dealer is trusted for
// those (Damgård–Jurik 2001, §4, assume a trusted dealer).
func (pk *ThresholdPublicKey) Check() error {
	if pk == nil || pk.N == nil {
		return fmt.Errorf("%w: incomplete threshold key", ErrInvalidKey)
	}
	if err := checkModulus(pk.N); err != nil {
		return err
	}
	return pk.checkThreshold()
}

// checkThreshold is Check without the modulus checks, for decoders that
// have already made them.
func (pk *ThresholdPublicKey) checkThreshold() error {
	if err := pk.checkShape(); err != nil {
		return err
	}
	if err := checkElement(pk.H, pk.N, pk.NS1, false, "fixed base H"); err != nil {
		return err
	}
	if err := checkElement(pk.V, pk.N, pk.NS1, true, "v"); err != nil {
		return err
	}
	errs := make([]error, len(pk.VerificationKeys))
	parallel(len(errs), func(i int) {
		errs[i] = checkElement(pk.VerificationKeys[i], pk.N, pk.NS1, true, fmt.Sprintf("verification key %d", i+1))
	})
	seen := make(map[string]int, len(errs)+1)
	seen[string(pk.V.Bytes())] = 0
	for i, err := range errs {
		if err != nil {
			return err
		}
		k := string(pk.VerificationKeys[i].Bytes())
		if j, dup := seen[k]; dup {
			// x_i ≡ x_j modulo the order of v: never for an honest dealer
			// except with negligible probability.
			if j == 0 {
				return fmt.Errorf("%w: verification key %d equals v", ErrInvalidKey, i+1)
			}
			return fmt.Errorf("%w: verification keys %d and %d are equal", ErrInvalidKey, j, i+1)
		}
		seen[k] = i + 1
	}
	if pk.computeKeyID() != pk.KeyID {
		return fmt.Errorf("%w: key id mismatch", ErrInvalidKey)
	}
	return nil
}

// checkShape is the cheap part of Check that every operation needs so that
// it cannot panic: non-nil fields with the right relations and sizes, party
// counts, one verification key per party, V and every v_i in (0, n^(s+1)).
// It makes comparisons only (no gcd, no exponentiation), so that it costs
// nothing next to Combine's 0.2 ms; Check does the rest.
func (pk *ThresholdPublicKey) checkShape() error {
	if pk == nil || pk.N == nil || pk.NS == nil || pk.NS1 == nil || pk.H == nil || pk.V == nil {
		return fmt.Errorf("%w: incomplete threshold key", ErrInvalidKey)
	}
	if err := pk.PublicKey.checkShape(); err != nil {
		return err
	}
	if err := checkPartiesThreshold(pk.Parties, pk.Threshold); err != nil {
		return err
	}
	if len(pk.VerificationKeys) != pk.Parties {
		return fmt.Errorf("%w: %d verification keys for %d parties", ErrInvalidKey, len(pk.VerificationKeys), pk.Parties)
	}
	inRange := func(x *big.Int) bool { return x != nil && x.Sign() > 0 && x.Cmp(pk.NS1) < 0 }
	for i, vk := range pk.VerificationKeys {
		if !inRange(vk) {
			return fmt.Errorf("%w: verification key %d outside (0, n^(s+1))", ErrInvalidKey, i+1)
		}
	}
	if !inRange(pk.V) || !inRange(pk.H) {
		return fmt.Errorf("%w: v or H outside (0, n^(s+1))", ErrInvalidKey)
	}
	return nil
}

// PrecomputeTables builds the key's wide fixed-base tables (of the
// encryption base H and the verification base v) now, instead of once their
// uses have repaid them (a few hundred encryptions and share checks): a
// long-running node that does so holds their memory (80 MiB at 2048 bits)
// from the start rather than stepping up a few hundred jobs in, and its
// first jobs encrypt at full speed. It reports whether both are built;
// false when the budget (SetFixedBaseBudget) leaves no room for them, or
// while another call is building one.
func (pk *ThresholdPublicKey) PrecomputeTables() bool {
	h := pk.precomputeH()
	if pk.V == nil {
		return h
	}
	return pk.precomputeV() && h
}

// precomputeV builds the wide table of v now; it reports whether it is
// built.
func (pk *ThresholdPublicKey) precomputeV() bool {
	_, ok := tableFor(pk.V, pk.ns1(), pk.rhoBits()+1, vWindow, math.MaxInt32).(*fixedBase)
	return ok
}
