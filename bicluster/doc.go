// Package bicluster implements cHawk, the crossing-minimisation
// biclustering of Ahmad & Khokhar, on one party's matrix, and the pure
// per-party and public steps of Phoenix, its privacy-preserving version on
// horizontally partitioned data (papers/000_* pp. 14–32, §2.2 and §3;
// research/seed-000-pinkdd.md §2.3, §2.10–2.12 and §4.2, whose rows the
// decisions below cite). Generators live in bicluster/synth, scores and
// the k-means baseline in bicluster/score.
//
// # cHawk
//
// CHawk(m, seed, p) = CrossingMin, then Identify.
//
//  1. Crossing minimisation (research Pseudocode A1). The matrix is the
//     weighted adjacency matrix of a bipartite graph of rows and columns.
//     Starting from a column order drawn from the seed (InitialColumns),
//     each iteration sorts the rows by their barycenters, the mean column
//     rank weighted by the row's values (Phoenix eq. (2)), then the columns
//     by theirs, the mean normalised row rank weighted by the column's
//     values; it stops when the column order does not change or after
//     p.MaxIter iterations (5, Table 1), and the rows are sorted once more
//     under the final column order.
//  2. Identification (research Pseudocode A2; the proceedings give only
//     its inputs and outputs). Every row, in row order, is a seed; its
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
//     column order from the job's seed (no message).
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
//     PlainSimilar in the clear (the reference pipeline). The job never
//     has another party's representative: it aggregates groups' sums and
//     each party runs PlainSimilar of its own locals against its group's
//     public representative (see "Distributed job").
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
// Research §4.2 rows, with the reason where this package departs from or
// adds to the recommendation.
//
//   - Edge weights (row 2 of §4.1 A): a value's weight is max(x, 0). The
//     barycenter needs non-negative weights, and the shifted generator's
//     Gaussian noise makes small negatives in the background; treating them
//     as "no edge" keeps every row's weight finite without a global shift,
//     which parties could not agree on without another aggregation.
//   - Row 9, barycenter mode: Exact by default (Num = Σ w·ρ and Den = Σ w
//     aggregated separately, the true barycenter of all rows); MeanOfMeans
//     as the option (Num = μ_ij, Den = 1 per party with weight in the
//     column: the paper's μ_G = Σ μ_ij / n, over the parties that have
//     weight in the column rather than all n, so a party without weight
//     there does not pull it to 0). Both are ΣNum/ΣDen, so one update.
//   - Row 10, rank scale: row ranks are normalised, ρ = pos/(rows−1), and
//     0.5 for a single row; cHawk uses the same, so one party equals cHawk.
//   - Rows 4, 11: the initial column order is job.Rand(seed,
//     "bicluster/initial-columns").Perm(cols); every sort is stable with
//     ties in the previous order.
//   - Row 12, rows or columns without weight: barycenter +Inf, placed
//     last in their previous order.
//   - Row 13, termination: column order unchanged, or MaxIter (5).
//   - Row 15, identification: the reconstruction above behind Identify;
//     MinRows = MinCols = 5 by default. Only constant biclusters are
//     modelled (a constant mean μ); coherent (additive or multiplicative)
//     models of the original cHawk are not implemented.
//   - Row 16, smoothing: none for the I-divergence (finite at 0:
//     B(0; μ) = μ); ε = 1e-6 added to every weight for Itakura–Saito.
//     The research note suggests normalising vectors to distributions; the
//     scale-free divergence above does that for the whole bicluster.
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
//   - Row 17, representative: every column's mean over the bicluster's
//     rows (the paper's formula).
//   - Row 18, β: PlainSimilar merges two locals of different parties when
//     their column sets overlap (Jaccard ≥ 1/2) and the RMS difference of
//     their representatives over the union of their columns is at most β
//     times the larger mean there (β = 0.6; scale-free, so one β serves
//     any data). The column test keeps two subspace biclusters of the same
//     rows apart, which representatives over all columns cannot.
//   - Row 20, merge: pairs are tested in index order and joined
//     transitively, so the result does not depend on the order of the
//     tests; representatives are size-weighted (Σ sums / Σ counts); a
//     global bicluster keeps the columns of members holding at least half
//     its rows and needs MinRows rows in all, while each party keeps
//     local biclusters from LocalMinRows = 1 row (a party holds only its
//     share of each bicluster's rows: ~2.5 of 10 with four parties).
//   - Rows lost by local searches (not in the paper): a party sees ~2.5
//     rows of each bicluster with four parties, so noise cuts its local
//     biclusters and the merge alone lost up to a fifth of the rows
//     (Phoenix 0.67 against cHawk 0.86 at γ = 0.25). After the merge each
//     party adds its rows that fit a global bicluster's model (FitRows):
//     0.82 at γ = 0.25, and within 0.02 of cHawk up to γ = 0.2. The merge
//     result is public, so this costs no extra disclosure beyond the
//     rows' membership, which is the job's output anyway.
//   - Row 26, generators: disjoint diagonal blocks under a random
//     permutation by default, an overlapping variant, rows dealt to
//     parties by a seeded shuffle (synth).
//   - Row 27: k-means clusters are scored as rows × all columns (score).
//
// # Distributed job (kind: bicluster)
//
// Kind runs Phoenix over the job framework, one step per phase and round;
// every step's public decision is committed to the log, and Coordinate is
// a fold over those decisions (no clock, map order or fresh randomness).
//
//  1. schema/0: each party reads its one table (an id column and numeric
//     columns, bicluster.FromTable) and reports its column names; the
//     coordinator commits them when every party has the same names in the
//     same order, and otherwise fails the job naming the party and the
//     column ("party org02 has column "c7b" at position 8 where party
//     org01 has "c7""). A party whose table has no rows or a non-numeric
//     value fails the job here, named, with the table and column.
//  2. iterate/k (k = 0 … ≤ max_iter−1): Args carry the public column
//     order (InitialColumns(job seed) for k = 0). Each party replays Round
//     over the committed orders of iterations < k (its row order is never
//     stored or sent), runs Round with the step's order and sums
//     Contribution.Vector() (2·cols values) with secureagg.Aggregate. The
//     coordinator commits the aggregated Num and Den and UpdateColumns'
//     new order; Done ends the loop.
//  3. locals/0: each party runs Finish under the final order and reports
//     each local bicluster's column set and row count; they are committed.
//  4. merge/r (r = 0 … ≤ merge_rounds−1): the coordinator groups locals of
//     different parties whose column sets overlap (Jaccard ≥ 1/2, the
//     column half of PlainSimilar), transitively, in (party, local) order,
//     and drops groups whose members' counts sum below min_rows. Each
//     party sums, per group and per column in the union of the group's
//     members' column sets (no other column), its members' column sums
//     (the representative times the count) in one secureagg.Aggregate; the
//     decrypted per-group sums over the public counts are the groups'
//     size-weighted representatives (research row 20). Knowing the
//     group's representative and its public columns, each party tests its
//     own members against it (PlainSimilar with β: the value half of the
//     merge test, on its own plaintext representative, which never leaves
//     it) and reports the misfits' indices; the coordinator commits the
//     sums and the misfits, takes the misfits out as groups of their own
//     (dropped if under min_rows) and runs the next round, until no
//     member misfits; the last allowed round does not test.
//  5. rows/0: Args carry the global biclusters (members, columns, public
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
// Faults: a leader change re-runs the step in progress as a new attempt
// and replays the committed ones; a party's session rebuilt after a
// restart recomputes its row order and local biclusters from its table,
// the seed and the committed history. A decryption share that fails its
// proof is excluded and the party named in result.json's "excluded"
// (secureagg; its input stays in the sums). A party missing from an
// aggregation fails the job naming it: the job is not re-run without it,
// since the sums with and without it would give its contribution by
// subtraction.
//
// Departure from the research's secure merge (D0/D1, rows 18–19): the
// pairwise test on encrypted representatives (a homomorphic squared
// distance, then a secure comparison with β) needs computation on
// ciphertexts other than a sum and a secure comparison, which secureagg
// does not offer. The job uses instead the most private merge that sums
// alone allow: no individual representative is ever decrypted, only the
// sums of groups the public column sets form, and each party compares its
// own representative with the group's in the clear at home. This is a
// member-against-group test, not the pairwise one, so groups are formed
// by columns first; on the paper's data the job matches cHawk and the
// pure pipeline (TestJobMatchesCHawk).
//
// # Leakage profile (the distributed job)
//
// A party sends only ciphertexts (its encrypted contribution or subtree
// product, the encrypted total down the tree), decryption shares with
// proofs, and public results (the aggregated sums from the root, and its
// step outputs to the coordinator, which the coordinator commits as they
// are). Every party and the coordinator learn, and the log holds:
//
//   - schema: every party's column names (the consortium's schema).
//   - per iteration: the aggregated Num and Den vectors (Exact: each
//     column's total weight Σ max(x,0) over all rows and its rank-weighted
//     sum; MeanOfMeans: the sum of the parties' local barycenters and how
//     many parties have weight in each column), hence the global
//     barycenters and column order; the number of iterations; which
//     parties are in each sum and whose shares were excluded.
//   - locals: for every party, how many local biclusters it found, and
//     each one's column set and row count.
//   - per merge round: each aggregated group's column sums on the union
//     of its members' column sets (so its representative there: the mean
//     of each such column over the group's rows; no other column's sums
//     are aggregated) and which locals misfit their group's representative
//     (one bit per local). A group whose members all belong to one party
//     reveals that party's sums over them; in a group of two parties each
//     learns the other's sums by subtraction (any public merged
//     representative does). Groups under min_rows are never aggregated.
//   - rows: the ids of each party's rows in each global bicluster (the
//     job's output), sent by the party to the coordinator and committed.
//
// Never leaving a party: its cell values, its row order, a local
// bicluster's rows or representative on its own, the ids of rows in no
// global bicluster. The coordinator learns nothing the other members do
// not, except each party's rows output a moment before it commits them.
// TestJobLeakage checks every message and log record against this.
//
// Nothing here is constant time; it works on a party's own data.
package bicluster
