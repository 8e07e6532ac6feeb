// Package integrate is the `integrate` job: several parties hold different
// attributes of the same people, linked by a record id; together they
// publish one integrated table that is k-anonymous on every quasi-identifier
// of a joint requirement {⟨QID_i, k_i⟩} (optionally with distinct
// l-diversity of the shared class), and no party learns another's values
// beyond what the published table shows.
//
// It is the two-party top-down specialisation TDS2P of Wang, Fung and Dong
// ("Integrating private databases for data analysis", ISI 2005), extended to
// n parties with a coordinator that folds their candidates, as Reddy, Raju
// and Valli Kumari ("A Dynamic Programming Approach for Privacy Preserving
// Collaborative Data Publishing") set the problem. The algorithm's per-party
// rounds are package anonymize's (Best, BetterCandidate, Split,
// TDSPublic.Apply); this package puts them on the job framework, each step a
// typed round (job.Round; rounds.go has them all). Start reading at
// Kind.Coordinate (job.go) and its folds (decide.go, mondrian.go), then
// session.Step (session.go) and replay.go, which every party runs before a
// step to check that the log determines it.
//
// # Spec
//
// Every party has one table with the record id column (params.id, default
// "id"), the class column (params.class, default "class"; every party holds
// it, as in TDS2P) and its own attributes. Every other column
// is published generalised and needs a taxonomy (`taxonomies: {column:
// path}`: YAML when the name ends in .yaml/.yml, else an ARX hierarchy CSV,
// numeric when every leaf is a number). params.requirements is the joint
// requirement; params.sensitive names the column a sensitive model
// protects, given in kind anonymize's names (any conjunction): l (distinct
// l-diversity, or entropy l-diversity with entropy: true), p
// (p-sensitivity, Def. 3.1 of X. Sun's thesis "Privacy Preserving Data
// Sharing in Data Mining Environment", 2010, the same condition as distinct
// l-diversity with p = l), p_plus, alpha and categories (p⁺-, (p, α)- and
// (p⁺, α)-sensitivity, Defs. 3.2–3.4), recursive_c and recursive_l
// (recursive (c, l)-diversity); params.model is the older nested form of
// the same (entropy_l, ...), not to be mixed with them. With algorithm tds
// the sensitive column is the shared class; with `algorithm: mondrian` it
// may also be a column one party holds (see "Mondrian" below), under every
// model. params.algorithm
// is tds (the default) or mondrian; params.hub names the PSI hub (default
// the first party by name).
//
// # Steps
//
//  1. schema (all parties). Each party loads its table and every taxonomy,
//     checks its input (an id column with distinct values, the class, a
//     taxonomy covering every value of every other column) and reports its
//     column names and a digest of the taxonomies. The coordinator commits
//     the attributes in their public order: owners by name, then each
//     owner's table order (so TDS's tie rule, smaller party then attribute,
//     is the attribute order and the result equals central TDS), after
//     checking that the digests agree, that no column has two owners and
//     that every QID column exists.
//  2. align (all parties). psi.Align intersects the id sets as a star around
//     the hub (params.psi: "auto" by default, which runs ECDH on
//     ristretto255 for a hub–spoke pair with fewer than 1024 ids in all
//     and KKRT16's OT-extension PSI from there; "ot", "vole" or "ecdh"
//     force one);
//     every party orders the common records
//     by encoded id, which gives all of them the same record numbering
//     without revealing more ids, and keeps its aligned row numbers (and a
//     digest of their ids) with Secrets.WriteSecret, in
//     integrate/<job id>/aligned under its data dir, where they stay after
//     the job. Output: the number of common records, a digest of the common
//     ids and one of the class labels, in aligned order. The coordinator
//     checks that every party found the same ids and holds the same class,
//     that k ≤ the number of common records, and commits the number. (A
//     party restarted in the middle of psi.Align runs it again with a fresh
//     secret while the others finish the old run; psi's run ids make the
//     mixed exchange fail with psi.ErrRestarted, or the step times out, and
//     the job fails naming the alignment or re-runs the step, never
//     publishing a wrong table; see TestHubRestartMidAlign.)
//  3. Round r, score (all parties). Each party rebuilds its TDS state from
//     the log (the schema, the alignment and every committed split) and
//     computes its best valid and beneficial specialisation (anonymize.Best:
//     InfoGain/(AnonyLoss+1)). Output, to the coordinator alone: attribute,
//     taxonomy node and score, or none (InfoGain and AnonyLoss are not sent).
//     The coordinator folds the candidates with anonymize.BetterCandidate and
//     commits the winner: party, attribute, node, without the score. No
//     candidate anywhere ends the rounds.
//  4. Round r, split (the winner only). The winner checks that the
//     committed winner is its own best candidate of the round, computes
//     anonymize.Split for its node and outputs it compactly: for every
//     record now at the node, in ascending record number, the position of
//     its child (one byte, or two for fan-outs over 256). The coordinator
//     checks its form and commits it: this is TDS2P's "SSN lists per child
//     partition", which every party needs to refine the partition. Every
//     party applies it (TDSPublic.Apply checks that it covers exactly the
//     records at the node) at its next step, once it has checked that
//     every class of every requirement whose QID holds the attribute keeps
//     k (the winner also that the split is its own).
//  5. publish (all parties). Every party computes the whole publication from
//     the public state (every attribute's node per record is public, the
//     class shared): distinct rows with counts, sorted by value, never in
//     record order (which follows the ids); and its NCP, also from the
//     public state alone (see "NCP" below); the output is disclosed as
//     generalised, the form Uses declares for a k-anonymous publication.
//     It also computes, per requirement, seed 003's measures (Reddy, Raju
//     and Valli Kumari, §4: privacy strength and informativeness of the
//     published nodes, the subset programme's value and the valid subsets
//     over the publication; reddy.go), from the publication and the public
//     taxonomies alone. The coordinator checks that all publications, NCPs
//     and measures are equal, that every requirement holds on it (and l),
//     and commits it with ncp, min_group and the measures per requirement. The job's result carries the publication,
//     so `cohort job result` on a running node has it; `cohort sim`
//     (Kind.Assemble) writes it as DIR/integrated.csv and summarises it in
//     result.json (columns and distinct rows).
//
// A party's state is rebuilt after a restart from its table, the alignment
// it kept (Secrets) and the log; a party restarted without its kept
// alignment fails the job and says so (it cannot redo the PSI alone). A new
// leader replays Coordinate against the log and re-runs the first
// unfinished step; PSI re-runs with fresh secrets.
//
// # Leakage profile
//
// Semi-honest parties; hash-to-group a random oracle and DDH in
// ristretto255 (ECDH mode), or KKRT16's base OTs, pseudorandom code and
// correlation-robust hash (OT mode); both disclose the same (package
// psi). Beyond the published table (which contains every party's
// generalised columns and the class):
//
//   - Every party learns which of its ids every party holds (so the common
//     count) and, through the record numbering, the generalised value of
//     every other party's attributes for each common id at every round: the
//     intermediate partitions are coarsenings of the final one, and the final
//     one, linked to ids, is the published table linked to ids (TDS2P's
//     inherent leak: the partitions are shared). No raw value of another
//     party that the publication does not show, no id not held by all, and
//     no other party's row order reaches it.
//   - The hub also learns, per spoke, the spoke's id-set size and which of
//     the hub's ids the spoke holds (pairwise intersections; psi.Align).
//   - The coordinator (the Raft leader; itself a party) learns, per round,
//     every party's best candidate: which of its cut nodes and its score.
//     This is a ranking signal about that party's values under the node
//     beyond the final table (selecting the argmax securely
//     would remove it; not done). It also sees the schema and alignment
//     digests (SHA-256 of the taxonomies and of the class labels in aligned
//     order, which every party holds anyway).
//   - The log (every member) holds the attributes and their owners, the
//     common record count, the winners in order (party, attribute, node), the
//     splits as child positions of anonymous record numbers (the ranks of the
//     sorted common ids, which only the parties can map to ids), and the
//     publication with ncp and min_group. A member that is not a party
//     learns the order in which specialisations won and nothing it could
//     link to an id.
//   - Seed 003's measures per requirement (TDS) are functions of the
//     publication and the taxonomies, which every member may see: they add
//     nothing to it (TestReddyGolden, and TestLeakage's check of every
//     message and log entry, cover them).
//   - Errors name the party, table and column (and the row number of the
//     first value a taxonomy does not cover), never a value: they reach the
//     log.
//
// TestLeakage checks the messages and log entries of a run against this:
// only psi-blinded, score, split-summary, generalised and public-result
// disclosures (and the runtime's control messages, which carry no data);
// scores and splits to the coordinator only; no score in the log; no id held
// by one party and no raw value the publication does not show anywhere; the
// committed splits, replayed, give exactly the publication's partition.
// TestSimExample checks every party's audit ledger the same way, and
// TestDeclaredUses that every message is a form Uses declares (the job runs
// under the default policy, which refuses any other).
//
// # What a coordinator can ask
//
// The coordinator is not trusted to extract. Every party replays the log
// (replay.go) and takes part only in the step it determines, on the parties
// it determines: the schema, the alignment, then per round the score (or
// propose) step on every party, the split of the committed winner by the
// winner alone (or the cuts of the committed choices, by the parties chosen),
// the check by the sensitive column's owner, and the publication once a
// round committed no winner (or no choice). Against its own data a party
// checks what the log cannot show: the committed schema gives it exactly its
// table's columns, and names it the sensitive column's owner exactly when it
// holds that column; the winner splits only its own best candidate of the
// round, an owner cuts only groups and attributes it proposed; the owner of
// a committed split or cut applies it only if it is the one it made, and the
// sensitive column's owner only if the committed answers are its own. Every
// party applies a committed split or cut only if every class keeps k (and
// the class's l), which it can count on the public partition, and checks
// the requirements on its part of the publication before it sends it. A
// refusal names the coordinator, and the refusing party sends nothing but
// it (TestCoordinatorCannotExtract: a split asked of a loser, of a node the
// winner did not propose, a forged split or cut that singles out a record,
// a publication before the rounds end, a cut of a group the log does not
// hold or by a party not chosen, forged answers of the sensitive column's
// owner, another party named its owner; TestCoordinatorCannotExtractNodes
// plays three of them over real nodes under the default policy, and
// TestHostileSpokeNodes a spoke whose PSI messages the hub refuses).
// What no party can check is the fold: that the winner's score was the
// best, or a choice the widest proposal (the scores reach the coordinator
// alone); a coordinator that picks another candidate costs utility, not
// privacy, since every candidate a party proposes keeps k.
//
// # Mondrian (params.algorithm: mondrian)
//
// Strict Mondrian (LeFevre, DeWitt and Ramakrishnan, "Mondrian
// multidimensional k-anonymity", ICDE 2006) over
// columns held apart, for analysts rather than one classifier: every open
// group is cut in the same round. Steps 3 and 4 become:
//
//   - Round r, propose (all parties). Each party rebuilds the partition from
//     the log and, per open group, finds its widest own attribute with an
//     allowable cut (anonymize.MondrianParty.Propose: each side keeps k
//     records, and the class's l-diversity; the median of its own values
//     within the group). Output, to the coordinator alone: per group, the
//     attribute and its width (NCP against the public range). The
//     coordinator commits per group the widest proposal's party and
//     attribute (anonymize.ChooseCuts), without the widths.
//   - Round r, cut (the chosen owners). Each owner outputs its groups' cuts:
//     per record of the group, in ascending record number, its part. The
//     coordinator checks them and commits them; every party applies them.
//   - Round r, check (only with a sensitive column one party holds): the
//     column's owner answers one bit per committed cut, whether every part
//     satisfies the sensitive model on its column, whichever model it is
//     (anonymize.DiverseParts evaluates it on each part's histogram at
//     home), declared
//     and disclosed as a score (a candidate cut's verdict); the bits are
//     committed; a refused cut is not made, its group stays open and
//     that attribute is not proposed for it again.
//   - publish (all parties): each party's labels of its own attributes per
//     group (numeric "[lo-hi]", categorical the lowest common ancestor), the
//     class counts per group (with the sensitive values, at their owner),
//     and its attributes' NCP sum (public ranges; the publication shows it).
//     The coordinator assembles the table and checks k and l on it.
//
// With the same attribute order and public ranges the partition is central
// Mondrian's on the joined table (TestMondrianEqualsCentral). Leakage, as
// TDS's above with "proposal" for "candidate" and "cut" for "split": the
// coordinator learns every party's widest cuttable attribute per group and
// its width (derivable from the final publication, which shows the group's
// sub-ranges); the log links record numbers to the committed parts, which
// the publication's classes refine. With a sensitive column one party holds,
// its owner learns every committed cut (the log) and answers one bit per cut
// (a score, to the coordinator); a refused cut's partition is in
// the log although it is never published: it tells every party, for the
// records of that group, on which side of another party's median (or
// taxonomy child) each falls. That is the price of checking a column no
// other party may see; the column itself leaves its owner only as published.
// The model does not change this: whatever it asks (p, p⁺, (p, α),
// entropy or recursive l), what leaves the owner is the same one bit per
// committed cut. TestLeakageMondrian, TestMondrianPrivateSensitive and
// TestPrivateSensitiveModels (every model; one bit per cut of each round)
// check messages and log entries against this, and
// TestSimPrivateSensitiveModels every party's audit ledger over real nodes.
//
// # NCP
//
// The committed ncp is the normalised certainty penalty of Xu et al.
// ("Utility-based anonymization using local recoding", KDD 2006) with
// public denominators (anonymize.Taxonomy.PublicPenalty): a categorical
// node costs its leaves over the taxonomy's; a numeric node its width over
// the width of its taxonomy's root range, not over the column's range in
// its owner's data. Every column has a taxonomy in the spec, so every party
// computes the same figure from the public state, and the figure reveals no
// party's data range (before issue 21 each owner sent the NCP sum of its
// columns against its data range, which reached the coordinator, and the
// combined figure was committed). Where the taxonomy's range is the data's
// (ARX's Adult hierarchies), the figure equals the one-table NCP of package
// anonymize; TestNCPRevealsNoRange checks that no data range is in any
// message or log entry.
//
// # Not done
//
// Numeric attributes use their fixed taxonomies under TDS (no dynamic
// interval splits of Fung, Wang and Yu's "Top-down specialization for
// information and privacy preservation", ICDE 2005; Mondrian cuts at
// values); the class
// must be held by every party; a sensitive column one party holds works
// with Mondrian only (TDS would need the same check per candidate); with a
// refused cut, Mondrian does not try the attribute's other cut points (the
// central l-diverse Mondrian does, so it can cut finer); Reddy
// et al.'s subset DP (anonymize.SubsetDP) is not offered as a
// distributed algorithm (it needs a trusted integrator or MPC), and it is
// not run on the publication either: every published class is a valid
// subset at the finest published level, so over what is published its
// optimum is the publication's own value, which is reported; seed 003's
// measures are reported for TDS only (Mondrian publishes ranges that are
// not taxonomy nodes, on which P and I are not defined).
package integrate
