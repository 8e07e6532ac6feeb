// Package joinprop is what every kind that learns over the join of tables
// held by different parties shares: the join graph of a spec (its
// predicates, validation and rooting at the class table), the canonical
// encoding of a join value, each table's join values interned per edge,
// and the order in which summaries cross the join tree (Xu, "New Models
// and Techniques on Privacy-Preserving Information Sharing", PhD thesis,
// Simon Fraser University, 2008, §3.3.1 and §3.3.2). Package sjc
// propagates class counts along it, package boost gradient sums.
//
// Everything here is public or a party's own: the graph is derived from
// the spec alone, an EdgeKey from the party's own table. The one step with
// I/O, IntersectEdges, is the private set intersection of every edge's
// join values (package psi), which both kinds run the same way.
package joinprop
