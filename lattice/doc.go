// Package mhe is multiparty homomorphic encryption for aggregation: the
// lattice backend of secure aggregation. Members generate a collective BGV
// key without a dealer, each holding a Shamir share of its secret; a
// party encrypts a vector of fixed-point values (8,192 coefficients per
// ciphertext, several values per coefficient); ciphertexts add up in any
// order along secureagg's tree; any Quorum members decrypt the committed
// total jointly, with shares flooded by noise so they reveal nothing but
// the total; comparing decryptions by several quorums detects a wrong share
// and names its maker. It is written on Lattigo v6 (rlwe, bgv, multiparty)
// in Lattigo's style: one value type per protocol with the rounds as
// methods, shares as named types with their encodings, pairwise folds in
// any order, and no method that sends anything: the caller is the network.
//
// Start with KeyGen (key generation), then Layout (how values become
// plaintext coefficients), Encryptor and Aggregator (contributions and
// their sums), Decryptor (a member's decryption shares), Opening (the
// combiner) and Plan and Verdict (which quorums decrypt, and who is to
// blame). docs/lattice.md has the figures and the API proposed for
// secureagg.
//
// # Protocol
//
//  1. Key generation (KeyGen), once per consortium, one round: member i
//     draws a ternary secret s_i and sends its public-key share −a·s_i + e_i
//     (a from a common reference string) to the folder and, privately, a
//     Shamir share f_i(j) of s_i to every member j (Mouchet, Bertrand and
//     Hubaux, "An Efficient Threshold Access-Structure for RLWE-Based
//     Multiparty Homomorphic Encryption", 2022). The folds give the public
//     key of s = Σs_i and member j's Shamir share Σ_i f_i(j) of s.
//  2. Contribution (Encryptor): a party packs its vector (Layout) and
//     encrypts it under the public key; the result is an Aggregate of one
//     input, whose digest the party may commit (to the log) before sending.
//  3. Aggregation (Aggregator.Aggregate): children's aggregates are added
//     to the parent's, ciphertext by ciphertext, inputs listed.
//  4. Decryption: the root sends the total's Mask (the c1 half) to the
//     quorums' members. Each checks it against the committed contributions
//     (Decryptor.Target: exactly the committed inputs, at least two, never
//     one party's contribution; TargetFromParts also re-sums the parts,
//     TargetFromSketches checks the total against parts it does not hold
//     by their sketches) and
//     sends one DecryptionShare per quorum it is in. The root folds them
//     (Opening), decrypts with each quorum and compares (Verdict).
//
// Everything a party sends names its Context (key id, job, phase, round,
// attempt); decryption shares also name the target's digest, the plan's
// digest and their quorum, and are refused for anything else, so a share
// for one aggregate is never combined into another.
//
// # Threshold
//
// Quorum is the number of decryption shares that decrypt: Lattigo's
// threshold t (a Shamir polynomial of degree Quorum−1), so any Quorum
// members decrypt and Quorum−1 colluders learn nothing. Paillier's
// threshold t in package paillier counts tolerated colluders and needs t+1
// shares: the lattice Quorum is Paillier's t+1. DefaultQuorum(N) =
// ⌊(N−1)/2⌋+1 matches Paillier's default t = ⌊(N−1)/2⌋ (honest majority);
// two members get 2.
//
// # Parameters (ParamsBGV13)
//
// Ring degree n = 2^13; ciphertext modulus Q = q_1·q_2·q_3, three 60-bit
// NTT-friendly primes, log Q = 180; no key-switching modulus P (no
// evaluation keys are needed for additions); plaintext modulus T, a 58-bit
// NTT-friendly prime; secrets uniform ternary; errors discrete Gaussian,
// σ = 3.2 truncated at 6σ (Lattigo's rounded Gaussian; the fresh
// encryptions of bin sums draw it from its cumulative table, gaussian.go).
// Security: the homomorphic encryption standard
// (Albrecht et al., "Homomorphic Encryption Security Standard", 2018,
// Table 1, computed with the lattice estimator), as Lattigo documents it
// (schemes/ckks/README.md, "Choosing secure parameters": {log n, log QP, σ}
// = {13, 218, 3.2} for 128-bit security with ternary secrets), allows
// log QP ≤ 218 at n = 2^13 for 128 bits of classical security; 180 ≤ 218.
// (The same table gives 128-bit quantum security up to log q = 202 at
// n = 2^13.) The collective secret Σs_i is wider than ternary, which only
// adds hardness; each member's public-key share is a standard RLWE sample
// with a ternary secret.
//
// Plaintexts use coefficient encoding (no NTT modulo T). A value v =
// round(x·2^FracBits), |v| < 2^ValueBits ≤ 2^62, travels as v + 2^ValueBits
// in a field of ℓ = bitlen(Summands·(2^(ValueBits+1)−1)) bits; fields are
// laid end to end and cut into limbs of w bits, w the largest with
// Summands·(2^w−1) < T, one limb per coefficient (see Layout). So no sum of
// up to Summands in-range inputs wraps modulo T, whatever ValueBits: wide
// values span several coefficients, narrow ones share one (32-bit values of
// 5 parties: 1.53 values per coefficient, 12,515 per ciphertext; 62-bit
// values: 0.83, 6,826). Inputs
// beyond ±2^ValueBits are refused before encryption (ErrRange, naming the
// bound), and Aggregate refuses more inputs than Summands.
//
// Noise budget (Params.checkBudget, checked when parameters are built): a
// fresh encryption under the collective key of N members has noise
// u·e_pk + e0 + e1·s, at most 19·(1 + 2·n·N) per coefficient in the worst
// case (u ternary, e_pk and s sums of N Gaussian errors and ternary
// secrets); a sum of N of them at most N times that (2^26.4 at N = 17,
// 2^30.3 at N = MaxMembers = 64). Each decryption share adds uniform noise
// of at most 2^114, a quorum at most 64·2^114 = 2^120. Decryption is exact
// when T·(noise) + T < Q/2, i.e. noise < 2^121: it always holds.
//
// # Smudging
//
// A decryption share is h_i = λ_i·sk_i·c1 + u_i with u_i uniform in
// [−2^114, 2^114) (Decryptor.GenShare). Combined, c0 + Σh = Δm + e_ct + Σu:
// whoever sees the shares learns m plus e_ct + Σu. e_ct depends on the
// encryptors' randomness and on the secret key, so it must not show: one
// honest member's u, of width 2^115, hides any |e_ct| ≤ B within
// statistical distance B/2^115 per coefficient (the smudging lemma of
// Asharov, Jain, López-Alt, Tromer, Vaikuntanathan and Wichs, "Multiparty
// Computation with Low Communication, Computation and Interaction via
// Threshold FHE", Eurocrypt 2012).
// Every quorum has at least one honest member when fewer than Quorum
// collude. Params.SmudgingDistance gives 2^-93.6 at N = 3, 2^-92.1 at N = 5,
// 2^-88.6 at N = 17 and 2^-84.8 at N = 64 per released coefficient;
// distances add up over everything released under one key, so 2^44
// coefficients (2^31 ciphertext decryptions, counting every quorum of a
// verified plan) stay below 2^-40 at N = 64. Each share is also an RLWE
// sample of λ_i·sk_i with noise u_i, which keeps the secret share hidden.
// The noise is drawn from an AES-256-CTR keystream keyed from crypto/rand
// (keystream.go; ChaCha8 before 30 Nov 2026); Lattigo's
// Gaussian sampler is not used for it (beyond σ = 2^53 it switches to a
// slow arbitrary-precision path), and neither is its key-switch Gaussian,
// which the uniform noise subsumes.
//
// # Wrong shares and blame
//
// A decryption share has no cheap validity proof (proving h_i = λ_i·sk_i·c1
// + u_i with u_i small needs a lattice zero-knowledge proof far costlier
// than the share). So wrong shares are found by comparing decryptions of
// the same aggregate by different quorums (Plan, Verdict):
//
//   - PlanVerified (the default to use) decrypts with quorums that no single
//     member is in all of: two disjoint ones when N ≥ 2·Quorum, else three.
//     A single member whose shares change the result is always detected,
//     because some quorum without it decrypts the true total.
//   - On disagreement the caller runs PlanBlame: for every two members a
//     quorum without both (when N ≥ Quorum+2) and, for every ordered pair, a
//     quorum with one and not the other. The judge names a member only when
//     it is the only one whose absence leaves every decryption agreeing; it
//     never names an honest member and never returns a wrong total if at
//     most one member is faulty, however that member behaves in each quorum
//     (TestJudgeSound), and it names a member whose shares are all wrong.
//   - With N = Quorum+1 (three members, quorum two) no quorum leaves out
//     two members: a wrong share is detected but its maker cannot always be
//     told apart; with N = Quorum nothing is detected beyond the range
//     checks of Layout. PlanSingle trusts the decryptors.
//
// Detection costs one or two more quorums: with Quorum ≤ (N+1)/2 (the
// default) a member makes at most two shares per aggregate instead of one
// (the one member common to the first two quorums is left out of the
// third); larger quorums need more quorums. Naming costs a blame round and
// only happens after a detection.
//
// # Leakage profile
//
// Who learns what, with fewer than Quorum colluding members:
//
//   - every party sends its contribution (ciphertexts) up the tree and, if
//     it is in a quorum, one decryption share per quorum to the root; an
//     inner node also forwards subtree sums (ciphertexts), the mask of the
//     total and the plaintext of the total. Nothing else leaves a party
//     (TestLeakage). It learns the total and the list of inputs.
//   - the root (combiner) learns the total, the plaintext each quorum
//     decrypted (all equal unless a share was wrong) and who was blamed.
//   - no party learns anything about another's input beyond the total:
//     inputs travel under the collective key; a decryption share opens only
//     ciphertexts with the target's c1, which is the sum of the committed
//     contributions' c1, never one contribution's (Decryptor.Target refuses
//     anything else, and at least two inputs); shares are smudged.
//   - message sizes reveal the vector length and layout.
//   - per-bin sums for boosting (binsums.go, binopen.go) are the one
//     exception to "never one party's": a BinTarget is a single party's
//     masked product (BinSummer.Sum), decrypted towards one receiver. What
//     keeps its decryption to the bins' sums is the mask (uniform noise on
//     every coefficient but the 2·nodes·bins sums, and a fresh encryption
//     that re-randomises c1), not a sum over parties; a decryptor makes a
//     share only for ciphertexts whose digest their maker named
//     (Decryptor.BinTarget), or that it took from the maker itself, so the
//     receiver cannot have its own ciphertexts, or an unmasked product,
//     opened. The receiver learns the sums and uniform noise; the maker
//     learns nothing (it holds only ciphertexts). Semi-honest makers: a
//     maker that leaves the mask off lets the receiver read weighted sums
//     of its rows' bins, which is its own data only.
//
// Semi-honest assumptions that remain: key generation (a member that sends
// inconsistent shares is not caught then, only at the first decryption,
// where every quorum it is in disagrees); contributions (a party may
// encrypt any in-range value: there are no range proofs, as on the Paillier
// path); the tree's sums when Decryptor.Target is used (a malicious inner
// node could replace a subtree sum; decryptors then open a sum of something
// other than the committed contributions, but still not a single
// contribution unless the replaced sum was one, which TargetFromParts rules
// out at the cost of every contribution's c1 in bytes, and
// TargetFromSketches at the cost of a few numbers per part from its
// holder); the root
// withholding or altering the result it sends down (parties decode and
// range-check the plaintext themselves but cannot re-verify the
// decryption). Decryption shares are checked by comparison, not proofs, and
// blame assumes at most one faulty member per aggregate.
//
// Not constant time: packing, range checks, smudging (bits.Rem64) and
// Lattigo's samplers and arithmetic branch on or index by secret data in
// places; the package is for aggregation among organisations, not for
// settings where a co-resident attacker times a node.
package lattice
