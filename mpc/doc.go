// Package mpc is honest-majority secure multiparty computation over
// Shamir shares in GF(2^127 − 1): the comparisons and the argmax that
// secure aggregation cannot do.
//
// Why it exists: the exponential mechanism for differentially private
// quantiles draws the answer with probability ∝ exp(−ε·u/2), u a
// utility that is not linear in the pooled counts. Drawn as report
// noisy max (each candidate's utility plus Gumbel or exponential noise,
// then the argmax), it needs a comparison and an argmax over values no
// party may see. Secure aggregation decrypts only sums, so Cohort had
// no way to draw it; this package is the foundation, to be wired into
// quantile by the job layer.
//
// Model and leakage profile: parties are semi-honest, N >= 2T+1, and no
// coalition of T parties learns anything beyond what a protocol opens
// by design, which each protocol's doc names: masked values (Mod2m's c,
// statistically hiding with κ = Kappa = 40 bits), random squares
// (RandomBits' r^2, independent of every bit) and outputs the caller
// asks to open (Open, OpenIndex). Shares are sent only to the parties
// the protocol names, over the caller's Network; errors name the
// protocol round, the party index and vector lengths, never an element.
//
// Not checked: shared inputs to the comparisons must be signed k-bit
// integers as the caller declares; a larger value gives a wrong result
// and its masked opening no longer hides its top bits. The protocols
// are not secure against malicious parties (no share is verified; a
// party that sends wrong shares makes the output wrong, and Open does
// not detect it). Arithmetic is not
// constant time (conditional subtraction, square-and-multiply with a
// public exponent); the exponents are public and the values shares.
//
// Protocols: Input, Add/Sub/MulPublic (local), Mul (Gennaro, Rabin and
// Rabin), Open, Random, RandomBits (Damgård et al.), and after Catrina
// and de Hoogh Mod2m, Trunc, BitLT, LTZ; then EQZ, Abs, Argmax
// (tournament) and OpenIndex. docs/mpc.md gives each one's rounds,
// openings and measured cost. Every protocol is vectorised: one call
// runs the protocol on a whole vector in the same rounds.
package mpc
