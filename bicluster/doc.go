// Package bicluster implements cHawk, the crossing-minimisation
// biclustering of Ahmad & Khokhar, on one party's matrix, and the pure
// per-party and public steps of Phoenix, its privacy-preserving version on
// horizontally partitioned data (papers/000_* pp. 14–32;
// research/seed-000-pinkdd.md §2.3, §2.10–2.12, §4).
package bicluster
