// Package sjc is secure join classification: a decision tree over the
// equi-join of tables held by different parties, identical to the tree
// grown on the materialised join, computed without materialising it and
// without any party seeing another's private values. The algorithm is
// Yabo Xu's (PhD thesis, SFU 2008, chapter 3; Wang, Xu, Yu, She, "Classification
// spanning private databases", AAAI 2006); the research report
// research/seed-004-xu-thesis.md §2 restates it with its errata, and
// DESIGN.md "SJC tree semantics" fixes the split rules.
//
// This slice is the in-process algorithm: the join graph, the per-table
// rounds as pure functions, their in-process driver (Build, Evaluate), the
// synthetic generator, and (in internal/reftree, for tests and benchmarks)
// the join-then-build reference. The distributed job (job.Kind, sessions,
// PSI, messages) is the next slice; each function below is meant to become
// one step.
//
// # Join graph
//
// A spec's join list holds one entry per edge of the join tree, each one
// or more equalities joined by AND between the same two tables:
//
//	join: ["L.ssn = S.dealer", "S.dealer = P.callee AND S.day = P.day"]
//
// Several entries for the same pair are merged into one composite key
// (the thesis allows one predicate per pair; DESIGN.md's example uses one
// string per edge). Join columns must be of kind key; exactly one column of
// all tables is of kind class, and its table is the target, the root of
// the join tree (NewGraph). The graph must be connected and acyclic: the
// errors name the cycle ("L - S - P - L") or the unreachable table. A join
// value is the canonical encoding of its components (KeyEncode: length,
// colon, text, per component), compared as text as written in the files.
//
// # Algorithm
//
// Every table keeps, per row, a class-count vector Cls: Cls[c] is the
// number of join rows of class c (at the current tree node) the row takes
// part in. Then every table's AVC sets (attribute value -> summed Cls)
// equal the AVC sets of the join, so every table scores its own attributes
// exactly (thesis Definition 2, Lemma 1, Theorem 1).
//
//  1. Private set intersection per edge (next slice: package psi) gives
//     both endpoints the shared join values; in process, Intersect.
//  2. Class propagation (Propagate, ClassSchedule; thesis §3.3.1): the
//     target starts with unit vectors; a depth-first traversal from it
//     sends class summaries (Summary) forward, where the receiver takes
//     ClsSum as Cls (Forward, formula (1)), and backward, where it
//     rescales Cls·ClsSum/ClsSum' (Backward, formula (2); ClsSum' is the
//     receiver's current aggregate, report §2.7); then a breadth-first
//     sweep from the last table visited sends backward summaries outwards.
//     Dangling rows drop out. At most three summaries cross each edge.
//  3. At each node every table computes its candidates' gains from its
//     AVC sets (BestSplits) and sends the coordinator its Offer: the gains
//     of its frontier, never the attribute or threshold. The coordinator
//     picks the winner with DESIGN.md's tie rule (Choose) or makes a leaf
//     (Stop, or best gain <= Eps).
//  4. The winner splits its rows (SplitOwn); split summaries flow outwards
//     from it (SplitSchedule, SplitSummary) and every other table divides
//     each row's Cls per class in proportion (ApplySplit, formulas (3) and
//     (4)); a row may go to both children with part of its counts.
//  5. C4.5 pessimistic pruning on the finished tree (tree.Prune), from the
//     node counts alone.
//
// Every round is a method from (Local, the table's Part at the node, the
// public inputs of the step) to (new Part, message), with no network and
// no mutable shared state (STYLE.md habit 1): Local holds a table's fixed
// private inputs; Part is a value.
//
// # Decisions
//
//   - Exact integers: Cls are uint64 join-row counts. Sums use checked
//     adds and formulas (2)-(4) multiply first in 128 bits (math/bits) and
//     divide exactly; a count above 2^64-1 is ErrOverflow naming the table
//     (and column), never wrapped, and a division with a remainder is
//     ErrInexact (it cannot happen with consistent summaries, report §2.13).
//     64 bits hold 1.8·10^19 join rows; big.Int would cost every node for a
//     join no tree is grown on.
//   - Rows stay one per source record (report G16): a Part lists row
//     numbers; rows whose counts become all zero are dropped.
//   - Labels are the sorted distinct values of the target's class column
//     over all its rows (dangling ones too); the class is not private.
//   - Split candidates (DESIGN.md): numeric attr <= t with t the midpoint of
//     adjacent distinct values present at the node (Midpoint: if float
//     rounding makes it equal to the upper value, the lower one);
//     categorical attr == v versus the rest, for every v present with rows
//     on both sides. Key columns are candidates only with params.join_splits
//     (as categorical; report G4), id and class columns never.
//   - Gain: information gain, log2 entropy of the exact counts (Gain); the
//     reference computes it operation for operation the same way, so the
//     floats agree bit for bit.
//   - Tie rule: with g* the best gain, among candidates with gain >= g* − Eps
//     the smallest (party, table, column, threshold or value) wins. This is
//     order-independent (a pairwise "within Eps" comparison is not
//     transitive). A table's frontier (candidates in key order whose gain
//     beats every smaller key, within Eps of the table's best) always
//     contains the overall winner if it is the table's, so offering the
//     frontier's gains lets the coordinator apply the rule exactly; the
//     frontier almost always has one entry, the table's best.
//   - Stop (DESIGN.md): pure node, fewer than min_split (2) join rows,
//     depth max_depth (10; the root has depth 0), or best gain <= 1e-12.
//     Leaf label: majority, ties to the smallest label.
//   - Pruning: the thesis's rule (§3.3.3): bottom-up, n becomes a leaf when
//     Leaf_error(n) <= Tree_error(n), the estimated errors E + AddErrs(N, E)
//     at CF 0.25 with AddErrs exactly C4.5 release 8's (see tree.AddErrs for
//     the formula and source). No subtree raising. N and E count join rows
//     (report §2.10). On by default; params.prune: false turns it off.
//   - Test accuracy is over test join rows, computed without materialising
//     the test join (Evaluate): class propagation over the test tables, then
//     the tree's splits applied by split propagation; at each leaf the
//     counts of its label are the correct join rows.
//   - Message values: summaries carry canonical join values as strings,
//     sorted, and counts as uint64; every receiver checks that a summary
//     names only values it holds, at most once, with the right number of
//     counts (ErrSummary).
//
// # Leakage profile (draft, for the distributed job)
//
// After research report §2.15 and G11; semi-honest, non-colluding parties.
//
//   - Every party: the class labels; the skeleton of the tree (node ids,
//     the party owning each split, the class counts of every node, which
//     every table can also compute from its own Part); the split predicates
//     of the nodes it won, and no others; the root-to-leaf path and label
//     of each instance it helps classify.
//   - Neighbours on an edge (the two parties holding the joined tables):
//     the shared join values and each other's number of distinct join
//     values (PSI); per shared value, the class counts of the join rows
//     behind it on the sender's side (class summaries: up to three per edge,
//     once), which expose multiplicities (about how many far-side rows each
//     shared value has); per tree node and shared value, how those counts
//     divide between the children (split summaries), which for a value held
//     by one sender row is one bit of an unknown private predicate. Non-
//     shared join values and private attribute values are never sent. This
//     class and split summary leakage is the thesis's accepted leakage
//     (class labels are not private); hiding it (masked or homomorphic
//     summaries) is outside the thesis.
//   - Coordinator: every table's offered gains at every node (its best
//     gain, plus any others within 1e-12 of it) and so how well each party separates the classes
//     there; the winner of each node (the split-site identity, also in the
//     skeleton); N and E per node. No attribute name, threshold or value.
//   - Non-adjacent parties exchange nothing directly.
//   - A party holding several tables sees their summaries in the clear; the
//     profile is per party, and an edge inside one party discloses nothing.
//
// # Not checked, not constant time
//
// Nothing here is constant time; gains, counts and summaries are public to
// their recipients by design. Parties are assumed semi-honest: a summary
// with wrong counts is accepted if it is well formed, and yields a wrong
// tree (the malicious case is out of scope, report G12).
package sjc
