// Package anonymize is the library of privacy-preserving data publishing
// that the publication jobs are built on: taxonomies (generalisation trees),
// privacy models and their checkers, utility metrics, one-table algorithms
// (optimal full-domain lattice search, strict Mondrian), the subset
// enumeration and dynamic programme of Reddy, Raju and Valli Kumari, and the
// per-party rounds of top-down specialisation (TDS) and the publication form
// (Published) that the n-party `integrate` job and the one-table
// `anonymize` job share. It sends nothing.
//
// Start with taxonomy.go (Taxonomy, LoadTaxonomy), dataset.go (Encode, NCP)
// and model.go (Requirement, the checkers); then one algorithm:
// fulldomain.go, mondrian.go or tds.go.
//
// Sources: X. Sun, "Privacy Preserving Data Sharing in Data Mining
// Environment", PhD thesis, University of Southern Queensland, 2010 (models
// ch. 2–3, metrics §3.5); Reddy, Raju and Valli Kumari, "A Dynamic
// Programming Approach for Privacy Preserving Collaborative Data
// Publishing"; Fung, Wang and Yu, "Top-down specialization for information
// and privacy preservation", ICDE 2005, and Wang, Fung and Dong,
// "Integrating private databases for data analysis", ISI 2005 (TDS and its
// two-party form); LeFevre, DeWitt and Ramakrishnan, "Mondrian
// multidimensional k-anonymity", ICDE 2006; Kohlmayer et al., "Flash:
// efficient, stable and optimal k-anonymity", 2012.
//
// # Pieces
//
//   - Taxonomy: ReadARX / LoadARXFile (one row per leaf, value to root,
//     `;`-separated) and ReadYAML / LoadYAMLFile (explicit trees; numeric
//     interval trees whose children must partition their parent). Leaf,
//     Generalise(value, level), Ancestor, LCA, Covers, and Reddy et al.'s
//     PrivacyStrength and Informativeness.
//   - Checkers on any table.Table (the published strings): CheckK over a joint
//     requirement {⟨QID_i, k_i⟩} (PruneRequirements drops implied ones),
//     CheckDistinctL, CheckEntropyL, CheckPSensitive, CheckPAlphaSensitive
//     (weights by CategoryWeights, Sun, thesis Eq. 3.1), MinGroup, Groups.
//   - Sensitive models (Sun ch. 2–3), each a function of a class's
//     histogram, composable and monotone: SensitiveModel (distinct,
//     entropy and recursive (c, l)-diversity, p-, p⁺-, (p, α)- and
//     (p⁺, α)-sensitivity), coded per column by SensitiveModel.Code into a
//     Coded used by every algorithm below; Published.CheckModel checks a
//     publication.
//   - Metrics: Dataset.NCP and PublicNCP (public ranges), Discernibility,
//     AvgClassSize, Dataset.DistortionRatio (Sun §3.5),
//     Dataset.WeightedDiscernibility (Sun Fig. 4.6, our definition).
//   - One table: OptimalFullDomain, OptimalFullDomainReqs and
//     OptimalFullDomainModel (lattice search); Mondrian, MondrianDiverse and
//     MondrianModel (strict); LocalRecoding (Sun §3.6, Alg. 1);
//     MinimalFullDomain, HashTableSatisfies and StrategyLevel (Sun's privacy
//     hash table, ch. 2), MinimalVectors and MinimalNodes (the same minimal
//     vectors, rolled up, with their figures), Samarati (binary search on
//     height), StrategyCount (Sun Thm 2.1); Datafly and OGF (Chaytor);
//     Summarise.
//   - Microaggregation (Sun ch. 5): VI, VIMatrix, DependencyTree,
//     KeyAttributes, MDAV (standard and the thesis's variant),
//     Microaggregate (SSE, SST).
//   - Purpose and trust (Sun ch. 4): NormaliseVI, ChainOrder, Priorities,
//     AttributeDegree, TupleDegree, TableDegree, DegreeWeights, TrustDegree,
//     Decompose (as printed), Reach and PurposeAnonymise (reaching the
//     degree, then k); OptimalFullDomainAbove.
//   - Before sharing (Lodha and Thomas): QITest (QITests: the same from
//     group counts computed where the table lives), MaxUniqueFraction, OneDimK,
//     QuantileTransform, RankDifference; probabilistic (1−β, k)-anonymity:
//     ProbabilisticPartitions, AllocateDistinct, ProbabilisticAnonymise.
//   - Reddy et al.: EnumerateCells (their Table 3, Set1), SubsetDP (our recurrence).
//   - TDS rounds: Best (a party's share), BetterCandidate (the coordinator's
//     fold), Split (the winner's instruction), TDSPublic.Apply (everyone),
//     RunTDS (all of it in process; one party = central TDS).
//   - Mondrian rounds over columns held apart: MondrianParty.Propose,
//     ChooseCuts, MondrianParty.Cut, MondrianState.Apply / ApplyChecked,
//     DiverseParts (a sensitive column's owner's one bit), RunMondrianRounds.
//   - The publication form of the jobs: Published, Compact, CompactCounts,
//     MinGroups, CheckDistinctL, CheckModel, WriteCSV; LoadTaxonomy.
//
// Survey-rating data (Sun chs. 6–7) is the sub-package anonymize/rating.
//
// # Decisions
//
//   - NCP (Xu et al., KDD 2006, as the Mondrian and ARX anchors use it):
//     per published cell, 0 for a raw value; categorical
//     leaves(node)/leaves(root); numeric (hi − lo)/(max − min of the column
//     in the data), capped at 1, so a numeric leaf that is an interval (seed
//     003's [1-22]) costs its width; the table's NCP is the mean over records and
//     quasi-identifiers, in [0, 1]. The categorical denominator is the
//     taxonomy's leaf count (Adult's workclass counts Never-worked, absent
//     from the data) so the figure does not depend on which values a party
//     happens to hold.
//   - Level semantics: Generalise(value, level) climbs level steps and stops
//     at the root, so unbalanced trees (Reddy et al.'s Education) have a
//     full-domain lattice too; ARX files are balanced by construction.
//   - ARX numeric hierarchies: a node's range is its leaves' range (ARX's age
//     labels are shifted by one; the range, not the label,
//     enters NCP). Sibling ranges must not interleave.
//   - Full-domain search: no suppression budget (the ARX anchor, 28.4 ms, is
//     the suppression-limit-0 run); the least-NCP k-anonymous transformation
//     wins. NCP is monotone along the lattice, but the search does not need
//     that: NCP of every anonymous transformation is evaluated in O(attributes).
//   - Mondrian: strict; the cut on a numeric attribute is the allowable value
//     closest to the median; categorical attributes are cut along their
//     taxonomy (all non-empty children ≥ k). Categorical values can be
//     treated as ordered numbers by giving them a flat numeric taxonomy (the
//     configuration of the Mondrian anchor, see docs/anonymize.md).
//   - TDS: fixed taxonomies for numeric attributes (Fung, Wang and Yu also
//     split intervals dynamically; not done), score InfoGain/(AnonyLoss+1)
//     with AnonyLoss averaged over the QIDs that contain the attribute (our
//     choice for a joint requirement: Fung et al. define it for one QID),
//     ties within 1e-12 to the smaller (party, attribute index, node id).
//     Stops when no party has a valid and beneficial candidate.
//     WithClassDiversity adds distinct l-diversity of the shared class to
//     validity (Reddy et al.'s Table 2 has a class-homogeneous group); a
//     sensitive column held by one party is not supported, since the other
//     parties could not check it without seeing it.
//   - Subset DP (our recurrence: Reddy et al. give none): value |R_c| ·
//     mean I, ties to fewer cells; the
//     memo spans the product of the taxonomies, so it is for small QID sets.
//   - Determinism: no map order decides anything (candidates, children and
//     classes are iterated in id or first-appearance order); no randomness.
//   - Purpose and trust (Sun, "Privacy Preserving Data Sharing in Data
//     Mining Environment", ch. 4): the degree asked for is a floor, never a
//     hint. Reach scales Eq. 4.11's target up until Def. 4.5's degree
//     reaches it (each attribute takes the whole intervals its share
//     covers); PurposeAnonymise then takes the least-NCP generalisation at
//     or above those levels that meets k (the thesis never enforces k), so
//     NCP never falls as the degree rises and full trust gets
//     OptimalFullDomain's table. Levels are not nested across degrees: a
//     less trusted requester's table loses more in all, but can keep one
//     attribute finer. Trust t asks for degree (1 − t)² (§4.5's "quadratic
//     projection" is not written down). Inverted priorities (1 − P) weigh
//     both Eq. 4.11 and Def. 4.5.
//
// # Errata of Sun's chapter 4 (tested in purpose_test.go)
//
//   - Def. 4.4's first case reads "p < q"; it is p > q.
//   - §4.3.2: Deg(t₃, t′₃) is printed 0.6 and then used as 0.125, so Table
//     4.1(b) gets 0.05 and (c) 0.125; by Def. 4.5 they are 0.0833, 0.0278
//     and 0.0833 (the claimed ratio of 3 holds).
//   - §4.4 and Thm. 4.3: Table 4.1(c), the decomposition of 1/8 under
//     P = (Gender 1, Age 0, Postcode 0.266), has degree 0.8425 under those
//     priorities, not 0.125. Step 2 says "generalize it to the p-th [level]"
//     with levels numbered from the most general; the example takes p steps
//     from the ground, and so do we.
//   - Eq. 4.11 does not invert Def. 4.5: before rounding the table gets
//     target·ΣP²/(ΣP)². Thm. 4.3 (decomposing at the degree reached gives
//     the same table) is false for the printed decomposition (equal
//     priorities, 5 and 2 levels, degree 0.1: one step each, degree 0.625,
//     which decomposes to two steps of the first); it holds for Reach.
//
// # Not checked
//
// Taxonomies are trusted to be the consortium's agreed ones; a taxonomy is
// not checked against the other parties' data, only against its owner's.
// Nothing here is constant time: all of it runs on data its caller may see.
//
// # Jobs
//
// Nothing here sends anything. The n-party job `kind: integrate` (package
// integrate) runs the TDS rounds over the job framework, with PSI-aligned
// record ids; its package doc has the protocol and the leakage profile.
// `kind: anonymize` (package anonymize/onetable) runs OptimalFullDomain or
// Mondrian on one party's table.
package anonymize
