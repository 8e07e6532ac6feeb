package paillier

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"sort"

	"crypto/sha3"

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

// DealThreshold deals a plain-Paillier (s = 1) threshold key with an n of
// bits bits to parties parties, any threshold+1 of whom can decrypt. It
// requires parties >= threshold+1; use parties >= 2·threshold+1 (honest
// majority) so that t corrupt parties can neither decrypt alone nor block
// decryption.
func DealThreshold(random io.Reader, bits, parties, threshold int) (*ThresholdPublicKey, []*KeyShare, error) {
	return DealThresholdDJ(random, bits, 1, parties, threshold)
}

// DealThresholdDJ is DealThreshold for Damgård–Jurik degree s.
func DealThresholdDJ(random io.Reader, bits, s, parties, threshold int) (*ThresholdPublicKey, []*KeyShare, error) {
	if random == nil {
		random = rand.Reader
	}
	if !acceptedBits(bits) || bits%2 != 0 {
		return nil, nil, sizePolicyError(bits)
	}
	if err := checkPartiesThreshold(parties, threshold); err != nil {
		return nil, nil, err
	}
	p, q, err := generateSafePrimePair(random, bits/2)
	if err != nil {
		return nil, nil, err
	}
	return DealThresholdFromPrimes(random, p, q, s, parties, threshold)
}

func checkPartiesThreshold(parties, threshold int) error {
	if parties < 1 || parties > MaxParties {
		return fmt.Errorf("%w: parties must be in 1..%d", ErrInvalidKey, MaxParties)
	}
	if threshold < 0 || parties < threshold+1 {
		return fmt.Errorf("%w: need 0 <= threshold and parties >= threshold+1", ErrInvalidKey)
	}
	return nil
}

