// Package integrate is the `integrate` job: several parties hold different
// attributes of the same people, linked by a record id; together they
// publish one integrated table that is k-anonymous on every quasi-identifier
// of a joint requirement {⟨QID_i, k_i⟩} (optionally with distinct
// l-diversity of the shared class), and no party learns another's values
// beyond what the published table shows.
//
// Specification: research/seed-002-003.md part B (seed 003 and the
// two-party top-down specialisation TDS2P of Wang, Fung and Dong, ISI 2005,
// that it builds on; §B.6 option 1 is the n-party design followed here),
// research/seed-001-sun-thesis.md (models and metrics) and DESIGN.md
// (`taxonomies`, `params.requirements`, integrated.csv, min_group, ncp).
// The algorithm's per-party rounds are package anonymize's (Best,
// BetterCandidate, Split, TDSPublic.Apply); this package puts them on the
// job framework.
package integrate
