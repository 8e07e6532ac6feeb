// Package dealerless generates a threshold Paillier key without a trusted
// dealer: n ≥ 3 parties build a shared RSA modulus N = pq that none of them
// can factor (Boneh–Franklin, "Efficient generation of shared RSA keys",
// JACM 2001, with the biprimality test of its §4) and convert it to the
// Shoup / Damgård–Jurik threshold shares of package paillier (Damgård–Jurik
// 2001 §4), so that decryption shares, their proofs and Combine work
// exactly as with a dealer's key. Phoenix (Ahmad and Khokhar, "Phoenix:
// privacy preserving biclustering on horizontally partitioned data",
// §3.3) asks for such a dealerless threshold key; this package is that key
// generation.
//
// Start reading at Party (protocol.go): Search runs candidate batches
// (modulus.go: sieve, BGW product, trial division, biprimality), Finish
// converts the accepted modulus into key shares (convert.go) and checks
// them with a test decryption. The caller supplies the Network.
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
//	sv/b/a    batch b, distributed sieve (sieve.go): for each of the 2B
//	          candidate primes, each party draws a unit a_i of Z_M and a
//	          mask R_i < 2^σ·M^n and Shamir-shares them (degree t and 2t)
//	          over the ring Z_{(2^127−1)^e}
//	sv/b/m1.. BGW products of pairs of shared values with degree
//	          reduction, ⌈log2 n⌉−1 rounds (one for n = 3 and 4)
//	sv/b/z    z = ∏ a_i + Σ R_i opened to party 1 alone; party 1 takes
//	          b_1 = (z − R_1) mod M, every other b_i = −R_i mod M
//	cand/b    each party forms its additive shares p_i, q_i of B candidate
//	          pairs (sievedShares: p_i ≡ b_i mod M; p ≡ 3 mod 4, p ≡ 1
//	          mod r, top two bits set) and Shamir-shares them (degree t)
//	          with a zero-sharing (degree 2t)
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
// Batching: B candidate pairs (default 1024) travel in one message per
// round, so a 2048-bit modulus, which takes some 10^3–10^4 sieved pairs,
// costs a few dozen rounds.
//
// # Distributed sieving
//
// Malkin, Wu and Boneh's multiplicative sieve ("Experimenting with shared
// generation of RSA keys", NDSS 1999, §3): M is the product of the odd primes up to B_s
// except r (2 and r are fixed by the public residues below). Every party
// draws a_i uniform in Z*_M; the shared integer product A = ∏ a_i < M^n is
// a uniform unit of Z_M as long as one party is honest. The parties
// compute Shamir shares of A (a BGW tree, exact in the ring because
// M^n ≪ Q), add the shares of every mask R_i and open z = A + Σ R_i to
// party 1, which then holds b_1 = (z − R_1) mod M while every other party
// holds b_i = −R_i mod M: Σ b_i ≡ A (mod M). Each party's share of the
// candidate prime is the CRT combination of b_i mod M and its residue mod
// 4r, plus 4rM·u_i for a uniform u_i, so p ≡ A (mod M) has no prime factor
// ≤ B_s and is prime ∏_{ℓ|M} ℓ/(ℓ−1) ≈ e^γ·ln(B_s)/2·(r−1)/r times more
// often than an unsieved candidate (Mertens). B_s is as large as two
// limits allow: z < (1 + n·2^σ)·M^n must stay below the ring modulus
// (n·|M| + σ + |n| + 2 ≤ 127e bits), and every share must keep at least
// 128 random bits above 4rM. For 2048-bit N the candidates' own ring
// (e = 17, 2159 bits) gives B_s = 491 (92 primes, |M| = 673 bits, gain
// 4.45 per prime) for n = 3 and B_s = 307 (gain 4.41) for n = 5, so a pair
// is about 20 times as likely to be two primes. With very many parties
// (more than 126 for 2048-bit N, 28 for 512-bit test keys) the sieve gets
// a wider ring of its own so that |M| ≥ 16 bits.
//
// What the sieve reveals: nothing beyond the public fact that p and q
// have no prime factor ≤ B_s. The a_i and R_i travel as Shamir shares
// (any t are uniform); the degree-reduction re-shares are degree-t
// sharings of each party's product share (BGW); the opened degree-2t
// polynomial of z is re-randomised by the masks' own degree-2t
// polynomials (an honest dealer's has uniform values at the other honest
// parties, like the zero-sharing of prod/b), so its shares show z and
// nothing else. z itself hides A statistically: an honest party's R_h is
// uniform on [0, 2^σ·M^n) and A < M^n, so z, and z less every mask the
// coalition knows, are within 2^-σ of a value independent of A. Only
// party 1 sees z. Each b_i is uniform mod M to everyone but its holder;
// together the honest parties' b_i sum to A less the coalition's, and A
// is a uniform unit nobody knows. After the sieve, p_i is distributed as
// before except that p mod M is that unit: the rest of the protocol and
// its leakage are unchanged.
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
// T_j + R_j (R_j is 2^128 times wider than T_j); party 1 alone learns the
// sieve's masked products z = A + Σ R_i (Σ R_i is 2^128 times wider than
// A). Every other message is a Shamir share of degree t (uniform to any t
// parties), a pseudo-random share from a pairwise seed, or an opening of a
// degree-2t value re-randomised by a fresh zero-sharing (in sv/b/z, by the
// masks' polynomials). Public knowledge about p and q: p, q ∈
// [0.75·2^(h), 2^h) with h = |N|/2, p ≡ q ≡ 3 (mod 4) and ≡ 1 (mod r), and
// neither has a prime factor ≤ B_s.
//
// # Not constant time
//
// big.Int arithmetic on secret shares, the ring reductions, the sieve's
// rejection sampling of units and the trial division are not constant
// time. Secret exponents (biprimality, verification keys) go through
// paillier's exponentiation, which is constant time only with the gmp
// build tag. The Boneh–Franklin gcd step that rules out N = p^a·q^b with
// a > 1 is not run: a random candidate is such a prime power with
// probability about 2^(−|N|/4).
package dealerless