// DealThresholdFromPrimes deals a threshold key from given safe primes
// (for tests and benchmarks that cache primes).
func DealThresholdFromPrimes(random io.Reader, p, q *big.Int, s, parties, threshold int) (*ThresholdPublicKey, []*KeyShare, error) {
	if random == nil {
		random = rand.Reader
	}
	if err := checkPartiesThreshold(parties, threshold); err != nil {
		return nil, nil, err
	}
	if p == nil || q == nil || p.Sign() <= 0 || q.Sign() <= 0 || p.Cmp(q) == 0 || p.BitLen() != q.BitLen() {
		return nil, nil, fmt.Errorf("%w: p and q must be distinct and of equal size", ErrInvalidKey)
	}
	pp := new(big.Int).Rsh(p, 1) // p'
	qq := new(big.Int).Rsh(q, 1) // q'
	for _, x := range []*big.Int{p, q, pp, qq} {
		if !x.ProbablyPrime(20) {
			return nil, nil, fmt.Errorf("%w: p and q must be safe primes", ErrInvalidKey)
		}
	}
	if pp.Cmp(big.NewInt(int64(parties))) <= 0 || qq.Cmp(big.NewInt(int64(parties))) <= 0 {
		return nil, nil, fmt.Errorf("%w: primes too small for %d parties", ErrInvalidKey, parties)
	}
	n := new(big.Int).Mul(p, q)
	pub, err := NewPublicKey(random, n, s, nil)
	if err != nil {
		return nil, nil, err
	}
	nn := new(big.Int).Mul(pp, qq) // n'
	ns := pub.NS
	ns1 := pub.NS1
	mod := new(big.Int).Mul(ns, nn) // n^s·n', the order of the squares
	// d ≡ 0 mod n', d ≡ 1 mod n^s.
	d := new(big.Int).ModInverse(nn, ns)
	if d == nil {
		return nil, nil, fmt.Errorf("%w: gcd(n', n) ≠ 1", ErrInvalidKey)
	}
	d.Mul(d, nn)
	coeffs := make([]*big.Int, threshold+1)
	coeffs[0] = d
	for k := 1; k <= threshold; k++ {
		if coeffs[k], err = rand.Int(random, mod); err != nil {
			return nil, nil, err
		}
	}
	// v: a random square that generates the squares (order n^s·n'); with
	// the factorisation we can check that no prime factor of the order is
	// missing.
	var v *big.Int
	for {
		x, err := randomUnit(random, ns1)
		if err != nil {
			return nil, nil, err
		}
		v = x.Mul(x, x)
		v.Mod(v, ns1)
		ok := true
		for _, f := range []*big.Int{p, q, pp, qq} {
			e := new(big.Int).Quo(mod, f)
			if new(big.Int).Exp(v, e, ns1).Cmp(one) == 0 {
				ok = false
				break
			}
		}
		if ok {
			break
		}
	}
	tpk := &ThresholdPublicKey{
		PublicKey:        *pub,
		Parties:          parties,
		Threshold:        threshold,
		V:                v,
		VerificationKeys: make([]*big.Int, parties),
	}
	delta := tpk.Delta()
	shares := make([]*KeyShare, parties)
	for i := 1; i <= parties; i++ {
		// Horner: f(i) mod n^s·n'.
		fi := new(big.Int).Set(coeffs[threshold])
		bi := big.NewInt(int64(i))
		for k := threshold - 1; k >= 0; k-- {
			fi.Mul(fi, bi)
			fi.Add(fi, coeffs[k])
			fi.Mod(fi, mod)
		}
		x := fi.Mul(fi, delta)
		x.Mod(x, mod)
		shares[i-1] = &KeyShare{Index: i, Secret: x, Public: tpk}
	}
	parallel(parties, func(i int) {
		tpk.VerificationKeys[i] = gmpexp.Exp(v, shares[i].Secret, ns1) // secret exponent
	})
	tpk.KeyID = tpk.computeKeyID()
	// Self-check: never deal a key the decoders would refuse.
	if err := tpk.checkThreshold(); err != nil {
		return nil, nil, err
	}
	return tpk, shares, nil
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

// transcript is a canonical, length-prefixed encoding fed to SHA-256.
type transcript struct{ buf []byte }

func newTranscript(tag string) *transcript {
	t := &transcript{}
	t.bytes([]byte(tag))
	return t
}

func (t *transcript) bytes(b []byte) {
	t.buf = binary.BigEndian.AppendUint64(t.buf, uint64(len(b)))
	t.buf = append(t.buf, b...)
}

func (t *transcript) int(v int64) { t.buf = binary.BigEndian.AppendUint64(t.buf, uint64(v)) }

func (t *transcript) big(x *big.Int) {
	if x == nil {
		t.bytes(nil)
		return
	}
	t.bytes(x.Bytes())
}

func (t *transcript) sum() []byte {
	h := sha256.Sum256(t.buf)
	return h[:]
}

// proofTranscript starts the transcript shared by the weights and the
// challenge: domain tag, key id, context and party index.
func (pk *ThresholdPublicKey) proofTranscript(tag string, index int, ctx ProofContext) *transcript {
	t := newTranscript(tag)
	t.bytes(pk.KeyID[:])
	t.bytes([]byte(ctx.Job))
	t.bytes([]byte(ctx.Phase))
	t.int(int64(ctx.Round))
	t.int(int64(ctx.Attempt))
	t.int(int64(index))
	return t
}

// statementDigest hashes everything a batch proof is about: the context,
// the party index, every ciphertext and every share value. The weights are
// derived from it and the challenge includes it.
func (pk *ThresholdPublicKey) statementDigest(index int, ctx ProofContext, cs []*Ciphertext, vals []*big.Int) []byte {
	t := pk.proofTranscript("cohort/paillier/share-batch/v1", index, ctx)
	t.int(int64(len(cs)))
	for j := range cs {
		t.big(cs[j].C)
		t.big(vals[j])
	}
	return t.sum()
}

// weights derives the random-linear-combination weights w_j (128 bits,
// top bit set so never zero) from the statement digest with SHAKE-256. A
// single ciphertext gets w = 1.
func weights(digest []byte, count int) []*big.Int {
	w := make([]*big.Int, count)
	if count == 1 {
		w[0] = big.NewInt(1)
		return w
	}
	xof := sha3.NewSHAKE256()
	xof.Write([]byte("cohort/paillier/share-batch-weights/v1"))
	xof.Write(digest)
	buf := make([]byte, weightBits/8)
	for j := range w {
		xof.Read(buf)
		w[j] = new(big.Int).SetBytes(buf)
		w[j].SetBit(w[j], weightBits, 1)
	}
	return w
}

// combineBases returns u = ∏ c_j^(4w_j) and ũ = ∏ vals_j^(2w_j), as two
// multi-exponentiations (run in parallel) followed by the squarings.
func (pk *ThresholdPublicKey) combineBases(cs []*Ciphertext, vals []*big.Int, w []*big.Int) (u, ut *big.Int) {
	ns1 := pk.ns1()
	cb := make([]*big.Int, len(cs))
	for j := range cs {
		cb[j] = cs[j].C
	}
	parallel(2, func(k int) {
		if k == 0 {
			u = multiExp(cb, w, ns1)
			u.Exp(u, big.NewInt(4), ns1)
		} else {
			ut = multiExp(vals, w, ns1)
			ut.Exp(ut, big.NewInt(2), ns1)
		}
	})
	return u, ut
}

func (pk *ThresholdPublicKey) challenge(index int, ctx ProofContext, digest []byte, u, ut, a, b *big.Int) *big.Int {
	t := pk.proofTranscript("cohort/paillier/share-proof/v1", index, ctx)
	t.bytes(digest)
	t.big(u)
	t.big(ut)
	t.big(pk.V)
	t.big(pk.VerificationKeys[index-1])
	t.big(a)
	t.big(b)
	return new(big.Int).SetBytes(t.sum()) // 256 bits
}

func (pk *ThresholdPublicKey) vPow(e *big.Int) *big.Int {
	if pk.V == nil {
		return new(big.Int)
	}
	if fb := tableFor(pk.V, pk.ns1(), pk.rhoBits()+1, vWindow); fb != nil {
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

// DecryptShare computes this party's decryption shares of cs and one
// batched proof of their correctness, bound to ctx, the key id and the
// party index. The exponentiations run on all cores.
func (ks *KeyShare) DecryptShare(random io.Reader, cs []*Ciphertext, ctx ProofContext) (*DecryptionShare, error) {
	return ks.decryptShare(random, cs, ctx, 0)
}

// decryptShare takes the blinder length as a parameter so that tests can
// show what a short blinder would leak; 0 selects the secure length.
func (ks *KeyShare) decryptShare(random io.Reader, cs []*Ciphertext, ctx ProofContext, rhoBits int) (*DecryptionShare, error) {
	if random == nil {
		random = rand.Reader
	}
	if err := ks.check(); err != nil {
		return nil, err
	}
	pk := ks.Public
	if len(cs) == 0 {
		return nil, fmt.Errorf("%w: no ciphertexts", ErrInvalidCiphertext)
	}
	if err := pk.validateAll(cs); err != nil {
		return nil, err
	}
	if rhoBits == 0 {
		rhoBits = pk.rhoBits()
	}
	rho, err := randomBits(random, rhoBits)
	if err != nil {
		return nil, err
	}
	vals := ks.shareValues(cs)
	proof := ks.prove(rho, cs, vals, ctx)
	return &DecryptionShare{Index: ks.Index, Values: vals, Proof: proof, elemSize: pk.CiphertextSize()}, nil
}

// ShareValues returns the bare decryption shares c_j^(2Δs_i) of cs,
// without a proof, on all cores. Protocols should use DecryptShare; this is
// DecryptShare's first half, exposed so that callers (and benchmarks) can
// separate computing shares from proving them (see ProveShare).
func (ks *KeyShare) ShareValues(cs []*Ciphertext) ([]*big.Int, error) {
	if err := ks.check(); err != nil {
		return nil, err
	}
	if err := ks.Public.validateAll(cs); err != nil {
		return nil, err
	}
	return ks.shareValues(cs), nil
}

// ProveShare returns the batched proof for share values computed by
// ShareValues; DecryptShare = ShareValues + ProveShare. Every ciphertext and
// value must be in Z*_{n^(s+1)}, with one value per ciphertext.
func (ks *KeyShare) ProveShare(random io.Reader, cs []*Ciphertext, values []*big.Int, ctx ProofContext) (*Proof, error) {
	if random == nil {
		random = rand.Reader
	}
	if err := ks.check(); err != nil {
		return nil, err
	}
	pk := ks.Public
	if len(cs) == 0 || len(values) != len(cs) {
		return nil, fmt.Errorf("%w: need one value per ciphertext, have %d ciphertexts and %d values", ErrInvalidShare, len(cs), len(values))
	}
	if err := pk.validateAll(cs); err != nil {
		return nil, err
	}
	for j, v := range values {
		if !inUnits(v, pk.NS1) {
			return nil, fmt.Errorf("%w: value %d not in Z*_{n^(s+1)}", ErrInvalidShare, j)
		}
	}
	rho, err := randomBits(random, pk.rhoBits())
	if err != nil {
		return nil, err
	}
	return ks.prove(rho, cs, values, ctx), nil
}

// check makes sure the key share can be used by the prover without a
// panic and within the proof's hiding bound: a well-formed public key, an
// index in 1..Parties and a secret 0 < x < n^(s+1)/4.
//
// The bound is the one the blinder length assumes. ρ has |n^(s+1)| + 256 +
// 128 bits, so z = ρ + e·x is within statistical distance 2^-128 of a value
// independent of x only while e·x < 2^(|ρ|−128), i.e. x < 2^|n^(s+1)|; the
// dealer's x = Δ·s_i mod n^s·n' is below n^s·n' < n^(s+1)/4 (n' = p'q' <
// n/4). A larger secret congruent to x modulo the group order gives the
// same share values and a proof that verifies, but z/e then estimates the
// secret to within ρ/e, which leaks it (the tcpaillier flaw in another
// guise; see TestProofHidesShare). UnmarshalKeyShare applies the same
// bound.
func (ks *KeyShare) check() error {
	if ks == nil || ks.Public == nil {
		return fmt.Errorf("%w: key share without public key", ErrInvalidKey)
	}
	pk := ks.Public
	if err := pk.checkShape(); err != nil {
		return err
	}
	if ks.Index < 1 || ks.Index > pk.Parties {
		return fmt.Errorf("%w: key share index %d outside 1..%d", ErrInvalidKey, ks.Index, pk.Parties)
	}
	if ks.Secret == nil || ks.Secret.Sign() <= 0 {
		return fmt.Errorf("%w: key share %d has no positive secret", ErrInvalidKey, ks.Index)
	}
	if ks.Secret.Cmp(new(big.Int).Rsh(pk.NS1, 2)) >= 0 {
		return fmt.Errorf("%w: key share %d's secret is not below n^(s+1)/4, the bound the proof's blinder hides", ErrInvalidKey, ks.Index)
	}
	return nil
}

// validateAll checks that every ciphertext is an element of Z*_{n^(s+1)}.
func (pk *PublicKey) validateAll(cs []*Ciphertext) error {
	for j, c := range cs {
		if err := pk.ValidateCiphertext(c); err != nil {
			return fmt.Errorf("%w (ciphertext %d)", err, j)
		}
	}
	return nil
}

// shareValues returns c_j^(2x) for every ciphertext, on all cores. The
// exponent is secret: gmpexp.Exp is constant-time with the gmp build tag.
func (ks *KeyShare) shareValues(cs []*Ciphertext) []*big.Int {
	ns1 := ks.Public.ns1()
	x2 := new(big.Int).Lsh(ks.Secret, 1)
	vals := make([]*big.Int, len(cs))
	parallel(len(cs), func(j int) {
		vals[j] = gmpexp.Exp(cs[j].C, x2, ns1)
	})
	return vals
}

func (ks *KeyShare) prove(rho *big.Int, cs []*Ciphertext, vals []*big.Int, ctx ProofContext) *Proof {
	pk := ks.Public
	digest := pk.statementDigest(ks.Index, ctx, cs, vals)
	u, ut := pk.combineBases(cs, vals, weights(digest, len(cs)))
	var a, b *big.Int
	// a = u^ρ and b = v^ρ (table) in parallel. ρ is secret: u^ρ goes
	// through gmpexp.Exp (constant-time with the gmp build tag); the v
	// table lookup is not constant-time with either backend.
	parallel(2, func(k int) {
		if k == 0 {
			a = gmpexp.Exp(u, rho, pk.ns1())
		} else {
			b = pk.vPow(rho)
		}
	})
	e := pk.challenge(ks.Index, ctx, digest, u, ut, a, b)
	z := new(big.Int).Mul(e, ks.Secret)
	z.Add(z, rho)
	return &Proof{E: e, Z: z}
}

// shareError wraps ErrInvalidShare and names the party.
func shareError(index int, why string) error {
	return fmt.Errorf("%w from party %d: %s", ErrInvalidShare, index, why)
}

// VerifyShare checks a decryption share for cs under ctx. An error about
// the share wraps ErrInvalidShare and names the party index; a malformed
// key gives ErrInvalidKey and a ciphertext outside Z*_{n^(s+1)}
// ErrInvalidCiphertext.
func (pk *ThresholdPublicKey) VerifyShare(cs []*Ciphertext, sh *DecryptionShare, ctx ProofContext) error {
	if err := pk.checkShape(); err != nil {
		return err
	}
	if sh == nil {
		return fmt.Errorf("%w: nil share", ErrInvalidShare)
	}
	i := sh.Index
	if i < 1 || i > pk.Parties {
		return shareError(i, "party index out of range")
	}
	if len(cs) == 0 || len(sh.Values) != len(cs) {
		return shareError(i, "wrong number of values")
	}
	ns1 := pk.ns1()
	for j := range cs {
		if cs[j] == nil || !inUnits(cs[j].C, ns1) {
			return fmt.Errorf("%w (checking party %d's share)", ErrInvalidCiphertext, i)
		}
		if !inUnits(sh.Values[j], ns1) {
			return shareError(i, fmt.Sprintf("value %d not in Z*_{n^(s+1)}", j))
		}
	}
	pr := sh.Proof
	if pr == nil || pr.E == nil || pr.Z == nil || pr.E.Sign() < 0 || pr.Z.Sign() < 0 ||
		pr.E.BitLen() > challengeBits || pr.Z.BitLen() > pk.rhoBits()+1 {
		return shareError(i, "malformed proof")
	}
	digest := pk.statementDigest(i, ctx, cs, sh.Values)
	u, ut := pk.combineBases(cs, sh.Values, weights(digest, len(cs)))
	vi := pk.VerificationKeys[i-1]
	var a, b *big.Int
	parallel(2, func(k int) {
		if k == 0 {
			// a = u^z · ũ^-e
			a = gmpexp.ExpPublic(u, pr.Z, ns1)
			t := new(big.Int).Exp(ut, pr.E, ns1)
			t.ModInverse(t, ns1)
			a.Mul(a, t)
			a.Mod(a, ns1)
		} else {
			// b = v^z · v_i^-e
			b = pk.vPow(pr.Z)
			t := new(big.Int).Exp(vi, pr.E, ns1)
			t.ModInverse(t, ns1)
			b.Mul(b, t)
			b.Mod(b, ns1)
		}
	})
	if pk.challenge(i, ctx, digest, u, ut, a, b).Cmp(pr.E) != 0 {
		return shareError(i, "proof does not verify")
	}
	return nil
}

// lagrange returns λ_{0,i}^S = Δ·∏_{j∈S, j≠i} j/(j-i) for every i in S
// (exact integers because Δ = N! clears the denominators).
func lagrange(delta *big.Int, set []int) []*big.Int {
	out := make([]*big.Int, len(set))
	for k, i := range set {
		num := new(big.Int).Set(delta)
		den := big.NewInt(1)
		for _, j := range set {
			if j == i {
				continue
			}
			num.Mul(num, big.NewInt(int64(j)))
			den.Mul(den, big.NewInt(int64(j-i)))
		}
		out[k] = num.Quo(num, den)
	}
	return out
}

// Combine decrypts cs from shares that VerifyShare has accepted for the
// same ciphertexts and ProofContext. It uses the first t+1 shares with
// distinct indices (ordered by index) and fails if there are fewer. The
// result of each ciphertext is in [0, n^s).
//
// Shares must be verified first: Combine cannot tell a wrong share from a
// right one. Its checks (values in range, pos ≡ neg mod n, invertibility)
// catch only values whose component outside ⟨1+n⟩ is wrong; a value
// multiplied by (1+n)^k passes them all and shifts the plaintext by
// λ_i·k/(2Δ²) mod n^s, without an error
// (TestCombineUnverifiedShareGivesWrongPlaintext).
// With exactly t+1 shares there is no redundancy from which Combine could
// notice; only the proofs bind each value to c^(2x_i).
func (pk *ThresholdPublicKey) Combine(cs []*Ciphertext, shares []*DecryptionShare) ([]*big.Int, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	need := pk.Threshold + 1
	byIndex := map[int]*DecryptionShare{}
	for _, sh := range shares {
		if sh == nil || sh.Index < 1 || sh.Index > pk.Parties {
			continue
		}
		if len(sh.Values) != len(cs) {
			return nil, shareError(sh.Index, "wrong number of values")
		}
		for _, v := range sh.Values {
			// Range only: a non-unit fails the pos ≡ neg (mod n) check or
			// the inversion below.
			if v == nil || v.Sign() <= 0 || v.Cmp(pk.ns1()) >= 0 {
				return nil, shareError(sh.Index, "value out of range")
			}
		}
		if _, dup := byIndex[sh.Index]; !dup {
			byIndex[sh.Index] = sh
		}
	}
	if len(byIndex) < need {
		return nil, fmt.Errorf("paillier: need %d shares from distinct parties, have %d", need, len(byIndex))
	}
	set := make([]int, 0, len(byIndex))
	for i := range byIndex {
		set = append(set, i)
	}
	sort.Ints(set)
	set = set[:need]
	lam := lagrange(pk.Delta(), set)
	// λ_i = g·L_i with g = gcd of the λ_i: raise the shares to the small
	// |L_i|, multiply by sign, and raise the two products to 2g once each.
	g := new(big.Int)
	for _, l := range lam {
		g.GCD(nil, nil, g, new(big.Int).Abs(l))
	}
	small := make([]*big.Int, len(lam))
	for k, l := range lam {
		small[k] = new(big.Int).Quo(l, g)
	}
	twoG := new(big.Int).Lsh(g, 1)
	ns1 := pk.ns1()
	ns := pk.ns()
	fourDelta2 := new(big.Int).Mul(pk.Delta(), pk.Delta())
	fourDelta2.Lsh(fourDelta2, 2)
	inv := new(big.Int).ModInverse(fourDelta2, ns)
	if inv == nil {
		return nil, fmt.Errorf("%w: 4Δ² not invertible mod n^s", ErrInvalidKey)
	}
	out := make([]*big.Int, len(cs))
	errs := make([]error, len(cs))
	parallel(len(cs), func(j int) {
		pos, neg := big.NewInt(1), big.NewInt(1)
		e := new(big.Int)
		for k, i := range set {
			e.Set(small[k])
			isNeg := e.Sign() < 0
			e.Abs(e)
			t := new(big.Int).Exp(byIndex[i].Values[j], e, ns1)
			if isNeg {
				neg = mulMod(neg, t, ns1)
			} else {
				pos = mulMod(pos, t, ns1)
			}
		}
		pos.Exp(pos, twoG, ns1)
		neg.Exp(neg, twoG, ns1)
		// pos/neg = c^(4Δ²d) = (1+n)^(4Δ²m); in particular pos ≡ neg mod n.
		var m *big.Int
		if pk.s() == 1 {
			// pos = neg·(1+n·y) mod n² ⇒ (pos-neg)/n ≡ neg·y (mod n): one
			// inversion modulo n instead of modulo n². pos ≡ neg (mod n)
			// must hold for the division to be exact; it fails for some
			// bad values (e.g. a doubled one) but holds for any value
			// times (1+n)^k, so it is no substitute for VerifyShare.
			pn := new(big.Int).Mod(pos, pk.N)
			nn := new(big.Int).Mod(neg, pk.N)
			if pn.Cmp(nn) != 0 {
				errs[j] = fmt.Errorf("%w: shares do not combine (unverified share?)", ErrInvalidShare)
				return
			}
			if nn.ModInverse(nn, pk.N) == nil {
				errs[j] = fmt.Errorf("%w: share value not invertible", ErrInvalidShare)
				return
			}
			m = pos.Sub(pos, neg)
			m.Quo(m, pk.N) // exact: pos ≡ neg (mod n)
			m.Mul(m, nn)
			m.Mod(m, pk.N)
		} else {
			if neg.ModInverse(neg, ns1) == nil {
				errs[j] = fmt.Errorf("%w: share value not invertible", ErrInvalidShare)
				return
			}
			pos.Mul(pos, neg)
			pos.Mod(pos, ns1)
			if new(big.Int).Mod(pos, pk.N).Cmp(one) != 0 {
				errs[j] = fmt.Errorf("%w: shares do not combine (unverified share?)", ErrInvalidShare)
				return
			}
			m = dlogDJ(pos, pk.N, pk.s())
		}
		m.Mul(m, inv)
		out[j] = m.Mod(m, ns)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
