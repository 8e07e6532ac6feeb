// Package quantile is the secure quantile job: every party holds one
// numeric column in its own tables, and the consortium learns chosen
// quantiles of the union of all rows (the pooled column) by bisection, each
// round one secure count over threshold secure aggregation (package
// secureagg). It is the job that shows the framework carrying many
// data-dependent rounds: each round's thresholds come from the previous
// rounds' committed decisions.
//
// # Protocol
//
// The answer for q is the lower quantile y*: the smallest pooled value with
// at least k = ⌈q·N⌉ pooled values ≤ y*, N the pooled row count; q lies
// strictly between 0 and 1 (see Exact releases). The coordinator keeps one
// bracket (lo, hi] per quantile with count(≤ lo) < k ≤ count(≤ hi), so
// y* ∈ (lo, hi], and every round (phase "count") halves each unfinished
// bracket:
//
//  1. The coordinator starts the round with public Args: the thresholds
//     (the split of every unfinished bracket, sorted, duplicates merged)
//     and, in round 0 only, a request for the row count.
//  2. Each party checks that the log determines those Args and that every
//     earlier round's committed counts are those it received (see Checks
//     on the coordinator), counts its own values ≤ each threshold (a binary
//     search in its files' column, sorted once when its session opens; one
//     query per database table, run by the database) and the
//     parties sum the count vector, one slot per threshold, with
//     secureagg.Aggregate (FracBits 0, ValueBits 40: up to 2^40 rows per
//     party). Every party receives the pooled vector from the root, keeps
//     it in its job scratch and reports its digest to the coordinator; the
//     root reports the vector itself.
//  3. The coordinator commits the pooled counts as the round's decision,
//     with the parties whose digest matches them (Vouched); each bracket
//     keeps the half where y* lies: hi = t when count(≤ t) ≥ k, else lo = t.
//  4. Once every bracket is narrow enough, one last step (phase "release")
//     asks every party to release the values: each checks the last round's
//     counts as in 2, derives the values from the log, and asks its policy
//     (job.Guard.Release) for each value and each of its tables. The
//     coordinator publishes the values only when every party allowed them.
//
// All quantiles bisect in parallel in one aggregation of a vector (one slot
// per quantile, a few bytes each inside one ciphertext), not one
// aggregation per quantile. The job ends when every bracket is at most
// params.precision wide, and reports for each the decimal with the fewest
// digits in (lo, hi]: y* is in there too, so |value − y*| < hi − lo ≤
// precision. A bracket closed on two adjacent floats holds y* alone, so
// precision 0 returns y* itself.
//
// # Decisions
//
// Bracket. min and max cannot be summed, and a secure max would tell every
// party the pooled extremes, so there is no bracket to find: the search
// runs over the whole float64 line, (−Inf, MaxFloat64], halving it in the
// order of float64 bit patterns (see split). Within one binade that order
// is linear in value; across binades the split halves the exponent range,
// so the first rounds find the sign and order of magnitude of y* (about 11
// rounds, fewer with a known range) and each further round adds one
// bit. Values within precision/2 of 0 count as one point, so the search
// does not walk down to 2^-1000. Rounds: about 12 + log2(|y*|/precision)
// for the quantile that needs most (round 0, which also counts N,
// included), at most 64 (the bits of the key; 65 with params.range);
// precision 0 runs until the bracket closes on two adjacent floats, 64
// rounds, and returns y* exactly.
// docs/quantile.md has the measured rounds. The price of no bracket is
// those rounds, and the pooled counts they reveal (one per quantile per
// round), not any party's extremes. A consortium that knows a range [a, b]
// likely to hold the quantiles may give it (params.range): round 0 then
// counts at a and b, every bracket starts as (−Inf, a], (a, b] or
// (b, MaxFloat64], whichever holds y*, and the search skips most of the
// order-of-magnitude rounds (23 → 17 for a median near 50 in [0, 100] at
// precision 0.01). A wrong range costs rounds, never the answer; the range
// is public and the pooled counts at a and b are revealed like any other.
//
// Precision. params.precision is absolute, in the column's units, default
// 0.01; 0 asks for the exact value. A relative
// default would need the scale of the data, which is what is being
// protected.
//
// Exactness. The thresholds are chosen in integer key space and the widths
// compared exactly (math/big), so every leader on every architecture
// derives the same thresholds from the same committed decisions, and the
// answer is a deterministic function of the pooled column: a job resumed
// after failover gives the same value to the bit. k is computed exactly from
// the shortest decimal of q (0.1 of 10 rows is the 1st value).
//
// # Checks on the coordinator
//
// The coordinator is not trusted to extract, nor to steer. A party takes
// part in a step only when the log and the spec determine it:
//
//   - Thresholds: a count round's Args must be those the party derives by
//     replaying the search over the committed rounds (a coordinator that
//     asks chosen thresholds, to read the pooled distribution where it
//     likes, is refused: TestCoordinatorCannotChooseThresholds).
//   - Parties: every step runs over every party of the spec, never fewer
//     (see Faults).
//   - Counts. Every party of a round receives the decrypted pooled counts
//     from the root of the aggregation, whether or not it made one of the
//     decryption shares (secureagg's Config.Decryptors asks t+1 of them up
//     front; the plaintext reaches every party, decryptor or not, only in
//     the root's result message), so every party that finished the round
//     can vouch for it: it keeps the counts in its job scratch (which
//     outlasts a restart) and reports their digest, bound to the job, phase
//     and round, to the coordinator. The coordinator commits the root's
//     counts only when every reported digest matches them, and names the
//     matching parties in the decision (Vouched); a party whose digest
//     differs fails the round, named. Before each later step (the next
//     count round, or the release) every party replays the log and refuses
//     a committed round whose counts differ from those it received, or that
//     names it a voucher when it received none, or, when it received none
//     (its parent failed to pass the result down, or it crashed before
//     keeping it), that no party but the round's coordinator vouched for.
//     The refusal names the refusing party, the step it refuses, the
//     coordinator and the round, never a count. So a coordinator that
//     commits forged counts, to steer the next thresholds where it likes and
//     publish a wrong value, is refused by every honest party of the round
//     at the next step, before anything of it is aggregated
//     (TestLyingCoordinatorRefused); the last round is checked by the
//     release step, so no forged count reaches a published value. What
//     this rests on: the parties compute honestly (semi-honest), so the
//     root of each round (a party, never the coordinator) sends every party
//     the result it decrypted, as secureagg assumes; the one not trusted is
//     the coordinator, whose own vouching, when it is a party, counts for
//     no other party.
//   - Values: the release step's Args are the values the coordinator is to
//     publish; each party derives them from the log and refuses others.
//
// What this does not check: the runtime publishes the result Coordinate
// returns, and no party sees it before it is committed, so a coordinator
// that skips the release step and writes a value of its own is caught
// only by a member replaying the log, where the value is a deterministic
// function of the committed, vouched counts. A coordinator that skips the
// release step and publishes the true values gains nothing on the
// allowance: each value was counted before the round whose counts
// determine it (Exact releases, TestSkippedReleaseStillCounts).
//
// # Exact releases
//
// A quantile is an exact value of pooled data: within its precision, the
// value of the row of rank ⌈q·N⌉ and of every row that shares its final
// bracket. No noise is added, so each node's policy bounds the releases
// (job.Guard.Release): a value is released only when at least the policy's
// min_k rows lie on either side of its rank and in its final bracket (at
// precision 0, or in a sparse region, the bracket holds few rows, and the
// value is theirs), and each value counts against each of the party's
// datasets' allowance of exact releases (policy exact_releases), over
// every job. q = 0 and q = 1 are the pooled extremes, a single row's
// value, and are refused at validation (params.quantiles). The job
// declares how many values it releases (job.Use.Releases, one per
// quantile), so a node refuses at admission a job that would exceed the
// allowance; then each value is counted with the policy at every party,
// each of its tables, before the count round that could finish its
// search, i.e. before any count that determines it is decrypted: a
// round's committed counts give every member the values it finishes, so
// counting them at the release step would let a coordinator that skips
// that step publish them uncounted. A round could finish a quantile when
// one of the pieces its thresholds cut the quantile's bracket into is
// narrow enough, whatever the counts; the value is counted once per job
// (the job scratch remembers it), and a round that could finish one
// before the pooled row count is known (a params.range no wider than the
// precision) is refused, as its rank could not be checked first: such a
// spec fails validation, naming params.range, and a party refuses the
// round too. The
// release step then checks every value again, with the rows of its final
// bracket, before anything is published. Rank,
// row count and bracket count come from the committed, vouched counts: the
// rank is ⌈q·N⌉, N is round 0's count, and the bracket holds
// count(≤ hi) − count(≤ lo) rows, both counts committed by the rounds that
// set its ends. A refusal at any party fails the job naming the party and
// the rule, and the result holds no value. A party asks its policy once
// per value and table in a job: a re-run of the release step (a party
// silent, a new leader) releases the same values, which the job publishes
// once, so a party that allowed them answers from its job scratch. A
// refusal of one value leaves the values allowed before it counted.
//
// No round's counts may leave a bracket of fewer rows than any party's
// floor either (bracketcheck.go): the bracket a round leaves is known only
// from its counts, and once they are in the log they pin its rows down,
// released or not. So, from the round after the pooled row count on, the
// parties first compute among themselves, on Shamir shares of their
// counts at the round's thresholds and of their own floors.min_k (package
// mpc; at least three parties), which piece of each unfinished bracket
// the rank falls in, how many rows it holds, and whether that is fewer
// than any party's floor; they open that one bit and nothing else. If it
// is set, every party refuses the round (naming floors.min_k, no number)
// before its counts are aggregated, so no committed round ever pins a
// quantile's bracket to fewer rows than a floor: the final bracket's check
// at release is then a second line. With two parties (a policy with a
// floor of two) the check is skipped: each then learns the other's counts
// from any pooled count anyway.
//
// # Differential privacy
//
// With params.noise ({mechanism: laplace | gaussian, epsilon, delta,
// colluders}) the quantiles are differentially private instead of exact
// (noisy.go). The search then runs over the public params.range [a, b],
// which it needs, on a grid of 2^R cells, R the fewest halvings of b − a
// that reach params.precision (> 0): every round halves every bracket at
// its midpoint, whatever the counts, so the job takes exactly R rounds,
// fixed before any count is seen. Each round's count vector (the row count
// in round 0, one slot per distinct midpoint) carries noise added inside
// the encrypted sum (secureagg's Noise: each party draws a share, sized so
// that the shares of all but params.noise.colluders parties, default the
// key's threshold t, make the full noise), with ε/R and δ/R of the job's
// budget: basic composition over the R rounds gives (ε, δ) for the job,
// and the thresholds of a round depend only on earlier noisy counts
// (adaptive composition). One row moves each count by at most 1 whatever
// its value, so a vector of s slots has L1 sensitivity s (Laplace) and L2
// sensitivity √s (Gaussian), which each party computes itself: a quantile
// needs no bounds from the owner, and the spec cannot state a sensitivity.
// The pooled counts each round commits are the noisy ones, rounded to
// whole numbers (post-processing), and nothing else of the pooled column
// is decrypted. The answer is the decimal with the fewest digits in the
// final cell, for the column clamped to [a, b] (a value outside the range
// counts as its nearer end); the result reports the noisy row count and
// the noise. Every draw spends on each of the party's datasets' column
// (job.Guard.Spend, re-runs included; admission weighs the job's declared ε
// and δ against what other jobs spent), and the values are no exact
// releases: there is no release step and no bracket check, and the
// differencing rules step aside as for any noised aggregate of sufficient
// sensitivity. Accuracy on Adult's ages is in docs/quantile.md.
//
// With params.noise.mechanism: exponential (epsilon, optional colluders;
// em.go, em_party.go) each quantile is instead drawn once from the grid's
// 2^R + 1 points y (R ≤ 12) by the exponential mechanism's family (McSherry
// and Talwar; Dwork, "An Ad Omnia Approach to Defining and Achieving
// Private Data Analysis"): report-noisy-max with exponential noise over
// the utility −|c(y) − q·N|, c(y) the pooled count of values ≤ y, which
// is ε-DP with noise Exp(2/ε) (one row moves the utility by at most 1)
// and is the permute-and-flip mechanism (McKenna and Sheldon; Ding, Kifer
// et al., "The permute-and-flip mechanism is identical to report-noisy-max
// with exponential noise"), whose error is never worse than the
// exponential mechanism's own (report-noisy-max with Gumbel noise, which
// cannot be split exactly into parties' shares, as exponential noise can:
// Exp(1) is a sum of Gamma(1/h) shares). No curator computes it: the
// parties share their row counts, their counts at every candidate and
// their noise shares among themselves (Shamir, package mpc; an honest
// majority, at least three parties, no ⌊(n−1)/2⌋ of which learn anything
// of the computation), compute every score, compare them in a secure
// argmax and open only the winning candidate's index. One step, phase
// "em", draws every quantile; each draw spends ε/|quantiles| on each
// dataset's column (basic composition) as each party's policy records it,
// just before its share of the index leaves (an attempt cut short before
// that opened nothing and spends nothing; a re-run draws anew). q enters
// the computation to 1/65,536 and N may not exceed 2^28 rows. Each
// party's noise share is sized so that the shares of all but
// params.noise.colluders parties (default ⌊(n−1)/2⌋) make the full
// noise: colluders who know their shares face an exponential mechanism
// with a known, data-independent shift of the scores, still ε-DP. The
// draw is the grid point itself, not a decimal within a cell.
//
// # Leakage profile
//
// A party sends only what secureagg sends (ciphertexts of its count vector
// or its subtree's product, the encrypted total down the tree, a decryption
// share with its proof, and the public result), and reports to the
// coordinator only the aggregation's outcome with the digest of the pooled
// counts it received (a hash of public counts) and, in the release step,
// that its policy allowed the release (control, nothing else). Every
// party learns N and, in each round, the pooled counts at that round's
// thresholds: those counts are the round's committed decision, in the log
// every member reads, with the names of the parties that vouched for them.
// Nothing else: no party, the coordinator included, learns another party's
// values, row count or counts. The pooled counts tell every member the
// pooled column's empirical distribution function at about
// 12 + log2(|y*|/precision) points per quantile, concentrated around the
// quantile (more with precision 0); the answer itself is a pooled statistic
// within precision of a pooled value, released only as Exact releases
// says. A party alone in a range learns the others' counts there only from
// the pooled counts minus its own, as with any pooled statistic. Failure
// texts name parties, steps, fields and rules, never a value or a count.
// In the exact search, from the round after the row count on, a party
// also sends Shamir shares (secret-share) of its counts at the round's
// thresholds and of its policy's floors.min_k, and of the brackets'
// check's intermediate values (package mpc); the check opens one bit,
// whether some bracket would hold fewer rows than some party's floor,
// which every party learns and the log records only as the refusal it
// causes.
//
// With the exponential mechanism a party sends only Shamir shares
// (secret-share: of its row count, its counts at every candidate, its
// noise shares, and the intermediate values of the computation, each
// masked or re-shared so that no ⌊(n−1)/2⌋ parties learn anything of
// them; package mpc says what each protocol opens and why it hides the
// data statistically, κ = 40) and reports the opened indices; the step's
// decision, in the log, is those indices, the drawn grid points. No
// count, no utility, no noise and no row count is opened or committed.
// TestExponentialOverRealNodes checks the parties' ledgers against this.
// TestLeakage checks one party's outgoing messages and step outputs against
// this, and that every committed decision is exactly the pooled counts;
// TestLyingCoordinatorRefused and TestExactReleasesBounded check the
// parties' ledgers and the failure texts of refused jobs.
//
// params.backend (auto, paillier or lattice) picks secureagg's
// cryptosystem; with auto the count vectors, shorter than
// secureagg.LatticeFrom, stay on Paillier. On the lattice backend the
// decryption shares carry no proof (a wrong one is found by comparing
// quorums), and the total is checked by sketches (a random key from each
// party to each child of the root, that child's sketch of its subtree's
// sum back: secureagg's package doc); the profile above holds otherwise.
//
// The search is that of Aggarwal, Mishra and Pinkas's multi-party k-th
// ranked element protocol (EUROCRYPT 2004), which reveals only whether each
// pooled count reaches k; revealing no more than that bit needs a
// comparison under encryption that secureagg does not offer, so here the
// pooled counts themselves are public.
//
// # Faults
//
// A round that produces no pooled counts (a party silent, unreachable or
// named missing by secureagg, a corrupted aggregation, too few decryption
// shares) is re-run with the same thresholds and all parties as the next
// round number, after a wait of 1, 2, 4, 8, 8 … s, up to params.retries
// (default 5) consecutive times; a node that restarts in that window
// reopens its session from its own tables and its job scratch (the counts
// it received) and the job finishes with the same answer. The same
// thresholds over the same parties reveal the same pooled counts, so a
// retry discloses nothing new. When the party is still missing after the
// retries, the job fails naming it. It is not re-run without the party,
// unlike sum: the pooled counts at the same thresholds with and without it
// would give every member the dropped party's own counts (and row count) by
// subtraction, so every party refuses a step over fewer parties than the
// spec's. Leaving it out is a new job someone submits knowing that. A party
// whose column cannot be read (no table with the column, a non-numeric
// column) withdraws at once and fails the job, naming it: a retry would not
// change its tables. A database count that fails because the attempt
// ended while it ran (the round re-run by a new leader or after a party
// was found unreachable, or the step's time out) is that attempt's
// failure only: the party counts again in the next attempt. A decryption
// share that fails verification is excluded as in secureagg; the counts
// are still right. A release step that a party misses is re-run the same
// way; one a party's policy refuses fails the job at once.
//
// A coordinator that dies mid-job is replaced by the next Raft leader,
// which replays Coordinate from the committed decisions and re-runs the
// unfinished step as a new attempt; the brackets, and so the answer, are
// the same. A coordinator that is also a party and stays down is a party
// that stays down: the job fails after the retries.
package quantile
