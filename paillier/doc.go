// Package paillier implements the Paillier cryptosystem, its Damgård–Jurik
// generalisation and threshold decryption with verifiable decryption shares,
// on math/big.
//
// Where to start reading: PublicKey (paillier.go) and Encrypt
// (encrypt.go); the homomorphic operations (homomorphic.go); PrivateKey
// and Decrypt (decrypt.go). Threshold decryption: ThresholdPublicKey and
// KeyShare (threshold.go), DealThreshold (deal.go), DecryptShare
// (share.go), VerifyShare (verify.go), Combine (combine.go), and the
// proofs' Fiat–Shamir transcript (transcript.go). Then RandomizerPool
// (pool.go), the fixed-base tables (fixedbase.go), fixed point and
// packing (encoding.go), serialisation (marshal.go) and the key checks
// (keycheck.go). Package dealerless generates a threshold key without a
// dealer.
//
// # Scheme
//
// A key has an RSA modulus n of exactly 2048 (the default), 3072 or 4096
// bits and a degree s ≥ 1 (s = 1 is plain Paillier). Plaintexts are
// residues modulo n^s, ciphertexts are elements of Z*_{n^(s+1)}, g = 1+n:
//
//	Enc(m; r) = (1+n)^m · H^r mod n^(s+1),   H = h^(n^s), h = -x² mod n
//
// This is the Damgård–Jurik–Nielsen fixed-base form. h is drawn once per
// key; x is discarded. (1+n)^m costs a few multiplications (binomial
// expansion). H^r uses precomputed tables, shared process-wide by all
// copies of the key and sized to the work: first a small one of
// H^(2^(w·i)) (the bucket method of Brickell, Gordon, McCurley and Wilson:
// one multiplication per window plus 2·(2^w−1); 25 ms and 0.2 MiB to build
// at 2048 bits), built on first use or by PublicKey.Precompute; then, once
// the key has made enough encryptions to pay for it (about 490 at 2048
// bits, or an EncryptMany batch or PublicKey.PrecomputeFor count that
// large), the wide table of H^(j·2^(w·i)) (one multiplication per window,
// no squarings). The wide table takes the widest window (at most 9 bits) that keeps it within
// 80 MiB: 57 MiB at 2048 bits (9-bit windows, measured; 1.5 s of CPU to
// build), 72 MiB at 3072 and 4096 bits (8 and 7 bits). The verification
// base v of a threshold key gets the same pair of tables. All tables
// together stay within a process-wide budget (SetFixedBaseBudget, 256 MiB
// by default), least recently used first out; a wide table without room is
// not built, and without room even for the small one, exponentiations run
// without a table. The wide tables are mapped outside the Go heap (and
// unmapped once evicted and unused), so that the collector neither scans
// them nor counts them when it sizes its headroom; MappedFixedBaseBytes
// reports their memory.
//
// A RandomizerPool computes randomisers H^r ahead of time in a goroutine
// it owns (stopped by Close), so that an encryption on a protocol's
// critical path costs one multiplication; each randomiser is drawn as
// Encrypt draws it and handed out once. It lowers latency, not total work.
//
// Homomorphic operations: Add (c1·c2), AddPlain (c·(1+n)^k), MulPlain
// (c^k), Neg (c^-1), Sub, Rerandomize (c·H^r). Decryption uses the CRT
// (Paillier's §7 formulas for s = 1; for s > 1, c^λ by CRT modulo p^(s+1)
// and q^(s+1), then the Damgård–Jurik discrete-log algorithm).
//
// # Encryption randomness and the short-exponent assumption
//
// By default r is uniform in [0, n). The order of h divides λ(n) and
// n = φ(n) + (p+q-1), so r modulo that order is within statistical distance
// (p+q)/n ≈ 2^(1-|n|/2) of uniform, H^r is that close to a uniform element
// of ⟨H⟩ = the n^s-th powers of ⟨h⟩, and semantic security rests on the
// decisional composite residuosity assumption (DCRA) alone, as for textbook
// Paillier with r^(n^s) (Damgård, Jurik and Nielsen, IJIS 2010, §4: the
// n^s-th residues of the Jacobi-symbol-1 subgroup are indistinguishable
// from random elements of the corresponding subgroup under DCRA).
//
// PublicKey.ShortExponent (opt-in) takes r of only ⌈|n|/2⌉ bits, as
// proposed by Damgård, Jurik and Nielsen. It roughly halves the cost of
// encryption and re-randomisation. Its security needs an extra assumption
// besides DCRA: that H^r for a short random r is indistinguishable from a
// uniform element of ⟨H⟩ (a short-exponent discrete-log-type assumption in a
// group of unknown order). No attack is known, but no reduction to DCRA is
// either. Use it only where that is acceptable and documented.
//
// # Threshold decryption
//
// DealThreshold implements the trusted-dealer threshold scheme of Damgård
// and Jurik (PKC 2001, §4), which generalises Shoup's threshold RSA:
//
//   - n = p·q with safe primes p = 2p'+1, q = 2q'+1 (GenerateSafePrime),
//     n' = p'q'. The squares of Z*_{n^(s+1)} form a cyclic group of order
//     n^s·n' with no small prime factor, which the proofs need.
//   - d ≡ 0 mod n', d ≡ 1 mod n^s, shared with a random polynomial f of
//     degree t over Z_{n^s·n'}: party i (1..N) gets s_i = f(i). KeyShare.Secret
//     stores x_i = Δ·s_i mod n^s·n' (Δ = N!), which acts identically on every
//     element of the squares and is the shortest exponent that does.
//   - v is a random square that provably (the dealer checks with the
//     factors) generates the squares; verification keys v_i = v^(x_i).
//   - Decryption share of c: c_i = c^(2x_i) = c^(2Δs_i). The prover
//     refuses a secret that is not below n^(s+1)/4, the bound its blinder
//     hides (see Share proofs).
//   - Combine: with a set S of t+1 indices and λ_i = Δ·∏_{j∈S∖{i}} j/(j−i)
//     (an integer), ∏ c_i^(2λ_i) = c^(4Δ²d) = (1+n)^(4Δ²m); the discrete log
//     gives 4Δ²m mod n^s, and multiplying by (4Δ²)^-1 mod n^s gives m.
//
// Combine does not and cannot check shares: a share value times (1+n)^k
// yields a wrong plaintext without an error. Verify every share with
// VerifyShare first.
//
// Any t+1 shares decrypt; t shares reveal nothing about d. DealThreshold
// requires N ≥ t+1. We recommend N ≥ 2t+1 (honest majority): then the t+1
// honest parties can always decrypt and t corrupt parties cannot.
//
// # Share proofs
//
// A share carries a non-interactive Chaum–Pedersen proof that
// log_{c^4}(c_i²) = log_v(v_i), made non-interactive with Fiat–Shamir over
// SHA-256. The blinder ρ is uniform of |n^(s+1)| + 256 + 128 bits: the
// response z = ρ + e·x (e: 256-bit challenge, x < n^(s+1)/4, which the
// prover checks) is then within statistical distance 2^-128 of a value
// independent of x. (niclabs/tcpaillier sized ρ from the threshold instead
// of the modulus, about 262 bits, so floor(z/(e·Δ)) revealed the share;
// see TestProofHidesShare.) The
// challenge hashes a canonical length-prefixed encoding of a domain tag, the
// key id (SHA-256 of the public key), the job, phase, round and attempt of
// ProofContext, the party index, a digest of every ciphertext and share
// value of the batch, and the group elements u, ũ, v, v_i, a, b, so a proof
// cannot be replayed in another job, round, attempt, key or party, or for
// other ciphertexts.
//
// Batching: DecryptShare proves all shares of a batch of ciphertexts at
// once. Weights w_j (128 bits) are derived with SHAKE-256 from the hash of
// the context and of every ciphertext and share value; the proof shows
// log_u ũ = log_v v_i for u = ∏ c_j^(4w_j), ũ = ∏ c_ij^(2w_j). If some share
// value is wrong, the combination is wrong except with probability about
// 2^-128, because the squares have no small-order elements (safe primes) and
// squaring the share values removes the sign component. u and ũ are two
// Straus multi-exponentiations (shared squarings), so a batch costs about
// 2.5 ms per ciphertext at 2048 bits on top of one full-size proof.
//
// # Encoding
//
// FixedPoint maps reals to signed integers round(x·2^F); EncodeSigned and
// DecodeSigned map signed integers to plaintexts and back (centred
// residues). Packing puts many bounded signed values into one plaintext with
// offset encoding and headroom for a stated number of additions, and
// Unpack reports ErrOverflow instead of returning a wrong answer when the
// headroom, the value bounds or the plaintext range are violated.
//
// # Serialisation
//
// Keys, key shares, ciphertexts and decryption shares serialise to msgpack
// arrays with a format tag. Decoding is strict: exact lengths, no trailing
// bytes, all group elements in Z*_{n^(s+1)}, proof components within their
// bit bounds, key ids recomputed, key shares checked against their
// verification key, and only the canonical encoding accepted.
//
// # Key checks and key sizes
//
// A decoded key is checked for everything that can be checked without its
// factors (checkModulus, checkElement, ThresholdPublicKey.Check): n of an
// accepted size, odd, without a prime factor below 2^18, not a perfect
// power and not prime; H, v and every v_i units other than ±1 and of order
// above 256; v and the v_i of Jacobi symbol +1, the v_i distinct and
// different from v. Such keys (n = 3·q or p², H = 1, v = v_i = 1) would let
// anyone decrypt or let any share verify. Not checked, because it needs
// the factorisation: that n is a product of two safe primes of equal size,
// that v generates the squares and that each v_i is a power of v. The dealer
// is trusted for those, as in Damgård–Jurik §4; keys built in memory
// rather than decoded are checked only by Check.
//
// Production moduli have exactly 2048, 3072 or 4096 bits (NIST SP 800-57
// Part 1 Rev. 5, Table 2: 112- and 128-bit security for 2048 and 3072).
// Generation, dealing, NewPublicKey and the decoders refuse every other
// size. Test suites use 512- to 2047-bit keys for speed: a test binary
// opts in with AllowTestKeySizes, which does nothing outside test binaries
// (testing.Testing).
//
// # Malformed input
//
// No exported function panics on nil or out-of-range input (nil
// ciphertexts or values, party indices outside 1..N, nil or out-of-range
// secrets, incomplete keys): functions with an error result return one,
// the homomorphic operations return the invalid ciphertext 0. Work spread
// over goroutines re-raises an (internal) panic in the caller's goroutine.
//
// # Safe primes
//
// GenerateSafePrime sieves candidates q and 2q+1 together against the odd
// primes below 2^18, tests survivors with base-2 Fermat tests on q and p,
// and only then with Miller–Rabin and Baillie–PSW; it runs one worker per
// core and cancels them with a context.
//
// # Side channels
//
// math/big is not constant-time. Exponentiations with secret exponents
// (decryption, decryption shares, proof blinders) leak timing information
// about the exponent to an attacker who can time them precisely on the same
// machine. This is the accepted trade-off for speed here (the constant-time
// alternatives we measured, filippo.io/bigmod, are 2.7× slower at 4096-bit
// moduli). Do not run the parties on hosts shared with untrusted code.
//
// The prover's range check 0 < x < n^(s+1)/4 uses big.Int.Sign and Cmp,
// which are not constant-time either: their running time depends on the
// secret's length in words and on the first word in which it differs from
// the bound.
//
// Built with -tags gmp (cgo and libgmp required), the decryption shares,
// the dealer's verification keys and the proof commitment u^ρ use GMP's
// mpz_powm_sec instead, which is constant-time in the exponent's bits and
// about 13 % faster than math/big at 2048-bit n; verification's u^z uses
// mpz_powm. The wide fixed-base tables (encryption's H^r, v^ρ) multiply in
// Montgomery form (internal/mont) and Decrypt stays on math/big; neither
// is constant-time with either backend; when the v table does not fit
// the budget, v^ρ falls back to the gmpexp exponentiation (constant-time
// with the tag). See docs/paillier.md.
package paillier
