// Package pgen is `kind: pgen`, knowledge model sharing over a horizontal
// partition (Sharkey, Tian, Zhang, Xu, "Privacy-Preserving Data Mining
// through Knowledge Model Sharing", PinKDD 2007, LNCS 4890): every party
// holds different rows of one schema; each grows a decision tree of its own
// rows, prunes it by anonymity-based tree pruning (ATP, the paper's §3.2)
// until every path holds at least params.release_k rows, and publishes it;
// the coordinator generates pseudo-rows from the published paths (PGEN,
// §2.2) and grows the global tree on them. No row leaves a party, and no
// cryptography is involved: the privacy is that of the published trees.
//
// Start reading at job.go (Kind: the one step, publish, and the
// coordinator's checks), then generate.go (PGEN) and data.go (tables as
// the grower reads them). The trees are package tree's, and so is the
// grower every party and the coordinator run (tree.Grow): its
// ReleasePrune is ATP, its PathK and DiversityC measure a published tree.
//
// # Spec
//
// One table per party, a schema for each, all the same (numeric and
// categorical attributes, exactly one class column);
//
//	params: {release_k: K, release_l: 0, release_c: 0, max_depth: 10,
//	         min_split: 2, prune: true, timeout_ms: 0, naive_bayes: false,
//	         random_forest: {trees: N, features: 0}, decision_table: false,
//	         conjunctive_rule: false, multiway: false,
//	         ranges: {num_attr: [min, max]}, values: {cat_attr: [v1, v2]}}
//
// release_k is required; release_l (at least 2) with release_c also
// requires every published path to be recursive (c, l)-diverse
// (tree.Requirement), and ATP prunes for both. A spec with a test set is refused: the global
// tree is public, so whoever holds test rows classifies them with it.
//
// # The job
//
// First the joint seed's two steps, seed-commit and seed-reveal round 0
// (job.JointSeed): each party commits to 32 bytes from crypto/rand, kept in
// its Secrets for the job, and opens them once the log holds every party's
// commitment; the joint seed is a hash of every opening, uniform if one
// party is honest. Then one step of its own, publish round 0. Each party
// loads its table, grows a tree
// (binary splits by information gain; numeric thresholds at the midpoint
// between two adjacent distinct values; categorical splits value == v;
// C4.5 pessimistic pruning when params.prune; with params.multiway C4.5's
// tree instead, one branch per categorical value, by gain ratio, and ATP
// merges a failing branch with siblings, tree.PruneTo), prunes it by ATP to the
// requirement (a party whose table as a whole does not meet it fails,
// naming params.release_k and params.release_l), and returns it to the
// coordinator; before it reads its table it asks its policy for one of
// its dataset's synthetic releases (Guard.Synthetic, see the leakage
// profile). The coordinator
// checks every tree (its splits are the party's table's, on schema
// attributes with their kind's operator; each node's counts are its
// children's sums; every leaf meets the requirement) and commits them.
// Then, from the committed trees alone and the joint seed, it generates
// the pseudo-rows (Generate) and grows the global tree with the same
// params (Global); every member can redo this from the log. The pseudo-rows
// do not come from the job's seed, which the leader alone picks: a
// coordinator could grind it for the draw whose global tree it prefers (a
// split it wants, or one it wants gone). A party serves
// publish round 0 only, only once the log holds the joint seed with its
// own contribution in it (Step checks every opening against its
// commitment), and only while the log holds no published tree of
// the job: a coordinator asking for more, or asking before the draw, is
// refused, naming it. lying_nodes_test.go plays, over real nodes, a
// coordinator that asks before the draw, one that forges the parties'
// commitments, and one whose publish step carries args;
// allowance_nodes_test.go a member that submits the job again.
//
// With naive_bayes the coordinator also learns the paper's second global
// model, a naive Bayes classifier, from the same pseudo-rows (GlobalBayes,
// bayes.go), and the result holds it as "naive_bayes"; with random_forest
// a random forest of that many trees (GlobalForest, forest.go: its
// bootstrap samples and attribute draws from the joint seed, under a label
// of their own), as "random_forest"; with decision_table a decision table
// majority (GlobalTable, dtable.go: nothing drawn), as "decision_table";
// with conjunctive_rule a single conjunctive rule (GlobalRule, rule.go:
// its grow and prune folds from the joint seed, under a label of their
// own), as "conjunctive_rule".
//
// The result holds the global tree ("tree": splits name no party or
// table, they are on the common schema), its size, the number of
// pseudo-rows, the joint seed that drew them (joint_seed, hex), every published tree by party ("published"), and per party
// ("local") its rows, nodes, leaves, path k and (c, 2)-diversity c.
//
// # Leakage profile
//
// Every member of the consortium learns, through the log, each party's
// published tree: its number of rows, and for every path (a conjunction of
// predicates on its attributes) the number of its rows of each class, each
// path holding at least release_k rows. The predicates tell of the values:
// a numeric threshold lies halfway between two adjacent distinct values of
// the party's column at that node, and a categorical one names a value the
// party holds (with params.multiway, every value its rows at that node
// hold, one branch each or several merged by ATP: the same kind of fact
// for more values, each branch's rows meeting the requirement). release_k alone gives path k-anonymity, not diversity: a
// path whose rows are all of one class tells every member that each of
// its at least release_k rows has that class (the homogeneity attack the
// paper describes); release_l and release_c prevent it, and the result
// gives each tree's (c, 2)-diversity c so that the members see it (null
// when some path is pure). A job bounds what its own tree tells, not what
// several jobs' trees tell together: the same rows under other params
// (release_k, max_depth, min_split) give a tree of other paths, and a
// member intersects paths of two trees into fewer rows than release_k. So
// each party's policy counts its tree as one of its dataset's synthetic
// releases (synthetic_releases, the allowance kde's samples count against
// too: one allowance for every release of a model of the rows), once per
// job whatever its re-runs, before the party reads its table, and past
// the allowance the party refuses the step, naming the rule
// (TestSyntheticAllowanceNodes, over real nodes; TestJobLeaderChanges's
// re-run counts once). A job submitted again with the same params
// publishes the same tree (growing and ATP draw nothing) and still
// counts: the policy sees a job, not its params. The coordinator learns
// nothing more than the members. The global tree, and the naive Bayes
// model, random forest, decision table and conjunctive rule when asked
// for, are functions
// of the published trees and the joint seed: they tell no member more
// than the log does. The joint seed's commitments and
// openings are public too: each is a party's output to the coordinator
// (disclosed as public-result), and the log gives them to every member; a
// contribution is 32 random bytes and tells nothing of its party's rows,
// and none is sent or logged before every commitment is committed
// (jobtest's CheckJointSeed, in TestJobDisclosesOnlyTrees).
//
// # Decisions
//
//   - A path gives exactly its leaf's rows of each class (the paper draws
//     each pseudo-row's class from hit and miss; a tree here publishes every
//     class's count, so Proposition 1's counts are kept exactly).
//   - The domains are the spec's params.ranges and params.values where
//     it gives them (public knowledge, as the paper assumes dom(A) known),
//     and otherwise what the trees publish (Generate): a numeric attribute
//     spans its thresholds, widened; a categorical one is the values its
//     splits name plus Other; an attribute no tree splits on is constant.
//     The global tree never splits on == Other, so that a row whose value
//     no split names goes where Other goes.
//   - Where ATP leaves only the root, the root is published as one leaf
//     when it holds release_k rows (ATP returns an empty tree): it still
//     counts the party's rows of each class for PGEN.
//   - The global tree is built at the coordinator and published, not kept
//     in parts: it holds nothing the published trees do not.
//   - The paper's other global models (§4: naive Bayes, conjunctive
//     rules, decision tables, random forests) are all here, each learnt
//     at the coordinator from the pseudo-rows the global tree is grown
//     on. The forest's trees are package tree's grower with a random
//     sample of attributes per node (tree.GrowParams.Features), not a
//     second learner.
//   - The paper's baseline BASEGEN (BaseGen: random tuples of the data
//     space labelled by each published tree) is library code for the
//     figures (docs/pgen.md), not a param: it drops what PGEN keeps of
//     each tree (each path's class counts and size), and on Adult its
//     global tree is below PGEN's in most cells (its single conjunctive
//     rule, a weak model either way, is above). Its
//     other baseline, LD (ℓ-diverse publishing), is package anonymize's,
//     compared in a figures test only.
//   - The paper has no vertical or hybrid case: a footnote to §2 names
//     them ("private data tables of data sources can form a horizontal,
//     vertical, or hybrid partition") and the paper treats the horizontal
//     one only. PGEN needs each published path to describe whole rows,
//     which a party holding some of the attributes cannot publish, so pgen
//     refuses specs whose tables differ (spec.Horizontal).
package pgen
