// Package boost is gradient-boosted trees over the join of tables held by
// different parties: the trees XGBoost's histogram method grows on the
// joined table (Chen and Guestrin, "XGBoost: A Scalable Tree Boosting
// System", KDD 2016, §2.2 and §3), grown without materialising the join,
// for any acyclic join schema package sjc accepts, many-to-many edges
// included. The training rows are the join's rows, as in sjc.
//
// This package holds the computation and its in-process driver (Train,
// TrainWith), and the distributed job `kind: boost` (Kind) that runs the
// same computation over real nodes (see "Distributed job" below). The
// rounds are pure methods of a table's Local and the class holder's
// Holder, with no I/O; the job's session runs them within its steps.
//
// # Semantics
//
//   - Features: every numeric column of every table. Cuts (bins.go): with
//     at most params.bins distinct values, every distinct value but the
//     largest; otherwise the values at ranks ⌈k·n/bins⌉−1 of the table's
//     own sorted column (its own rows, not the join's: a table cannot
//     weigh its rows by join multiplicity without learning it). A split
//     "column <= cut" sends a join row left when its row of that table
//     has a value at most the cut.
//   - Loss: logistic (two class labels; the positive class is the larger)
//     or squared (a numeric class column). Base score: the logit of the
//     positive share of the join rows, or their mean.
//   - Gradients and hessians are carried in fixed point, round(x·2^30), so
//     every sum is exact and independent of order: the Paillier sums equal
//     the clear ones and the reference's bit for bit. Sums are int64: a
//     join of up to 2^32 rows cannot overflow them (|g| <= 1 for logistic
//     loss); squared loss with large labels can, and is not checked yet.
//   - Growth is level-wise (XGBoost's depthwise policy). A node's best
//     split maximises G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ) over every
//     table's features and bins with H_L, H_R >= min_child_weight; ties
//     go to the first in (table pre-order, column name, bin) order; the
//     node splits when the gain exceeds 1e-6 (XGBoost's kRtEps), else it
//     is a leaf. Nodes at max_depth are leaves. Leaf weight −G/(H+λ) times
//     learning_rate.
//
// # Algorithm
//
// Every table keeps, per row, a signature: the outcomes of the table's
// own splits so far, one byte per split. Join rows whose tables' rows
// have the same signatures are alike for every split so far: they reach
// the same leaf of every tree and, sharing their class-holder row, have
// the same gradient.
//
// A "row" here may stand for several (grouped.go): a party reads a table
// as its binned groups (table.OpenBinned: rows alike in join values, every
// numeric column's bin and, at the class holder, the label, which are
// alike in every round), each weighted by its rows, when its node chooses
// to (Kind.GroupRows, node.yaml boost_group_rows; by default when an
// estimate puts the groups at a tenth of the rows or fewer). A database
// then computes the cuts and bins where the data lives and the party
// holds the groups, not the rows; the weights enter every count and sum
// below as multiplicities, so the model and every message are those of
// the row-by-row load.
//
//  1. Up (ComboSummary; Local.Up, Local.Groups). Bottom-up over the join
//     tree each table sends its parent, per shared join value, the
//     combos of its subtree (its rows' signatures with their children's
//     combos) and how many partial join rows carry each. The class holder
//     ends with its groups: each of its rows with the combos of its join
//     rows and their counts (Xu's class propagation of sjc, with combos in
//     place of classes, one direction only).
//  2. The class holder (Holder.Level) walks every group through the trees
//     to its margin and open node, and computes its gradient and hessian.
//  3. Down (DownSummary; Local.RootDown, Local.Down). For each edge, join
//     value and combo of the child's subtree, the sum over the join rows
//     outside the subtree of the gradient and hessian pairs, in the slots
//     of their open node (zeros elsewhere), flows outwards; each table
//     multiplies what reaches a row by its combos' counts and adds it per
//     bin of each of its columns (plain additions and multiplications by
//     public-to-it counts: homomorphic under Paillier).
//  4. The class holder opens the bin sums (in the job: threshold
//     decryption), picks every open node's split (Holder.Choose) and tells
//     the winning table its feature and bin; that table appends the split's
//     outcome to its rows' signatures (Local.Split) and keeps the
//     threshold.
//
// # Leakage profile
//
// Each message below is a message type of the job (TypeCombos and the
// rest); the audit ledger records it under an existing disclosure form:
// a combo summary as split-summary (counts of join rows per split outcome
// and join value, as sjc's split summaries), gradient and bin sums as
// ciphertext, a split choice as score, the load report's announced bins
// (lattice path, below) as a public result, declared as split-attribute
// (the form of what the log tells every member of a party's columns). No
// new ledger form is needed, and the default node policy admits the job
// with its grants for keys (psi-blinded, split-summary), attributes and
// the class.
//
//   - combo-summary (up, to the parent's party): for each join value in
//     the edge's private set intersection, how many partial join rows of
//     the sender's subtree carry each combination of split outcomes. The
//     class holder so learns, per own row, how many join rows went to each
//     side of every split: SecureBoost's instance space, counted in join
//     rows. An intermediate table learns the same of its subtree per its
//     own join value.
//   - gradient-ciphertext (down): packed Paillier ciphertexts under the
//     consortium's threshold key; the receiver learns nothing of their
//     contents, only which (join value, combo) entries exist, which the
//     up pass already told the sender. With params.reuse (the default;
//     reuse.go) the ciphertexts are fresh only at a tree's first level;
//     at deeper levels an entry whose join rows outside the receiver's
//     subtree all lie in one open node names its first-level entry and
//     that node instead, so the receiver (and every table below it, which
//     gets sums placed from those ciphertexts) learns the open node of
//     such entries: SecureBoost's instance space, which SecureBoost
//     discloses to its passive parties. Such a message is recorded as
//     split-summary. Re-using a ciphertext discloses nothing of its
//     contents: the receiver already holds it, and it stays under the
//     threshold key. params.reuse: false keeps the nodes hidden at the
//     cost of a fresh encryption per entry per level.
//   - bin-sums (to the class holder): per feature and bin of the sender's
//     tables, the encrypted gradient and hessian sums per open node, and
//     the number of packed summands (an upper bound on the join rows in the
//     bin). Only the class holder decrypts them: it learns bin-level sums,
//     never a row's (XGBoost's histogram, as in SecureBoost). A sender
//     that a down message told the class holder's packing layout moves
//     several bins' ciphertexts into one before sending (compress.go) and
//     names the slot width it used, the class holder's own: the class
//     holder reads exactly the same bin sums from fewer decryptions.
//   - split (class holder to the winner): the winning feature and bin.
//     The threshold stays with the winner; the class holder knows which
//     table and column won, the leaf weights stay with it.
//
// On the lattice path (params.backend lattice, or auto on a star whose
// every party holds the consortium's lattice key; lattice.go,
// lattice_job.go) the down and bin-sum messages are replaced:
//
//   - lattice-gradients (class holder to a table's party, ciphertext): the
//     entries' join values and combos (what the up pass told the class
//     holder), the number of open nodes per layout and the bins of the
//     layouts (public: the level's open nodes, the log's splits of the
//     level before, whose right children come by subtraction, and the bins
//     the log commits for the table's party fix them, and the grouping
//     into layouts, lattice_layouts.go, is a function of those and of the
//     message's number of entries) and RLWE
//     ciphertexts under the lattice key, one row per entry holding the
//     summed nodes' gradient and hessian sums, so that the receiver
//     cannot tell the entries' nodes apart. With params.reuse (the
//     default; lattice_reuse.go) the ciphertexts are all fresh only at a
//     tree's first level, which the receiver keeps (in memory and its job
//     scratch); at a deeper level part 0 also places each entry: fresh
//     (in the layouts, node hidden), in no summed node, or re-using its
//     first-level entry's chunk for the y-th summed node (split-summary,
//     as on the Paillier path: the receiver learns the open node of each
//     re-used entry, SecureBoost's instance space). params.reuse: false
//     names no node, at one fresh encryption per entry per level.
//   - lattice-bin-sums (the table's party to the class holder and to the
//     decryptors, the members of the plan's quorums; ciphertext): per
//     layout (and per summed node of the re-used entries, a one-node
//     layout of its own) and group of numeric columns (lattice_pack.go:
//     the columns packed into the layout's positions, a column of b bins
//     taking b−1), one ciphertext whose decryption holds every summed
//     node's gradient and hessian sums of every bin but bin 0 of each
//     column of the group (the class holder takes bin 0's sums as the
//     node's totals, which it computed, less the other bins': the same
//     sums; lattice_first.go), zeros in positions no column takes, and,
//     in every other coefficient, uniform noise modulo T: never the
//     weighted sums from which the rows' bins would follow
//     (lattice.BinSummer). Part 0 names the layouts' node counts, their
//     bins (the log's for the party) and the number of groups; to the
//     class holder alone it also names every numeric column's number of
//     bins, so that it finds each column's sums (recorded as score: what
//     it scores the columns' splits by; the Paillier path's bin sums, a
//     ciphertext per bin, tell it as much). A decryptor refuses bin sums
//     that name the columns' bins to it.
//   - lattice-share (a decryptor to the class holder alone,
//     decryption-share): its smudged decryption shares of each layout's
//     and group's bin sums, one per quorum it is in, made from the
//     ciphertexts their maker sent it, so the class holder cannot have
//     anything else decrypted under their name. The class holder so
//     learns the same bin sums as on the Paillier path (no packed-summand
//     counts: the products carry none), and nothing of the masked
//     coefficients beyond their noise.
//
// # Distributed job
//
// `kind: boost` has sjc's spec shape (parties, tables, a schema with one
// class column, join, an optional test set naming a test table for every
// table; params: trees, max_depth, learning_rate, bins, lambda,
// min_child_weight, loss, release, reuse, psi, backend, timeout_ms; ParseParams). The class holder is the party of the
// table with the class column. Its steps, each a typed round (rounds.go):
//
//  1. load: each party checks its tables (read row by row or as binned
//     groups, as it chose when its session opened) against the schema; the class
//     holder reports the positive label (the larger of the two), which is
//     committed and written to result.json.
//  2. psi: every edge between two parties' tables runs a private set
//     intersection of the join values (package psi, as sjc does; params.psi
//     picks the protocol); an edge inside one party intersects locally.
//     From then on a party refuses any summary a neighbour sends on the
//     edge (combo summaries up, gradient sums down, the lattice path's
//     head) that names a join value outside the intersection, with one
//     answer whether or not its own table holds the value: otherwise a
//     hostile neighbour could ask whether the party holds a value beyond
//     the intersection (TestHostileMemberClaimsAJoinValueNodes).
//  3. level, once per tree level (args: tree and depth, which every party
//     derives from the log): the up pass (combo summaries, sub-channel
//     up/EDGE), the class holder's gradients, the down pass (sums packed
//     and encrypted under the consortium's threshold Paillier key with
//     pooled randomisers where they leave the class holder, added
//     homomorphically from there on, sub-channel down/EDGE), every party
//     sends the encrypted bin sums of its tables to the class holder and
//     their digest to every other party (sub-channel bins), and the class
//     holder decrypts them jointly with secureagg.Decryption (sub-channel
//     decrypt): it asks t other parties for shares, and each decryptor
//     vets the request first, sharing only when every segment of it is,
//     byte for byte, what its sender's digest says that sender sent, so a
//     class holder cannot have a row's gradient ciphertext, or anything
//     else, decrypted. The class holder then chooses each open node's
//     split and sends every other party the splits its tables won
//     (feature and bin index); the winners append the outcome to their
//     signatures and keep the threshold. The class holder reports the
//     winning table of each open node (or that the tree closed), which
//     is committed. At max_depth only the up pass runs (the class holder
//     needs the groups for the leaf weights).
//     On the lattice path the down pass and the decryption are the three
//     messages above (sub-channels ldown/EDGE/PART, lbins/EDGE/PART,
//     lshare/EDGE/PART: each list of ciphertexts or shares in parts of at
//     most half a wire message; lattice_parts.go).
//     The decryption plan (latticePlan), which every party derives alike
//     from the job's parties and the key, has quorums with no member
//     common to all when the parties outnumber the key's quorum, so that a
//     wrong share makes them disagree and the level fails (a lattice share
//     has no validity proof); else the one quorum. The load step commits the backend: each party reports whether it holds
//     a lattice key of all the job's parties, and the coordinator picks
//     lattice for params.backend lattice (failing, naming the party, when
//     one lacks it) or for auto on a star where all hold it.
//  4. finish: with a test set, the test tables are scored without being
//     joined (evaluate.go: each party signs its test rows with all its
//     kept splits, a PSI per test edge on sub-channels test-psi/EDGE, one
//     up pass on test-up/EDGE; the class holder walks its test groups
//     through the trees and reports accuracy, AUC and rows, or the RMSE
//     under squared loss, which are committed and written to
//     result.json's "test"). Every party keeps its part of the model in its data dir
//     (ModelSecret: its predicates by table and ordinal; the class holder
//     also the base score, the skeletons and the leaf weights). With
//     params.release every party reports its part to the coordinator and
//     result.json holds the whole model; otherwise `cohort sim` puts it
//     together (Kind.Assemble).
//
// A level step re-run as a new attempt (after a leader change, which a
// loaded machine's missed Raft heartbeats also cause, or a party's node
// restarting within it) starts from the state every party had at the
// level's start. A level in which every failing party was silent,
// restarted, or waited in vain for a message or could not deliver one
// is committed as a retry and runs again (at most maxRetries times in a
// row); any other failure of a party fails the job, naming it. A party
// that fails a level tells the others at once (the runtime's failure
// notice), so those waiting for its messages are cut short instead of
// waiting out the step timeout, and the level is decided on its error.
//
// Restarts (state.go): after the psi step and after every level step each
// party keeps its training state in its job scratch (jobs/JOB/, which the
// node removes with the job): the shared join values, its tables' splits
// so far (feature and bin, from which the signatures are replayed), the
// tree's first-level down message to each of its tables (the ciphertexts
// the deeper levels re-use) and, at the class holder, the booster (base
// score, finished trees, the tree being grown and its open nodes, the
// splits made per table). Two slots written in turn keep the state at
// the level's start beside the state after it, for a level that runs
// again. A session opened after the node restarted reads its tables again
// and goes on from the state kept for the level the log says is due; the
// class holder draws a fresh randomiser pool and, for the rest of the
// tree, seals every entry afresh (its clear first-level summaries, from
// which re-used entries are marked, are not kept: the model is the same,
// the encryptions of that tree's deeper levels are not spared). On the
// lattice path a table's party keeps the tree's first-level chunks apart
// (jobs/JOB/boost-lattice-first-TABLE, written once per tree while it
// sums the first level) and reads them after a restart. A party
// whose kept state is missing or unreadable fails the job, naming itself
// (ErrResume). The state never leaves the node.
//
// The job's leakage profile, beyond the protocol's above:
//
//   - The log (every member): the positive label; per level the winning
//     table of each open node (as sjc's skeleton), or that the level runs
//     again (and, as for every step, which parties failed and why); the step args (tree,
//     depth); with params.release the model; with a test set its score
//     (accuracy, AUC, rows); when an edge's intersection
//     is empty, that it is (the job fails at psi naming the edge). No
//     join value, attribute value, threshold, gain, bin index, gradient
//     or leaf weight.
//   - The coordinator, beyond the log: nothing (every party's output is
//     what the log commits).
//   - A neighbour on an edge: the PSI's disclosure (the shared join
//     values); the combo summaries (split-summary); the encrypted gradient
//     sums (ciphertext), whose join values and combos the combo summaries
//     already named.
//   - The class holder: every party's bin sums per open node in the clear
//     (after the joint decryption), the number of packed summands of each
//     non-empty bin (its join rows: no more than the hessian sums tell,
//     since every join row has the same hessian under squared loss and
//     in the first tree under logistic loss), which bins are empty, and
//     each numeric column's number of bins (on the lattice path from the
//     bin sums' part 0, on the Paillier path from their count); as its decryptors' vetting
//     needs, every other party learns from each sender the number of
//     ciphertexts it sent and their digest (control).
//   - A winner's party: the feature and bin index of its tables' splits,
//     from the class holder (score).
//   - Every party: the decryption's share requests and shares (ciphertext,
//     decryption-share), which carry nothing decryptable to a party. On
//     the lattice path, the decryptors receive every table's masked bin
//     sums (ciphertext); no digests travel.
//   - The log, on the lattice path: the backend the load step chose, and
//     so whether every party holds a lattice key of the job's parties; and
//     the bins the layouts of each party's tables have (lattice_bins.go):
//     every party but the class holder's with a numeric column announces
//     in its load report the most bins any of its numeric columns has (at
//     most params.bins; one number per party, not per column), which the
//     coordinator commits. So every member learns each such party's
//     widest column's number of bins, which below params.bins says that
//     every numeric column of the party has at most that many distinct
//     values (a9a's binary columns: 2). The class holder learns every
//     column's number of bins from the decrypted sums anyway. Why: the
//     class holder encrypts before it sees a column, and a layout for
//     params.bins sends bins × the coefficients a narrower table needs
//     (docs/boost.md, "Bins per layout"). Every party checks the
//     committed numbers (the announcing parties only, each within 1 to
//     params.bins, its own as it announced) and every lattice message's
//     head names its layouts' bins, which the receiver checks against the
//     log: a coordinator or party that lies about them fails the job
//     (TestLyingBins).
//   - With a test set, as a level's up pass and the PSI over the test
//     tables: each neighbour the shared test join values and the combo
//     summaries of the test rows (every split's outcome, counted in test
//     join rows); the class holder, per own test row, the outcomes of
//     every split for its test join rows.
//   - Error texts name the party, table, column or field, never a value.
//
// What the profile assumes of the class holder (on either backend; noted
// in the fifth session, not changed): that its gradients are the loss's.
// The bin sums are exact integers, so a class holder that encrypted
// chosen values instead (a distinct power of two per entry, say) would
// read from each decrypted bin sum which of those entries fall in the
// bin: the other parties' rows' bins, a few dozen entries per column and
// level within the fixed point's width, more over many levels. Nothing
// in the protocol detects it (the gradients are encrypted, and only the
// class holder decrypts). SecureBoost's leakage analysis assumes a
// semi-honest active party for the same reason.
//
// Prediction with a trained model is the kind `boost-predict`
// (PredictKind; its doc has its steps and profile).
//
// TestJobStar, TestJobChain, TestJobTestSet and TestJobStarLattice (the
// lattice path, backends lattice and auto) run the job on real nodes
// and check every message the sessions send (re-used gradient
// ciphertexts included: the test fails if none was sent), every log
// record they read and every audit ledger entry against this profile;
// TestJobErrorTexts checks a failing job's error text.
package boost
