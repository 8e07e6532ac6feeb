// Package kde is `kind: kde`, KDE resampling for pooled classification
// over a horizontal partition (Tan and Ng, "Privacy-Preserving Sharing of
// Horizontally-Distributed Private Data for Constructing Accurate
// Classifiers", PinKDD 2007, LNCS 4890): every party holds different rows
// of one numeric schema; each draws a synthetic sample from a kernel
// density estimate of its own rows, class by class, and publishes it; the
// coordinator pools the samples, on which any member may train a
// classifier. No row leaves a party, and no cryptography is involved: the
// privacy is that of the samples.
//
// Start reading at sample.go (the paper's Algorithm 1: Scott's bandwidths,
// eq. 16; Epanechnikov draws; Resample), then job.go (the one step and
// the coordinator's checks) and assemble.go (what `cohort sim` measures).
//
// # Spec
//
// One table per party, a schema for each, all the same: numeric
// attributes and exactly one class column;
//
//	params: {min_rows: 10, sample_ratio: 1, max_depth: 10, min_split: 2,
//	         prune: true, timeout_ms: 0}
//	test: {TABLE: path}   # optional, in TABLE's schema; read by cohort sim only
//
// # The job
//
// One step, publish round 0. Each party loads its table, splits its rows
// by class and, for each class of n rows, computes the bandwidth of every
// attribute by Scott's rule (the paper's eq. 16, σ the unbiased standard
// deviation of the class's column) and draws round(sample_ratio·n) rows,
// each a row of the class picked uniformly plus h_i·E_i in attribute i, E_i
// standard Epanechnikov (Algorithm 1); a class of fewer than min_rows rows
// fails the step, naming params.min_rows. Its generator is seeded from 32
// bytes of crypto/rand the party keeps in its Secrets for the job, so a
// re-run of the step publishes the same sample, and no other member can
// take the kernel noise off a draw. A resubmitted job draws afresh, so
// before it draws each party asks its policy for one of its dataset's
// synthetic releases (synthetic_releases, a job counting once, pgen's
// published trees of the same dataset counting against it too;
// allowance_test.go over real nodes). The coordinator checks each sample
// (labels in order, whole rows of the attributes, finite values, every
// class at least as many rows as min_rows gives), commits them, and pools
// them by class in party order. A party serves publish round 0 only, and
// only while the log holds no sample of the job, and refuses args (a
// party takes everything from the spec): lying_nodes_test.go plays both
// lies over real nodes.
//
// The result holds the attributes, the class column, the pooled sample by
// class ("sample": label → rows, each row the attributes in name order),
// its rows, and each party's rows drawn per class ("published"). In
// `cohort sim`, which owns every party, the result gains "evaluation"
// (Assemble): DAPL per class (the paper's eq. 18, each party's estimate
// against the estimate over every party's rows) and, with a test set, the
// test accuracy of a tree (package tree's grower, params.max_depth,
// min_split, prune) grown on the pooled sample against one grown on the
// parties' real rows, and φ, the paper's eq. 20.
//
// # Leakage profile
//
// Every member of the consortium learns, through the log, each party's
// sample: for each class the party holds, its number of rows times
// sample_ratio (rounded), and that many draws from the product-
// Epanechnikov estimate of the class's rows. A draw lies within h_i of the
// row it was drawn from in every attribute i, and h_i is a known multiple
// of the class's standard deviation at the party; so a party's sample
// tells its rows' distribution, per class, to within the kernel's width,
// and the class's mean and deviation nearly exactly. It keeps no order and
// no pairing of rows (the paper's Remark 2): the section 4 attack on
// distance-preserving perturbation finds nothing (attack_test.go). The
// fewer the rows of a class, the closer the draws stay to them (the
// paper's Example 2, and DAPL rising with the number of parties): min_rows
// bounds it, and the policy's min_k floor holds min_rows (the sample's k).
// A column constant within a class has a zero bandwidth, and its value is
// published as it is. An outlier is not protected: a draw from its kernel
// lies within h of it (the paper's future work). The coordinator learns
// nothing more than the members. Parties send nothing else: every message
// of a party is its sample to the coordinator (disclosed as synthetic) or
// the runtime's control (TestJobDisclosesOnlySamples checks every message
// and log record).
//
// # Decisions
//
//   - Classes are resampled apart and each draw keeps its class label: the
//     paper sends the labels with the draws, not being sensitive, and gives
//     its DAPL per class.
//   - DAPL needs the true density, which no one has; Assemble takes the
//     estimate over every party's rows of the class (Scott's bandwidths at
//     their number) in its place, so with one party DAPL is 0 by
//     construction, and it grows as the rows split over more parties, as
//     in the paper's figures.
//   - The accuracy is a decision tree's (package tree's grower, as pgen's),
//     not the paper's ANN, kNN and naive Bayes: Cohort's classifier, on
//     both sides of φ.
//   - Categorical attributes are refused: the paper's estimate is over
//     real vectors, and a kernel over categories is not its algorithm.
package kde
