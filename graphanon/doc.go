// Package graphanon anonymises a graph whose relationships are sensitive:
// E. Zheleva and L. Getoor, "Preserving the Privacy of Sensitive
// Relationships in Graph Data", PinKDD 2007 (LNCS 4890), §§4–8.
//
// A Graph has one node type and several edge types; one type is the
// sensitive one (the paper's friends), always removed. Anonymise
//
//   - k-anonymises the nodes (§4.1) into equivalence classes of at least k:
//     by the quasi-identifying attributes when the graph has any (nodes
//     sorted by them and cut into runs of k, each class publishing the set
//     of values its members hold), at random otherwise, as the paper's
//     experiments assign them (§8.2);
//   - releases the observed edges by one of the five strategies of §4.2:
//     intact, partial (⌈pct·|Eᵗ|⌉ random edges of each type removed),
//     cluster (edges counted between classes), cluster-constrained (the
//     most edges of a type between any two nodes of two classes) and
//     removed (none).
//
// Adversary evaluates the noisy-or model of §6.1 on a Release alone, the
// observations certain for the node strategies and uncertain (their
// probability estimated as §7 describes) for the cluster strategies, and
// Disclosure counts, per threshold ρ, the pairs predicted above ρ (the
// paper's δ of §6.2 is their share of |V|²), how many of them are true
// sensitive pairs, and the observations removed (§6.3).
//
// Two readings of the paper are ours and are documented where they are
// made: an observation's probability between two classes is the count
// divided by the node pairs between those classes (the paper's examples of
// §7.2: 30 of 100 pairs is 0.3), not by |V|² as its text of §7.1 says; and
// the constrained adversary's uniform estimate is the type's edges over
// all node pairs, the paper's n·(p−1) over |V|−1 rather than |V|².
//
// Generate builds the paper's student/class/group graph (§8.1) from a
// seed. The package is pure: package graphanon/publish is the `graph` job.
package graphanon
