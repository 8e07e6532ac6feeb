// Package bicluster implements cHawk, the crossing-minimisation
// biclustering of Ahmad and Khokhar, on one party's matrix, and Phoenix,
// its privacy-preserving version on horizontally partitioned data: W.
// Ahmad and A. Khokhar, "Phoenix: Privacy Preserving Biclustering on
// Horizontally Partitioned Data", PinKDD 2007 (LNCS 4890, pp. 14–32),
// §2.2 for cHawk and §3 for Phoenix; "the paper" below. The paper gives
// cHawk's identification only by its inputs and outputs and prints parts
// of the cryptography wrongly; the decisions below say what this package
// does where the paper is silent or wrong, and why.
//
// Start reading at CHawk (one matrix), then Kind.Coordinate and
// session.Step (the distributed job). Generators live in bicluster/synth,
// scores and the k-means baseline in bicluster/score.
//
// # cHawk
//
// CHawk(m, seed, p) = CrossingMin, then Identify.
//
//  1. Crossing minimisation (the paper's §2.2 and §3.1). The matrix is the
//     weighted adjacency matrix of a bipartite graph of rows and columns.
//     Starting from a column order drawn from the seed (InitialColumns),
//     each iteration sorts the rows by their barycenters, the mean column
//     rank weighted by the row's values (the paper's eq. (2)), then the columns
//     by theirs, the mean normalised row rank weighted by the column's
//     values; it stops when the column order does not change or after
//     p.MaxIter iterations (5, Table 1), and the rows are sorted once more
//     under the final column order.
//  2. Identification (a reconstruction: the paper gives only its inputs
//     and outputs, a local search with a Bregman-divergence test). Every row, in row order, is a seed; its
//     active cells (above the two-means threshold of its values) form seed
//     windows of contiguous columns, gaps of up to p.Gap allowed, of at
//     least p.MinCols columns. From a seed the search grows, alternately,
//     the rows near the seed in row order and the columns near the window
//     in column order that fit the bicluster's constant model (their mean
//     divergence from the bicluster's mean is below δ), stepping over up to
//     p.Reach misfits in a row; it stops when nothing changes (at most four
//     passes). A result is kept when it has p.MinRows rows, p.MinCols
//     columns, a score below δ and a mean at least p.MinLift times its
//     rows' mean on the other columns. A seed already inside a found bicluster
//     holding half its window is skipped. Finally a bicluster with more
//     than p.MaxOverlap of its cells inside a larger one is dropped, and a
//     larger one absorbs a fragment with mostly its columns whose rows fit
//     its model. Overlaps below p.MaxOverlap are kept.
//
// The score of a bicluster with cells x and mean μ is the mean Bregman
// divergence of the cells from the constant model μ, divided by μ so that
// it does not depend on the data's scale: with t = x/μ,
// I-divergence t·log t − t + 1 (its mean is the KL divergence of the
// normalised cells from uniform; on 0/1 data it is −ln(density)), or
// Itakura–Saito t − log t − 1. Everything is deterministic for a seed:
// the seed enters only through job.Rand, every sort is stable with ties
// in the previous order, and no result depends on map order.
//
// # Phoenix steps
//
// The distributed job (Kind, below) runs these pure functions in each
// party's session and in Coordinate, with secureagg in place of the
// plaintext fold:
//
//   - InitialColumns(seed, cols): every party derives the same first
//     column order from the job's joint seed (job.JointSeed: drawn by
//     every party, chosen by none).
//   - Round(m, state, colOrder, mode) → (state', Contribution): a party
//     sorts its rows under the public column order and returns Num and Den
//     per column (Contribution.Vector, 2·cols values, for one secure
//     aggregation).
//   - Aggregate(a, b): the fold, in any order (secureagg computes it).
//   - UpdateColumns(sum, colOrder) → (colOrder', changed) and
//     Done(changed, iter, maxIter): public, every party and the
//     coordinator compute the same.
//   - Finish(m, state, colOrder, p) → local biclusters, then NewLocal for
//     each (its representative), Merge(locals, similar, minRows) with
//     PlainSimilar in the clear (the reference pipeline). The job decides
//     the same pairs with the same rule on encrypted representatives
//     (pairtest.go; see "Distributed job").
//   - FitRows(m, global, p): after the merge, each party adds its rows
//     that fit a global bicluster's model on its columns.
//
// With one party the steps are exactly cHawk (a test checks it). With 3–4
// parties summed in the clear they are within 0.02 match score of cHawk
// up to noise γ = 0.2 on the paper's data in Exact mode, 0.1 in
// MeanOfMeans mode (docs/bicluster.md).
//
// # Decisions
//
// What an implementer of the paper must decide, with the reason where this
// package departs from the paper or adds to it.
//
//   - Edge weights: a value's weight is max(x, 0). The
//     barycenter needs non-negative weights, and the shifted generator's
//     Gaussian noise makes small negatives in the background; treating them
//     as "no edge" keeps every row's weight finite without a global shift,
//     which parties could not agree on without another aggregation.
//   - Barycenter mode (§3.1): Exact by default (Num = Σ w·ρ and Den = Σ w
//     aggregated separately, the true barycenter of all rows); MeanOfMeans
//     as the option (Num = μ_ij, Den = 1 per party with weight in the
//     column: the paper's μ_G = Σ μ_ij / n, over the parties that have
//     weight in the column rather than all n, so a party without weight
//     there does not pull it to 0). Both are ΣNum/ΣDen, so one update.
//   - Rank scale: row ranks are normalised, ρ = pos/(rows−1), and
//     0.5 for a single row; cHawk uses the same, so one party equals cHawk.
//   - Initial order and ties: the initial column order is job.Rand(seed,
//     "bicluster/initial-columns").Perm(cols); every sort is stable with
//     ties in the previous order.
//   - Rows or columns without weight: barycenter +Inf, placed
//     last in their previous order.
//   - Termination: column order unchanged, or MaxIter (5, Table 1).
//   - Identification: the reconstruction above behind Identify;
//     MinRows = MinCols = 5 by default. Only constant biclusters are
//     modelled (a constant mean μ); coherent (additive or multiplicative)
//     models of the original cHawk are not implemented.
//   - Smoothing: none for the I-divergence (finite at 0:
//     B(0; μ) = μ); ε = 1e-6 added to every weight for Itakura–Saito.
//     Normalising each vector to a distribution, as the divergences'
//     definitions over measures suggest, is done for the whole bicluster
//     by the scale-free divergence above.
//   - δ is a strict bound ("below δ", §3.6) on the bicluster's score and
//     on each member row's and column's mean divergence. A δ much above
//     0.5 on 0/1 data lets background rows with a few noise 1s join, and
//     then the grown bicluster fails its score: keep δ ≤ ~0.7.
//   - Reach = 10 and Gap = 3, chosen by a sweep on the paper's data
//     (cHawk's match at γ = 0.25 rose from 0.31 with a reach of 3 to 0.90
//     with 10, in the sweep before Gap and the strict δ; 0.86 now). Reach is
//     the local search's neighbourhood; Gap keeps two biclusters that the
//     column order placed apart from joining into one seed window.
//   - Lift (not in the paper): a bicluster's mean must be MinLift = 1.5
//     times its rows' mean on the other columns. Biclusters are dense parts
//     of the weighted graph; without this, even patches of Gaussian
//     background noise pass δ (300×300 shifted data at σ = 10: 9.6
//     biclusters for 5, consensus 0.77; with it 5.2 and 0.97). Blocks of
//     low values in high surroundings are therefore not biclusters here.
//   - Fragments (not in the paper): on large noisy data the ordering
//     leaves a few of a bicluster's rows outside its run, which the local
//     search finds as smaller biclusters with the same columns; a larger
//     bicluster absorbs them (1,000,000 elements: 5 biclusters instead of
//     53).
//   - Known limit: two biclusters that share rows may be ordered with a
//     third bicluster's rows in between; the search then reports the
//     second one without the shared rows and the shared rows on the union
//     of the columns (TestCHawkOverlappingRows).
//   - Representative (§3.6): every column's mean over the bicluster's
//     rows (the paper's formula).
//   - β (§3.6's threshold on the Euclidean distance): PlainSimilar merges two locals of different parties when
//     their column sets overlap (Jaccard ≥ 1/2) and the RMS difference of
//     their representatives over the union of their columns is at most β
//     times the larger mean there (β = 0.6; scale-free, so one β serves
//     any data). The column test keeps two subspace biclusters of the same
//     rows apart, which representatives over all columns cannot. In
//     squares it is u·‖v − m‖² ≤ β²·max(S_v², S_m²) (S: a representative's
//     sum over the union): two polynomial comparisons, which is what lets
//     the job evaluate it under encryption. (A one-comparison rule with
//     the geometric mean, β²·S_v·S_m, lost 0.03 of match at γ = 0.2 with
//     four parties, so the job pays for two.)
//   - Merge: pairs are tested in index order and joined
//     transitively, so the result does not depend on the order of the
//     tests; representatives are size-weighted (Σ sums / Σ counts); a
//     global bicluster keeps the columns of members holding at least half
//     its rows and needs MinRows rows in all, while each party keeps
//     local biclusters from LocalMinRows = 1 row (a party holds only its
//     share of each bicluster's rows: ~2.5 of 10 with four parties). The
//     job also needs a global's locals to come from at least two parties
//     (see merge/0 below: a lone local's sums are its representative);
//     Merge in the clear, the reference pipeline and one party's cHawk,
//     keeps a global of one party's locals.
//   - Rows lost by local searches (not in the paper): a party sees ~2.5
//     rows of each bicluster with four parties, so noise cuts its local
//     biclusters and the merge alone lost up to a fifth of the rows
//     (Phoenix 0.67 against cHawk 0.86 at γ = 0.25). After the merge each
//     party adds its rows that fit a global bicluster's model (FitRows):
//     0.82 at γ = 0.25, and within 0.02 of cHawk up to γ = 0.2. The merge
//     result is public, so this costs no extra disclosure beyond the
//     rows' membership, which is the job's output anyway.
//   - Padding: not done, because it would hide nothing here. The
//     number of each party's local biclusters, their column sets and row
//     counts are committed in the locals step (the coordinator forms the
//     candidate pairs from them, and min_rows is tested on the counts);
//     every message size of the pair test follows from those (u+2
//     ciphertexts per pair, two results per pair) and of the aggregations
//     from the column count. Hiding them would need padding the locals
//     step itself to a fixed k_max of locals with a fixed column count and
//     testing min_rows under encryption, which this job does not do.
//   - Generators (§5.2, after Liu and Wang): disjoint diagonal blocks under a random
//     permutation by default, an overlapping variant, rows dealt to
//     parties by a seeded shuffle (synth).
//   - Baseline (§5.2): k-means clusters are scored as rows × all columns
//     (score).
//
// # Distributed job (kind: bicluster)
//
// Kind runs Phoenix over the job framework, one typed round (job.Round)
// per phase; every step's public decision is committed to the log, and
// Coordinate is a fold over those decisions (no clock, map order or fresh
// randomness). The coordinator is not trusted to extract: every party
// replays the committed decisions with the same pure functions
// (replay.go) and takes part in a step only when its args are the ones
// the log gives (the column order of an iteration or of the locals step,
// a merge test round's pairs, the merge's groups, the global biclusters
// of the rows step), and only once the merge test's committed bits are
// those the test's decryption gave it (bits.go); otherwise it refuses,
// naming the coordinator.
//
//  1. schema/0: each party reads its one table (an id column and numeric
//     columns, bicluster.FromTable) and reports its column names; the
//     coordinator commits them when every party has the same names in the
//     same order, and otherwise fails the job naming the party and the
//     column ("party org02 has column "c7b" at position 8 where party
//     org01 has "c7""). A party whose table has no rows or a non-numeric
//     value fails the job here, named, with the table and column.
//  2. seed-commit/0 and seed-reveal/0, the joint seed (job.JointSeed):
//     each party commits to 32 random bytes it keeps, then opens them
//     once every party's commitment is in the log; the seed is their
//     hash. A party refuses every later step, naming the coordinator,
//     until the log holds that seed with its own contribution in it, so
//     the initial order, and the local biclusters it leads to, are never
//     the coordinator's choice (the leader's job seed would be:
//     TestSimCoordinatorCannotChooseSeed).
//  3. iterate/k (k = 0 … ≤ max_iter−1): Args carry the public column
//     order (InitialColumns(joint seed) for k = 0). Each party replays Round
//     over the committed orders of iterations < k (its row order is never
//     stored or sent), runs Round with the step's order and sums
//     Contribution.Vector() (2·cols values) with secureagg.Aggregate in
//     the first iteration, and Num alone (cols values) in later ones: a
//     party's Den does not depend on its row order, so ΣDen is aggregated
//     and revealed once, and it bounds every party's later Num (Num_j ≤
//     Den_j ≤ ΣDen_j), so the later sums use that public bound in place of
//     value_bits and pack more values per plaintext. A party's Den comes
//     from table's local-computation layer (table.Aggregator.ColumnSums,
//     Σ max(x, 0) of every column in one query where the table lives, one
//     streamed pass over a file; the query in the node's log at debug
//     level), with the source and schema the rows were loaded with, and is
//     checked against the loaded rows (the two reads are two
//     transactions): the same row count, each column's sum within what
//     adding the same non-negative values in another order can move it
//     (rows·2^-52 of it, far inside the two bits numBits spares, and zero
//     exactly when Round's is), else the party withdraws naming the
//     column. MeanOfMeans sends 1 for each column it gives weight. Phoenix
//     still loads the rows: every iteration ranks them. The coordinator
//     commits the aggregated Num (and the first ΣDen) and UpdateColumns'
//     new order; Done ends the loop.
//  4. locals/0: each party runs Finish under the final order and reports
//     each local bicluster's column set and row count; they are committed.
//  5. test/r (r = 0, 1), the secure merge test (the paper's §3.6 with a
//     blinded comparison; pairtest.go): the candidate pairs are the locals of
//     different parties whose public column sets overlap (Jaccard ≥ 1/2),
//     each with the union U of its columns. Round 0's Args list, in each
//     component of the candidate pairs, the pairs of its first local with
//     the others; round 1's, the untested pairs that round 0's bits left
//     in different groups (testRound). That gives exactly the groups of
//     testing every pair (Merge's), with K−1 pairs for K matching locals
//     instead of K(K−1)/2. Every party derives the round's pairs itself
//     from the committed history and refuses a step with others, so the
//     coordinator cannot have pairs of its choosing tested. For each
//     pair (a of party A < b of party B), A sends B its representative on
//     U encrypted under the consortium's threshold key (E(V_j), E(V_j²),
//     E((ΣV)²) in fixed point); B evaluates homomorphically, with its own
//     plaintext M, E(x_A) and E(x_B), x = 2^G·u·‖V − M‖² − B·S² − 1 (§3.6's
//     decomposition, its signs corrected), blinds each as E(r·x + s) with
//     0 ≤ s < r (which keeps the sign), re-randomises and returns them; A
//     blinds each again and packs its pairs' values into few ciphertexts
//     for the root, secureagg.Root of the step (the first party that does
//     not coordinate), and sends every other party their digest
//     (secureagg.Digest) directly. The root decrypts them all with
//     secureagg.Decryption: it asks t parties for decryption shares with
//     batched proofs (more if some fail: those are excluded and named),
//     combines t+1 and reads the signs. A decryptor makes a share only of
//     values that match, party by party, the digests their producers sent
//     it, and otherwise refuses naming the root and the coordinator: so a
//     root that is party B of a pair cannot have A's encrypted
//     representative, which A sent it, decrypted in their place. The
//     coordinator commits one bit per pair, x_A < 0 or x_B < 0: exactly
//     PlainSimilar on the fixed-point representatives.
//     The root also sends every other party of the step the bits it read
//     (TypeBits, a public result), and each party keeps the bits of every
//     round (in its job scratch, so a restart keeps them). At every later
//     step that replays them (the next test round, the merge, the rows)
//     a party compares the committed bits with those it kept and refuses
//     a difference, naming the coordinator that committed them and the
//     round, never a bit: so a coordinator cannot commit "dissimilar" to
//     leave a local alone in a group whose sums would be its
//     representative, nor "similar" to join a dissimilar local to a group
//     (TestCoordinatorCannotForgeBits).
//  6. merge/0: the coordinator joins the similar pairs transitively
//     (Merge's rule, deterministic from the committed bits) and
//     drops groups whose public counts sum below min_rows, and groups
//     whose locals are all one party's. Each party sums,
//     per kept group and per published column of the group (held by
//     members with at least half its rows), its members' column sums
//     (representative × count) in one secureagg.Aggregate; the decrypted
//     sums over the public counts are the global biclusters' size-weighted
//     representatives, exactly the means result.json publishes. Every
//     member of a group adds to every slot (group, column) of it, so a
//     slot's contributors are the group's parties, and a party takes part
//     only when every group of the step has locals of at least
//     params.min_group_parties parties (default 3, or the job's parties
//     when fewer; never below two, minContributors) and the groups are
//     those the log gives; otherwise it refuses, naming the coordinator
//     and the step. With one contributor a decrypted slot is that party's
//     representative times its public count. Groups below that least are
//     left out by every party alike (keepGroups), and the job declares it
//     to every node's policy at admission (job.Use.LeastParties): a node
//     whose floor on parties (policy floors.min_parties) is above it
//     refuses the job before any row is read, naming the rule and
//     params.min_group_parties, never the floor. Each party also asks its
//     node's policy about every group's contributors on their own
//     (Guard.Aggregate with no table) and refuses the step before it
//     sends anything of it when a group is below its floor, naming the
//     rule, the group and the coordinator; with the admission check this
//     is a second line that an honest run never meets
//     (TestSimGroupBelowFloorLeftOut). With two contributors, where the
//     spec asks for it and the floors allow it, nobody else learns
//     either's contribution, and each of the two learns the other's,
//     which the pair test it took part in found within β of its own.
//  7. rows/0: Args carry the global biclusters (members, columns, public
//     representative). Each party reports the ids of its rows in each:
//     its members' rows and the rows that fit the model (FitRows). The
//     result (result.json) lists, per global bicluster with at least
//     min_rows rows, its column names, rows as "party:id" and the
//     representative's mean on each of its columns.
//
// Fixed point: frac_bits 16 and value_bits 62 (|x·2^16| < 2^62), so a
// party's per-column weight sum, and a group's column sum, may reach 2^46
// (7·10^13); beyond it secureagg refuses the party's input (ErrRange) and
// the job fails naming it. The packing adds log2(parties) bits per slot
// for the sum. 16 fractional bits give the same biclusters as float sums
// (TestPhoenixFixedPoint).
//
// Policy: before its data enters an aggregate each party asks its node's
// policy (job.Guard.Aggregate), once per job for the iterations' sums
// (over all its rows) and once for the merge's (over its locals' rows in
// the kept groups), naming its table with Column "" (the table's numeric
// columns, which every sum covers) and every party; at the merge it also
// asks, with no table, about each group's contributors (the floor on
// parties applies to each group's slots, above). A refusal takes the
// party out of the aggregation and fails the job naming it and the rule.
//
// Faults: a leader change re-runs the step in progress as a new attempt
// and replays the committed ones; a party's session rebuilt after a
// restart recomputes its row order and local biclusters from its table,
// the joint seed and the committed history, and reads the merge test's bits
// from its job scratch (a party whose scratch is lost cannot check them,
// and refuses the next step naming the round). A decryption share that fails its
// proof is excluded and the party named in result.json's "excluded"
// (secureagg; its input stays in the sums). A party missing from an
// aggregation fails the job naming it: the job is not re-run without it,
// since the sums with and without it would give its contribution by
// subtraction.
//
// Two parties run on a 2-of-2 key (keyring.Deal's default for two
// members): neither decrypts alone, but either can block decryption, so a
// bad share fails the job naming the party instead of being excluded, and
// every sum over two parties gives each the other's contribution by
// subtraction (ΣDen, ΣNum per iteration, its part of each global's sums).
//
// Where the secure merge departs from the paper: §3.6 computes the
// distance with a secure scalar product and compares it with β in a way it
// does not give; here the comparison is a blinded one, not a protocol that
// reveals the bit alone (that needs a DGK-style or garbled-circuit
// comparison, which this repository does not have). Blinding factors r are (2^32 +
// u)·2^e with u uniform on 32 bits and e uniform in [0, 64), so log2 r is
// spread over 64 bits. The parties learn the decided bits and nothing
// else; the root, which decrypts, learns each pair's two blinded values
// r_A·r_B·x + …, i.e. the two signs and log2 |x| blurred by the sum of two
// such exponents; A learns nothing it could decrypt. And the test uses
// the threshold key throughout, so no single party can decrypt A's
// representative.
//
// # Leakage profile (the distributed job)
//
// A party sends only ciphertexts under the consortium's threshold key
// (its encrypted contribution or subtree product, the encrypted total down
// the tree; in the merge test its encrypted representatives, the blinded
// values it evaluated or re-blinded, its packed values to the root and,
// from the root, every party's packed values to decrypt), decryption
// shares with proofs (on the lattice backend, without proofs), control
// messages (digests of ciphertexts, the lattice backend's sketch keys,
// requests that carry nothing else; the runtime's admission answers), the
// lattice backend's sketches of subtree sums (ciphertext), and public
// results (the aggregated sums from the root, the merge test root's bits
// to every party, and its step outputs to the coordinator, which the
// coordinator commits as they are). Every party
// and the coordinator learn, and the log holds:
//
//   - schema: every party's column names (the consortium's schema).
//   - joint seed: every party's commitment, then its opening (32 random
//     bytes, public once opened), and so the seed.
//   - per iteration: the aggregated Num and Den vectors (Exact: each
//     column's total weight Σ max(x,0) over all rows and its rank-weighted
//     sum; MeanOfMeans: the sum of the parties' local barycenters and how
//     many parties have weight in each column), hence the global
//     barycenters and column order; the number of iterations; which
//     parties are in each sum and whose shares were excluded.
//   - locals: for every party, how many local biclusters it found, and
//     each one's column set and row count.
//   - merge test: the tested pairs (public from the column sets and the
//     earlier round's bits) and one bit per tested pair, similar or not
//     (committed, and sent by the root to every party, which checks the
//     committed bits against them); pairs whose locals an earlier bit already grouped are
//     never tested. Only ciphertexts under the threshold key cross between
//     the pair's parties; only the packed, twice-blinded values are
//     decrypted, and only at the root (never the coordinator), which also
//     learns each pair's two signs and the order of magnitude of x
//     (blurred by two 64-bit exponents, see above) and commits only the
//     bit. A local's representative is never decrypted on its own.
//   - merge: for every global bicluster (a kept group), the sums of its
//     published columns over its members' rows, i.e. its published means
//     times its public count; no other sum is decrypted, no group is
//     aggregated twice, and groups under min_rows, or of one party's
//     locals, never are: a local that no other party's matches is never
//     published, whatever its count. In a global of two parties' locals
//     each of the two learns the other's contribution by subtraction (the
//     job's declared output, as in the paper's merged representatives); no
//     other member learns either.
//   - rows: the ids of each party's rows in each global bicluster (the
//     job's output), sent by the party to the coordinator and committed.
//
// Never leaving a party: its cell values, its row order, a local
// bicluster's rows, its representative (except inside a published
// global's means, a sum over at least two parties' locals, above), the ids
// of rows in no global bicluster. The coordinator
// learns nothing the other members do not, except each party's rows
// output a moment before it commits them; the merge test's root also
// learns each pair's two signs and blurred magnitudes (above).
//
// What is not checked: parties are semi-honest (the paper assumes
// malicious ones with zero-knowledge proofs throughout; only the
// decryption shares carry proofs here). The root's own packed values are
// its own word: the digests keep a root from substituting what another
// party sent, not from putting something else in its own place, which a
// party that followed the protocol never does. The check of the committed
// bits rests on the root's word: the root is a party that does not
// coordinate, and a root that colluded with the coordinator could send
// every party the forged bits.
// TestJobLeakage checks every message and log record against this, that
// the merge decrypts nothing but published means of groups of at least
// two parties, and that the bits reach every party from the root alone;
// TestJobDissimilarPairRevealsNothing, that two dissimilar locals under
// min_rows leave only their bit (the member-against-group merge this job
// used before decrypted their sum and failed both);
// TestJobLoneLocalNotDecrypted, that a lone local of min_rows rows is
// neither aggregated nor published; TestCoordinatorCannotDecryptLoneLocal,
// that every party refuses a coordinator that asks for its sums anyway.
//
// Nothing here is constant time; it works on a party's own data.
package bicluster
