// Package sjc is secure join classification: a decision tree over the
// equi-join of tables held by different parties, identical to the tree
// grown on the materialised join, computed without materialising it and
// without any party seeing another's private values. The algorithm is
// Yabo Xu's (New Models and Techniques on Privacy-Preserving Information
// Sharing, PhD thesis, Simon Fraser University, 2008, chapter 3; Wang, Xu,
// Yu, She, "Classification spanning private databases", AAAI 2006).
//
// Where to start: the per-table rounds are pure functions of a table's
// Local and Part (local.go, part.go, propagate.go, candidates.go,
// split.go); Build and Evaluate (build.go) run them in one process; the
// distributed job `kind: sjc` is Kind, its rounds in rounds.go, its
// coordinator in coordinate.go and growth.go, a party's session in
// session.go, grow.go and exchange.go; `kind: sjc-predict` is PredictKind.
// internal/reftree is the join-then-build reference the tests hold the
// tree to.
//
// # Join graph
//
// A spec's join list holds one entry per edge of the join tree, each one
// or more equalities joined by AND between the same two tables:
//
//	join: ["L.ssn = S.dealer", "S.dealer = P.callee AND S.day = P.day"]
//
// Several entries for the same pair are merged into one composite key
// (the thesis allows one predicate per pair, §3.1.1). Join columns must be
// of kind key; exactly one column of all tables is of kind class, and its
// table is the target, the root of the join tree (NewGraph). The graph
// must be connected and acyclic: the errors name the cycle ("L - S - P -
// L") or the unreachable table. A join value is the canonical encoding of
// its components (KeyEncode: length, colon, text, per component), compared
// as text as written in the files.
//
// # Algorithm
//
// Every table keeps, per row, a class-count vector Cls: Cls[c] is the
// number of join rows of class c (at the current tree node) the row takes
// part in. Then every table's AVC sets (attribute value -> summed Cls)
// equal the AVC sets of the join, so every table scores its own attributes
// exactly (thesis Definition 2, Lemma 1, Theorem 1).
//
//  1. Private set intersection per edge (package psi) gives both
//     endpoints the shared join values; in process, Intersect.
//  2. Class propagation (Propagate, ClassSchedule; thesis §3.3.1): the
//     target starts with unit vectors; a depth-first traversal from it
//     sends class summaries (Summary) forward, where the receiver takes
//     ClsSum as Cls (Forward, formula (1)), and backward, where it
//     rescales Cls·ClsSum/ClsSum' (Backward, formula (2), ClsSum' read as
//     the receiver's current sum over its rows with the value); then a
//     breadth-first sweep from the last table visited sends backward
//     summaries outwards. Dangling rows drop out. At most three summaries
//     cross each edge.
//  3. At each node every table computes its candidates' gains from its
//     AVC sets (BestSplits) and sends the coordinator its Offer: the gains
//     of its frontier, never the attribute or threshold. The coordinator
//     picks the winner with the tie rule below (Choose) or makes a leaf
//     (Stop, or best gain <= Eps).
//  4. The winner splits its rows (SplitOwn); split summaries flow outwards
//     from it (SplitSchedule, SplitSummary) and every other table divides
//     each row's Cls per class in proportion (ApplySplit, formulas (3) and
//     (4)); a row may go to both children with part of its counts.
//  5. C4.5 pessimistic pruning on the finished tree (tree.Prune; thesis
//     §3.3.3), from the node counts alone.
//
// Every round is a method from (Local, the table's Part at the node, the
// public inputs of the step) to (new Part, message), with no network and
// no mutable shared state: Local holds a table's fixed private inputs;
// Part is a value.
//
// # Decisions
//
//   - Exact integers: Cls are uint64 join-row counts. Sums use checked
//     adds and formulas (2)-(4) multiply first in 128 bits (math/bits) and
//     divide exactly; a count above 2^64-1 is ErrOverflow naming the table
//     (and column), never wrapped, and a division with a remainder is
//     ErrInexact (every rescaling is a ratio of counts of the same join
//     rows, so it cannot happen with consistent summaries). 64 bits hold
//     1.8·10^19 join rows; big.Int would cost every node for a join no
//     tree is grown on.
//   - Rows: in the job, for a table the party groups (Kind.GroupRows,
//     node.yaml sjc_group_rows: by default, auto, when its distinct rows
//     are estimated at most a tenth of its rows, table.EstimateDistinct;
//     otherwise each row is its own, of weight 1; the choice is the
//     party's alone, in its own log, and sends nothing), a party holds
//     each training table as its distinct
//     rows over the columns the rounds read (every schema column but ids),
//     each with its multiplicity w (Local.weight; table.OpenDistinct: one
//     GROUP BY on a database, a streamed pass over a file). Rows alike in
//     those columns take part in the same join rows and go the same way at
//     every split, so a row of weight w carries w times one record's Cls:
//     the target's rows start with w·e_class, a forward propagation gives
//     w·ClsSum, and formulas (2)-(4) are linear in Cls and exact, so every
//     sum, summary, gain and tree is that of one row per record (Build,
//     which keeps one row per record, is the check: TestJobGroupsAlikeRows
//     and every job test). A Part lists row numbers (the AVC sets are
//     those of Definition 2's collapsed duplicates); rows whose counts
//     become all zero are dropped. Test sets are loaded the same way (the
//     test accuracy counts join rows); sjc-predict streams its tables and
//     holds one weighted row per way a row is routed, then answers per
//     record on a second streamed read (PredictKind, "Memory").
//   - Labels are the sorted distinct values of the target's class column
//     over all its rows (dangling ones too); the class is not private
//     (thesis §3.3.4).
//   - Split candidates: numeric attr <= t with t the midpoint of adjacent
//     distinct values present at the node (Midpoint: if float rounding
//     makes it equal to the upper value, the lower one); categorical attr
//     == v versus the rest, for every v present with rows on both sides.
//     Key columns are candidates only with params.join_splits (as
//     categorical: such a split tells the neighbour, through the split
//     summary, exactly which shared values went where), id and class
//     columns never.
//   - Gain: information gain, log2 entropy of the exact counts (Gain),
//     computed as (N·H(T) − N_L·H(L) − N_R·H(R))/N with each N·H as
//     n·log2 n − Σ c·log2 c: x·log2 x is tabulated for counts below 4096
//     and log2 of larger counts is a table-and-series evaluation within
//     1e-15 of math.Log2. The join-then-build reference calls the same
//     function, so the floats agree bit for bit and ties within Eps resolve
//     alike; its AVC sets, candidates, tie rule and splits are its own.
//   - Tie rule: with g* the best gain, among candidates with gain >= g* − Eps
//     the smallest (party, table, column, threshold or value) wins. This is
//     order-independent (a pairwise "within Eps" comparison is not
//     transitive). A table's frontier (candidates in key order whose gain
//     beats every smaller key, within Eps of the table's best) always
//     contains the overall winner if it is the table's, so offering the
//     frontier's gains lets the coordinator apply the rule exactly; the
//     frontier almost always has one entry, the table's best.
//   - Stop: pure node, fewer than min_split (2) join rows, depth max_depth
//     (10; the root has depth 0), or best gain <= 1e-12. Leaf label:
//     majority, ties to the smallest label.
//   - Pruning: the thesis's rule (§3.3.3): bottom-up, n becomes a leaf when
//     Leaf_error(n) <= Tree_error(n), the estimated errors E + AddErrs(N, E)
//     at CF 0.25 with AddErrs exactly C4.5 release 8's (see tree.AddErrs for
//     the formula and source). No subtree raising. N and E count join rows,
//     the training instances of §3.1.1. On by default; params.prune: false
//     turns it off.
//   - Release pruning (params.release_k, off by default): after C4.5 the
//     finished tree is pruned until every leaf holds at least release_k
//     join rows (tree.ReleasePrune: the anonymity-based tree pruning, ATP,
//     of Sharkey, Tian, Zhang, Xu, "Privacy-Preserving Data Mining through
//     Knowledge Model Sharing", PinKDD 2007, §4, for path k-anonymity; in a
//     binary tree a leaf below k is merged with its sibling, so its parent
//     becomes a leaf). A path of the released tree, its predicates held by
//     their parties, describes the group of join rows at its leaf; with
//     release_k no group in the public skeleton or in any party's kept
//     model is smaller than release_k. A join of fewer rows fails the job.
//     params.release_l and release_c add recursive (c, l)-diversity of
//     every leaf's class counts to the requirement (tree.Requirement), so
//     that no released path tells its rows' class too surely; ATP prunes
//     for both at once.
//     The result measures every tree's paths: "anonymity" holds its path
//     k (the smallest leaf's join rows) and, per l, the c of its recursive
//     (c, l)-diversity (tree.PathK, tree.DiversityC).
//   - Test accuracy is over test join rows, computed without materialising
//     the test join (Evaluate): class propagation over the test tables, then
//     the tree's splits applied by split propagation; at each leaf the
//     counts of its label are the correct join rows.
//   - Message values: a summary travels as an EdgeSummary: its join values
//     as positions in the edge's sorted shared values (both parties hold
//     that list from the edge's PSI; uvarint gaps, so strictly ascending),
//     its counts as uvarints. The receiver checks every position against
//     the list and the values it holds, and the number of counts
//     (ErrSummary). The in-process builder passes its summaries the same
//     way; the text forms (ClassSummary, SplitSummary: values as canonical
//     strings, sorted) remain for callers outside a job and for tests.
//   - Representation: each join key, attribute and the class column is
//     dictionary-encoded once per table (distinct value -> dense int32
//     rank), so rounds compare and index integers; a Part is a row list and
//     a flat count array, encoded in the kept state as two binary strings.
//
// # Distributed job
//
// Kind runs the rounds above as job steps (rounds.go). Every step has
// every party of the spec (a party holding no table of the join takes part
// and sends nothing but its empty outputs):
//
//  1. load: each party reads its tables, or their distinct rows (see Rows above)
//     and checks them against the schema (NewLocal); a table with more
//     distinct rows than the node's max_table_rows is refused, naming it;
//     the target table's party reports the class
//     labels, which the coordinator commits. A bad table fails the job
//     naming party, table and column.
//  2. propagate: for every edge between tables of two parties, the two run
//     a PSI (package psi; params.psi: auto by default, which runs ECDH on
//     ristretto255 when the two sides' distinct values add up to fewer than
//     1024 and KKRT16's OT-extension PSI from there, or ot, or ecdh) on the
//     edge's canonical join values, on sub-channel psi/EDGE (edges inside
//     one party intersect locally); then class propagation (ClassSchedule)
//     with each class summary a message from one neighbour to the other
//     (TypeClassSummary). Each party reports the root's class counts; an
//     edge with no common value, or an empty join, fails the job naming
//     the edge or target table.
//  3. choose, one step per tree level (round r; a level whose choice must
//     run again, because a party was silent, is the next round): for every
//     open node of the level each party computes its tables' frontiers
//     (BestSplits) and outputs their gains to the coordinator alone
//     (OfferOf). The coordinator picks each node's winner (Choose, or a
//     leaf when the best gain is <= Eps) and commits, per node, the winning
//     table and its gain. With params.hide_gains no gain leaves a party:
//     see "Hidden gains" below.
//  4. split, one step per level that has a split: every party checks the
//     committed winners against its own frontiers and tells every other
//     party holding a table whether they agree (TypeConfirm); only when all
//     agree does each winner split its rows with the candidate of exactly
//     the committed gain (SplitOwn) and split summaries flow outwards from
//     it (SplitSchedule, TypeSplitSummary, sub-channel split/NODE/EDGE).
//     Every party reports the children's class counts (all must agree),
//     which the coordinator commits. Children that Stop are leaves; the
//     others are the next level's open nodes. A split a party missed
//     (silent, restarted, or waiting for a message that never came) is
//     committed as a retry and runs again as the next round, from the same
//     state, up to 3 times in a row; a party that fails with its own
//     error fails the job, naming it.
//  5. The coordinator prunes the public skeleton (C4.5 and release pruning
//     need only the counts) and runs finish with the final skeleton: each party
//     keeps its predicates of the final tree's nodes (ModelSecret, with
//     Secrets.WriteSecret), and, when the spec has a test set, the test
//     join rows are classified without materialising the test join: PSI
//     and class propagation over the test tables, then split propagation
//     down the final tree, each party applying its own predicates; the
//     target's party reports the correct and total test join rows.
//
// A tree costs 3 + (levels) + (levels with a split) steps. Nothing private
// outlives a step but each party's kept state, so a new leader replays the
// committed decisions and re-runs the first unfinished step.
//
// A coordinator is not trusted to extract. Every party folds the committed
// decisions into the growth of the tree (growth) exactly as the coordinator
// does, and takes part in a step only when it is the one that fold
// determines, with the args it determines: the open nodes of the level,
// the level's committed winners, the final pruned skeleton. It refuses,
// naming the coordinator, a step out of turn or past max_depth, a choice
// at a node the log has closed, a split no choice was committed for,
// committed counts that are not its own, a gain its winning table did not
// offer, a winner one of its own candidates beats under the tie rule, and
// a final tree that is not the log's. The winners' gains in the log are
// those of the splits their children's committed counts make (every party
// checks it), so they disclose nothing the skeleton does not. Not checked:
// which of several candidates within Eps of each other wins (only the
// coordinator saw every gain), and a coordinator that stops growth early
// (it learns less, not more).
//
// The result (committed, seen by every member) holds the labels, the
// skeleton (each split naming its party and table only, and node ids), its
// size and anonymity, the model's secret name and the test accuracy. `cohort sim`, which
// owns every party, assembles the whole tree from the skeleton and every
// party's kept predicates (Assemble) into result.json's "tree". Over real
// nodes each party keeps its own part.
//
// A trained model stays split among its parties (ModelSecret: each party's
// predicates and the public skeleton, the secure decision tree of thesis
// §3.2); PredictKind (`kind: sjc-predict`) classifies new tables with it
// later, each party applying its own predicates.
//
// Restarts: a session keeps its training state (the PSI results, its
// tables' Parts at the last level's nodes, its won predicates) in its data
// dir after every propagate and split step (state.go), next to the state
// before the step. A session opened after a restart finds in the log the
// last such step committed (retries excluded) and goes on from the state
// it kept for it. The received summaries are not in the log, and
// re-deriving them would take every neighbour's cooperation, so the state
// is kept rather than rebuilt from the log alone; a party whose data dir
// lost it fails the job, naming itself. The state is emptied once the
// model is kept.
//
// # Memory budget
//
// A node may give its sjc Kind a MemoryBudget (bytes; 0, the default, is
// none): the thesis's spill-to-disk partitions (§3.4.1: "a data partition
// was cached if there is free memory or otherwise stored on disk"). A
// party's partitions are its tables' Parts at the level's nodes. When a
// step makes a node's Parts (the root's in propagate, the children's in
// split) it holds them if they fit the budget beside the Parts it already
// holds, and otherwise appends them to the step's spill file, a file of
// the job's scratch (jobs/JOB/sjc-spill/PHASE-ROUND-ATTEMPT in its data
// dir, mode 0600, written front to back and synced before the kept state
// names it; package sjc/internal/spill). The kept state names each spilled
// node's record and its class counts. Choose and split read a spilled
// node's Parts back when they reach it, one node at a time; split lets go
// of a held node's Parts once its children are made, and keeps only the
// new state in memory (a re-run reads the old one back from its slot).
// The rounds see the same Parts either way, so the tree is the same byte
// for byte (TestMemoryBudgetSameTree, TestSimRealNodesMemoryBudget).
//
// What the budget bounds: the Parts held between nodes. On top of it are
// the node at work (its Parts and its children's), the tables and their
// Locals, the PSI, and the test set's propagation at finish, which runs
// in memory. A budget below one row of a partition (4 + 8·labels bytes)
// fails the propagate step with ErrMemoryBudget naming sjc_memory_budget
// (the node.yaml field) and the party, never the budget.
//
// It is a node setting, not a spec param: a party's memory is its own
// business, like its max_table_rows, the spec that travels names tables
// and columns only, and a submitter (who is not trusted to ask only what
// is fair) should not decide how much of another member's data dir a job
// fills. The tree does not depend on it, so nothing in the log needs it.
//
// Spill files hold only what the kept state already holds: the party's
// own row numbers at each node and their class counts (which the class
// and split summaries it received shaped, as in memory), never a
// received summary, a shared join value or another party's data. A
// file no kept state names is removed when the next state is kept, when
// its step fails, and with the rest once the model is kept; the node
// removes the job's scratch when the job ends in the log, done or failed,
// and at its next start for a job that ended while it was down.
//
// # Hidden gains
//
// params.hide_gains (off by default) is the thesis's optional secure
// maximum (§3.3.4: "we can use the secure multiparty computation [Yao] to
// find which site has the maximum information gain without revealing the
// actual value"), which the thesis leaves unspecified and did not use in
// its experiments. Yao's millionaires' problem is a two-party comparison;
// with more parties, a tournament of pairwise comparisons whose outcomes
// someone learns reveals every comparison it makes, not only the maximum,
// and the tie rule (Eps, then the key order) must be part of what is
// computed or the trees differ. So the choose step computes, for every
// table t, with the tables in the tie rule's order (hidden.go):
//
//	count(t) = Σ_{A before t} (1 − b(A, t)) + Σ_{t before B} b(t, B) + [t has no useful split]
//
// where b(A, B) is 1 when B's best gain exceeds A's by more than Eps (the
// gains in fixed point, round(g·2^48), a useless table's as 0). count(t)
// is zero exactly for the table the tie rule picks, and for none when no
// table has a split of gain above Eps (a leaf). Only whether each count is
// zero is revealed, to the coordinator:
//
//   - b(A, B) of two tables of one party: that party computes it.
//   - b(A, B) of two parties' tables: a secure comparison (package
//     sjc/internal/seccmp: Damgård, Geisler and Krøigaard's comparison,
//     ACISP 2007, over exponential ElGamal on ristretto255). A's party
//     encrypts its input's bits under a fresh key of its own; B's party
//     blinds the comparison under a random coin δ; A's party decrypts a
//     bit β with b = β ⊕ δ, uniform to it. B's party also sends E_K(δ) under
//     the joint key K (below); A's party turns it into E_K(b) and sends it
//     back. Inputs are 2(v_A + ε + 1) and 2·v_B + 1 (ε = Eps in fixed point),
//     of 50 bits with two labels (compareBits).
//   - K is the sum of a fresh key share of every party holding a table
//     (n-of-n ElGamal, Pedersen 1991): no party can decrypt alone. The party
//     of t adds up count(t) under K, multiplies it by a random nonzero
//     scalar and re-randomises it; the next party holding a table (in name
//     order, cyclically) does so again, so that no single party knows the
//     blinding (an owner that is the coordinator could otherwise unblind
//     its own tables' counts, and learn how many comparisons they lost).
//     Every party holding a table sends the coordinator its partial
//     decryption of every table's count, and the second blinder its C2
//     half. The coordinator learns, per table, zero or a uniform nonzero
//     element.
//
// Five party-to-party messages per choose step (TypeCompareBits,
// TypeCompareBlinded, TypeCompareResult, TypeCompareCounts,
// TypeCompareCoBlinded, sub-channel compare), whatever the number of open
// nodes; the output carries no gain
// and the committed winners carry gain 0. The split step's winner splits
// with its frontier's first candidate (the smallest key within Eps of its
// best); the log's check of a winner's gain against its children's counts
// is skipped (there is no gain to check).
//
// Same tree as in the clear, with two exceptions that need gains closer
// than the rounding or forming a chain within Eps, which sjc's gains,
// ratios of exact counts, do not produce in any test: gains within 2^-49 of
// Eps apart may compare differently after rounding; and when the tables'
// best gains form a chain (g1 < g2 < g3, each within Eps of the next, g3 −
// g1 > Eps) no count is zero, and the node becomes a leaf (a party whose
// table has a useful split refuses that leaf when its level has a split).
// The clear mode's rule is then itself arbitrary (which table is "within
// Eps of the best" depends on the chain).
//
// Model: semi-honest parties (DGK; Pedersen's n-of-n decryption without
// proofs of key shares or partial decryptions: a party that lies gets a
// wrong winner, not another's gain, outside the model), a coordinator that
// does not collude with a party. A coordinator that is itself a party
// learns what it learns as the coordinator and as that party, no more: the
// joint key needs every party's share, and every count carries a blinding
// factor of another party. Checked by the parties: a winning
// table has a useful split (its party), a leaf has none (every party). Not
// checked: which useful table wins, which only the counts decide. Cost:
// per open node, one comparison per pair of tables of two parties; each is
// 7 scalar multiplications per input bit (50 bits) and 3.2 KiB each way;
// the figures are in docs/sjc.md. Off by default: it multiplies the choose
// steps' time many times over (the rest of the job is unchanged), and the
// gains are the thesis's accepted leakage; a consortium for which a party's
// per-node separating power is itself sensitive turns it on.
//
// # Leakage profile
//
// After the thesis's privacy analysis (§3.3.4) for semi-honest,
// non-colluding parties (§3.1.1), with a coordinator that may try to
// extract (above). TestJobLeakage captures every message and every log
// record of a job and checks them against this list; every failure text
// names tables, columns of the schema, edges, nodes and counts, never a
// value, gain or predicate (TestFailureTextsDiscloseNothing).
//
//   - The log (every member of the consortium): the spec; the class labels;
//     the skeleton of the tree (node ids, the table and party owning each
//     split, the class counts of every node, leaves and their labels),
//     level by level, with each split's gain (which its counts give; with
//     hide_gains, no gain at all); which steps were re-run and which
//     parties failed; the test set's correct and total join rows. No join
//     value (not even a shared one), no attribute value, no predicate, no
//     other gain.
//   - Every party of the job: the same, plus whether every other party
//     holding a table agreed to each level's winners (always yes under an
//     honest coordinator).
//   - Neighbours on an edge (the parties holding the two joined tables):
//     the shared join values and each other's number of distinct join
//     values (PSI); per shared value, the class counts of the join rows
//     behind it on the sender's side (class summaries: up to three per edge,
//     once per training and once for a test set), which expose
//     multiplicities (about how many far-side rows each shared value has);
//     per tree node and shared value present at the node, how those counts
//     divide between the children (split summaries), which for a value held
//     by one sender row is one bit of an unknown private predicate. A
//     summary names shared values by their position in the sorted
//     intersection, which both neighbours hold, so it discloses no more
//     than naming them. Non-shared join values and private attribute
//     values are never sent. This class and split summary leakage is the
//     thesis's accepted leakage (the class is not private, §3.3.4); hiding
//     it (masked or homomorphic summaries) is outside the thesis.
//   - Coordinator (the Raft leader of each step's attempt): every table's
//     offered gains at every open node (its best gain, plus any others
//     within 1e-12 of it), and so how well each party separates the classes
//     there. No attribute name, threshold or value. With hide_gains: per
//     open node, only which table wins, or that none has a split of
//     positive gain (a leaf): what the skeleton shows every member anyway.
//     No gain, no comparison of two tables' gains. TestJobLeakageHiddenGains
//     and TestSimRealNodesHiddenGains check that no offered gain, in any
//     encoding, is in any message, log record or node's data dir.
//   - With hide_gains, every party holding a table: ciphertexts under
//     another party's fresh key or the joint key, and per comparison it
//     encrypted a bit β that its peer's coin masks (uniform): nothing of
//     another's gain. The message sizes tell the number of open nodes and
//     tables, which the log shows anyway.
//   - The winning party: which of its candidates won each node it won, so
//     its own predicates; no other party learns any predicate.
//   - Non-adjacent parties exchange nothing but the confirmations.
//   - A party holding several tables sees their summaries in the clear; the
//     profile is per party, and an edge inside one party discloses nothing.
//   - Each party's data dir keeps its model part (its predicates by node
//     id) and, during training, its state and, under a memory budget, its
//     spill files (the same Parts; "Memory budget"); nothing of it leaves
//     the node. The query a database table is grouped by (its table's and
//     columns' names) is in the node's own log at debug level, never in a
//     message, a Raft record or an error.
//     In `cohort sim` one operator owns every node and sees the whole tree.
//
// # Not checked, not constant time
//
// Nothing here is constant time; gains, counts and summaries are public to
// their recipients by design. Parties are assumed semi-honest (§3.1.1): a
// summary with wrong counts is accepted if it is well formed, and yields a
// wrong tree. Colluding parties are out of scope.
package sjc
