// Package dealerless generates a threshold Paillier key without a trusted
// dealer: n ≥ 3 parties build a shared RSA modulus N = pq that none of them
// can factor (Boneh–Franklin, "Efficient generation of shared RSA keys",
// JACM 2001, with the biprimality test of its §4) and convert it to the
// Shoup / Damgård–Jurik threshold shares of package paillier (Damgård–Jurik
// 2001 §4), so that decryption shares, their proofs and Combine work
// exactly as with a dealer's key. Specification: research/seed-000-pinkdd.md
// §2.7 and §4.2 rows 4–5.
//
// # Model
//
// Semi-honest parties, honest majority: t = ⌊(n−1)/2⌋, any t+1 shares
// decrypt and any t parties together learn nothing about p, q or another
// party's share (statistically, with κ = 128, up to the pseudo-randomness of
// SHAKE-256 and the public values listed below). Channels are private and
// authenticated (Noise over libp2p). A deviating party is not caught by
// proofs during generation; it can make generation fail or, at worst,
// produce a key that fails the final test decryption, which every party
// checks before it returns a share. No partial key is ever returned.
//
// # Protocol (one Network round per line)
//
//	seeds     pairwise 32-byte seeds for pseudo-random sharing (ring.go)
//	cand/b    batch b: each party draws B additive shares p_i, q_i
//	          (sampleShares: p ≡ 3 mod 4, p ≡ 1 mod r, top two bits set)
//	          and Shamir-shares them (degree t) with a zero-sharing
//	          (degree 2t) over the ring Z_{(2^127−1)^e}
//	prod/b    BGW: each party opens its share of p·q + 0; everyone
//	          interpolates the B moduli, drops those of the wrong size and
//	          those with a prime factor below 2^18 (trial division)
//	bip/b     one Boneh–Franklin test per surviving N: g^((N+1−p−q)/4)
//	          = ±1 for a public g with (g/N) = 1, from every party's
//	          g^(±(p_i+q_i)/4)
//	bip2/b    79 more tests for each N that passed: 80 in all, so a
//	          non-biprime passes with probability ≤ 2^-80
//	c1..c6    conversion (convert.go): shares of d with d ≡ 1 mod N,
//	          d ≡ 0 mod φ(N)/(4r), reduced to (0, N²/4)
//	vk        every party publishes v^(y_i) for a public square v
//	check     every party decrypts a public test ciphertext with a proof;
//	          each verifies every proof and the combination
//
// Batching: B candidate pairs (default 2048) travel in one cand and one
// prod message, so a 2048-bit modulus, which takes some 10^4–10^5 pairs,
// costs a few dozen rounds.
//
// Distributed sieving. Candidate shares are not sieved before the product:
// the candidate's small-prime test is the trial division of the public N,
// which rejects a pair when p or q has a small factor. Malkin–Wu–Boneh's
// multiplicative sieving (each party's share in Z*_M, converted to additive
// shares) would cut the pairs needed by about 10× for the same bound; it
// needs a multiplicative-to-additive conversion that this package does not
// implement. The cost shows in the candidates count (docs/keygen.md).
//
// # The share reduction, and r
//
// paillier accepts a key share x only in (0, N²/4): its proof blinder hides
// x statistically only below that bound. A dealer reduces Δ·f(i) modulo the
// group order; without a dealer nobody knows the order, and an integer
// Shamir share that hides d is necessarily larger than N². So the parties
// reduce each share inside the sharing: p and q are drawn ≡ 1 (mod r) for
// the smallest prime r ≥ n+2, so that M″ = N·φ(N)/(4r) is a multiple of the
// exponent of the squares of Z*_{N²} and (n+2)·M″ < N²/4; the reduction
// modulo M″ may then be off by up to n+1 multiples of M″ (convert.go), which
// a public estimate of the quotient (M0 = ⌊N²/4r⌋) and a masked opening
// achieve without any comparison circuit. Publishing p ≡ q ≡ 1 (mod r) and
// ≡ 3 (mod 4) reveals about log2(4r) bits of each prime's residues, as
// RSA's public e does for p−1; factoring needs |p|/4 known bits (Coppersmith).
//
// # What is lost without safe primes
//
// A dealer uses safe primes p = 2p′+1, q = 2q′+1, so the squares of
// Z*_{N²} are cyclic of order N·p′q′ with no small factor, and the dealer
// checks that v generates them. Dealerless p and q are random primes
// (p′ and q′ divisible by r, and by other small primes by chance). What
// still holds:
//
//   - Correctness and privacy of threshold decryption: Lagrange
//     combination is exact in any group whose exponent divides M″, and the
//     shares are uniform modulo M″ as a dealer's are modulo N·p′q′.
//   - Completeness and zero knowledge of the share proofs (Chaum–Pedersen
//     over the squares, paillier.VerifyShare): the blinder is sized for
//     x < N²/4, which the reduction guarantees.
//   - Soundness up to small subgroups: a proof still binds a share to
//     c^(2x_i) except for a component in a subgroup of small order. The
//     squares now have elements of small order ω (ω | r, and any small
//     factor of p′q′), so a cheating party can multiply its share value by
//     such an element and pass with probability about 1/ω, shifting the
//     plaintext. With safe primes this probability is negligible. Without
//     them the proofs are sound against shifts of large order only; since
//     the generation itself is only semi-honest, this matches the model, and
//     a deployment that needs malicious security must add a proof that N is
//     a product of two safe primes (Camenisch–Michels 1999), which this
//     package does not do.
//   - v is a jointly random square (from the public seed) but nobody can
//     check that it generates a large subgroup; with overwhelming
//     probability its order is divisible by N·p″q″ for the large prime
//     factors p″ | p′, q″ | q′, which is what binding needs.
//
// # Leakage profile
//
// Every party learns N, the public test values g^(±(p_i+q_i)/4) of each
// candidate that reached the biprimality test (Boneh–Franklin's test; for
// the accepted N they reveal nothing beyond N, BF §4.1), θ = ψβ mod N
// (uniform), the verification keys v^(y_i), the test decryption shares, and
// the counts. Party j alone learns its share y_j and the masked value Z_j =
// T_j + R_j (R_j is 2^128 times wider than T_j). Every other message is a
// Shamir share of degree t (uniform to any t parties), a pseudo-random
// share from a pairwise seed, or an opening of a degree-2t value
// re-randomised by a fresh zero-sharing. Public knowledge about p and q:
// p, q ∈ [0.75·2^(h), 2^h) with h = |N|/2, p ≡ q ≡ 3 (mod 4) and ≡ 1 (mod r).
//
// # Not constant time
//
// big.Int arithmetic on secret shares, the ring reductions and the sieve are
// not constant time. Secret exponents (biprimality, verification keys) go
// through paillier's exponentiation, which is constant time only with the
// gmp build tag. The Boneh–Franklin gcd step that rules out N = p^a·q^b with
// a > 1 is not run: a random candidate is such a prime power with
// probability about 2^(−|N|/4).
package dealerless
