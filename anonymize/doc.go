// Package anonymize publishes k-anonymous tables: taxonomies (generalisation
// trees), privacy models and their checkers, utility metrics, one-table
// algorithms (optimal full-domain lattice search, strict Mondrian), seed
// 003's subset enumeration and dynamic programme, and the per-party rounds of
// top-down specialisation (TDS) from which the n-party `integrate` job is built.
//
// Specification: research/seed-002-003.md part B (seed 003, Reddy, Raju and
// Valli Kumari, and the two-party TDS of Wang, Fung and Dong it builds on;
// §B.6 is the recommended n-party design), research/seed-001-sun-thesis.md
// (privacy models §2, metrics §3.6, the Adult set-up §4.1) and DESIGN.md
// (taxonomies as ARX hierarchy CSV, integrated.csv, min_group, ncp).
//
// # Pieces
//
//   - Taxonomy: ReadARX / LoadARXFile (one row per leaf, value to root,
//     `;`-separated) and ReadYAML / LoadYAMLFile (explicit trees; numeric
//     interval trees whose children must partition their parent). Leaf,
//     Generalise(value, level), Ancestor, LCA, Covers, and seed 003's
//     PrivacyStrength and Informativeness.
//   - Checkers on any table.Table (the published strings): CheckK over a joint
//     requirement {⟨QID_i, k_i⟩} (PruneRequirements drops implied ones),
//     CheckDistinctL, CheckEntropyL, CheckPSensitive, CheckPAlphaSensitive
//     (weights by CategoryWeights, Sun Eq. 3.1), MinGroup, Groups.
//   - Metrics: Dataset.NCP, Discernibility, AvgClassSize.
//   - One table: OptimalFullDomain and OptimalFullDomainReqs (lattice
//     search), Mondrian and MondrianDiverse (strict, optionally distinct or
//     entropy l-diverse), Summarise (min_group, ncp, DM, C_AVG).
//   - Seed 003: EnumerateCells (Table 3, Set1), SubsetDP (§B.6 option 2).
//   - TDS rounds: Best (a party's share), BetterCandidate (the coordinator's
//     fold), Split (the winner's instruction), TDSPublic.Apply (everyone),
//     RunTDS (all of it in process; one party = central TDS).
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
//     at the root, so unbalanced trees (seed 003's Education) have a
//     full-domain lattice too; ARX files are balanced by construction.
//   - ARX numeric hierarchies: a node's range is its leaves' range (ARX's age
//     labels are shifted by one, data/README.md; the range, not the label,
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
//   - TDS: fixed taxonomies for numeric attributes (report §B.9 #11), score
//     InfoGain/(AnonyLoss+1) with AnonyLoss averaged over the QIDs that
//     contain the attribute (§B.5.1 [DECIDE]; reproduces the §B.7.6 fixture),
//     ties within 1e-12 to the smaller (party, attribute index, node id)
//     (§B.5.3). Stops when no party has a valid and beneficial candidate.
//     WithClassDiversity adds distinct l-diversity of the shared class to
//     validity (report §B.9 #12: seed 003's Table 2 has a 12Y0N class); a
//     sensitive column held by one party is not supported, since the other
//     parties could not check it without seeing it.
//   - Subset DP: value |R_c| · mean I, ties to fewer cells (§B.7.6b); the
//     memo spans the product of the taxonomies, so it is for small QID sets.
//   - Determinism: no map order decides anything (candidates, children and
//     classes are iterated in id or first-appearance order); no randomness.
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
