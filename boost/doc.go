// Package boost is gradient-boosted trees over the join of tables held by
// different parties: the trees XGBoost's histogram method grows on the
// joined table (Chen and Guestrin, "XGBoost: A Scalable Tree Boosting
// System", KDD 2016, §2.2 and §3), grown without materialising the join,
// for any acyclic join schema package sjc accepts, many-to-many edges
// included. The training rows are the join's rows, as in sjc.
//
// This package holds the computation and its in-process driver (Train,
// TrainWith); the distributed job `kind: boost` over real nodes is not
// built yet (see docs/boost.md, "Status"). The rounds are pure methods of
// a table's Local and the class holder's Holder, with no I/O, so that a
// job session can run each as one step.
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
// # Leakage profile (of the protocol above; the job's test is to come)
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
//     up pass already told the sender.
//   - bin-sums (to the class holder): per feature and bin of the sender's
//     tables, the encrypted gradient and hessian sums per open node, and
//     the number of packed summands (an upper bound on the join rows in the
//     bin). Only the class holder decrypts them: it learns bin-level sums,
//     never a row's (XGBoost's histogram, as in SecureBoost).
//   - split (class holder to the winner): the winning feature and bin.
//     The threshold stays with the winner; the class holder knows which
//     table and column won, the leaf weights stay with it.
//
// Params: trees, max_depth, learning_rate, bins, lambda, min_child_weight,
// loss (logistic | squared), release, timeout_ms (ParseParams).
package boost
