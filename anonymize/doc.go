// Package anonymize publishes k-anonymous tables: taxonomies (generalisation
// trees), privacy models and their checkers, utility metrics, one-table
// algorithms (optimal full-domain lattice search, strict Mondrian) and the
// per-party pieces of top-down specialisation for n-party integration.
//
// Specification: research/seed-002-003.md part B (seed 003 and the two-party
// TDS it builds on), research/seed-001-sun-thesis.md (privacy models,
// metrics) and DESIGN.md (taxonomies as ARX hierarchy CSV, integrated.csv,
// min_group, ncp).
package anonymize
