// Package coherence publishes a table of transactions (one per person, a
// set of items) so that an attacker who knows a few of a person's public
// items can neither single out the person's transaction nor infer a
// private item with confidence: (h,k,p)-coherence, from Y. Xu, "New Models
// and Techniques on Privacy-Preserving Information Sharing", PhD thesis,
// Simon Fraser University, 2008, chapter 4 (after Y. Xu, K. Wang, A. W.-C.
// Fu, P. S. Yu, "Anonymizing transaction databases for publication", KDD
// 2008, and Y. Xu, B. C. M. Fung, K. Wang, A. W.-C. Fu, J. Pei, "Publishing
// sensitive transactions for itemset utility", ICDM 2008).
//
// A public itemset α of 1 to p items that some transaction holds is a mole
// when fewer than k transactions hold it, or when, for some β ⊆ α (∅
// included) and private item s, more than a fraction h of β's
// transactions hold s (Definition 5). A database without moles is
// coherent; this package makes one coherent by suppressing public items,
// each from every transaction (global suppression keeps every remaining
// itemset's support exact, §4.1.2).
//
// # Where to start
//
// ReadFIMI or ReadCSV read a file (transactions.go); Label gives the items
// their roles, public, private or kept, or builds the thesis's synthetic
// private items (roles.go). TreeCohesion (tree.go: item utility, the loss
// of v is Sup(v)), BorderCohesion (bordercohesion.go: itemset utility, the
// loss of v is the number of nuggets holding v) and RmAll (rmall.go: the
// baseline) return the items to suppress; Result.Publish applies them and
// Check (check.go, written apart from the algorithms) verifies the
// publication. KAnonymizer (kanon.go) is the thesis's other competitor,
// k-anonymity over the public items by top-down specialisation, verified
// by CheckKAnonymous; MolesLeft counts the moles it leaves. The common steps are in problem.go (eligibility, Theorem 3;
// size-1 moles, Observation 2) and minimal.go (the minimal moles).
// LossOfItems, LossOfNuggets, CountNuggets and CountMoles give the
// thesis's figures.
//
// # Decisions
//
// The thesis's errata, as the research report on it fixes them, and the
// choices it leaves open:
//
//   - An itemset no transaction holds is no mole (the informal definition
//     and the mole border say so; otherwise every pair of items that never
//     meet would be one).
//   - Minimal moles (Figure 13) are searched depth first, not level by
//     level, and a candidate needs every immediate subset among the
//     non-moles, not merely none among the minimal moles (the literal
//     Observation 4 records non-minimal moles). The search also skips
//     itemsets that are not generators (an itemset with a proper subset of
//     the same support): no minimal mole is one, since dropping the item
//     that changes nothing leaves a mole. On dense data this is what makes
//     the search end.
//   - The score of an item in no nugget is infinite (Figure 12); only
//     items in a mole are candidates; ties go to the item in more moles,
//     then to the item first in the file.
//   - Computeδ (Figure 18) adds δ(v') += … in both its cases and counts
//     X = {v, v'}. Its outer loop finds each edge's overlapping examined
//     edges through the border (an edge ⟨α',β'⟩ can meet ⟨α,β⟩ only if α'
//     lies in β and β' holds α') instead of scanning them, leaves out
//     overlaps whose itemsets all have more than p items, skips an edge
//     some examined edge covers whole, and, in Case 3, subtracts the
//     overlapping edge that leaves the fewest new edges (the thesis lets
//     it pick any). The counts are exact to 2^128 (ErrOverflow beyond).
//   - The nuggets are counted over their border held as a zero-suppressed
//     decision diagram of the downset of its lower bound (nuggets.go),
//     not by Computeδ: the nugget border of dense data (Connect's has
//     6,213 maximal nuggets at k' = 40 %) makes nearly every edge meet
//     every other, where Computeδ's Case 3 recursion does not end, while
//     the diagram has 410,000 nodes and is counted in one pass.
//   - Nuggets are itemsets of any items, private and kept ones included
//     (Definition 7); their border's upper bound is every item of support
//     at least k' (the thesis's max(k, k') assumes the items below k are
//     gone, which holds for public items only).
//   - RmAll suppresses the size-1 moles first, like the greedy algorithms,
//     then every public item in a mole of what is left.
//   - The k-Anonymizer (§4.5.1: "QID-based k-anonymization, implemented by
//     the global recoding" of Fung, Wang and Yu's top-down specialisation)
//     takes every public item as a binary QID attribute whose only
//     generalisation is suppression; kept and private items are not in
//     the QID. TDS's score needs a class for its InfoGain, which
//     transaction data lacks; the gain is Sup(v), the item utility, under
//     either utility (the thesis does not say which it used).
//   - The thesis's private items (§4.5.1): each transaction gets a copy of
//     its item of largest support below 50 % (ties to the item first in the
//     file), or s*; the original items stay and may be public. With this
//     rule Connect's copy of item 40 is in 47.4 % of the transactions and
//     Retail's copy of item 48 in 47.8 %, so both fail Theorem 3 at the
//     thesis's h = 40 %: no cohesion exists. The figures use h = 50 %.
//   - The loss of items counts every occurrence, private and kept items
//     included. h is read to six decimals so that Pr(s|β) > h is decided
//     exactly.
//   - moles_before in the job's result is the number of minimal moles
//     (size-1 moles included): every mole holds one, and the moles
//     themselves are too many to count on real data (CountMoles counts
//     them over the mole border where that ends).
//
// # Leakage profile
//
// The package runs on the publishing organisation's node and sends
// nothing. What the publication (D without the suppressed items) still
// reveals: to an attacker who knows at most p public items of a person
// and that the person is in D, at least k transactions fit, so the
// person's is one of k or more, and no private item is in more than a
// fraction h of them (nor of any smaller cohort the attacker can form
// from part of that knowledge). It does not protect against an attacker
// who knows more than p public items, knows a kept item (kept items are
// assumed unknown), knows what a person does not have (negative items),
// or knows the number of items of a person's transaction: lengths are
// published. Private items are published; each one's overall frequency
// is at most h (Theorem 3). The suppressed items are named by their
// absence. The order of the transactions is kept.
//
// A KAnonymizer publication guarantees less: at least k transactions share
// a person's public items, whatever the attacker knows of them, but a
// private item may be in more than a fraction h of them (MolesLeft counts
// such breaches).
package coherence
