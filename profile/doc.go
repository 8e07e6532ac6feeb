// Package profile personalises web search on the client while exposing only
// the part of the user's interests the user allows: Y. Xu, "New Models and
// Techniques on Privacy-Preserving Information Sharing", PhD thesis, Simon
// Fraser University, 2008, chapter 5 (after Y. Xu, K. Wang, B. Zhang,
// Z. Chen, "Privacy-enhancing personalized web search", WWW 2007).
//
// # The profile (§5.2.1)
//
// The user's documents D (browsing history, mails; one list of stemmed
// terms each) become a tree of interests. D(t) is the set of documents
// holding term t; t is frequent when |D(t)| ≥ minsup. Build splits the root,
// which holds all of D, top down. At each node it takes the frequent terms
// of the node's documents (terms of an ancestor's label not counted again)
// in descending document frequency and, for each term t_i, against the
// label terms t_k of the children made so far:
//
//   - Rule 1 (similar terms): if Sim(t_i,t_k) = |D(t_i)∩D(t_k)|/|D(t_i)∪D(t_k)| > δ,
//     t_i joins t_k's child, whose label becomes "t_i/t_k";
//   - Rule 2 (parent and child): else if P(t_k|t_i) = |D(t_i)∩D(t_k)|/|D(t_i)| > δ,
//     t_i's documents join t_k's child, whose label stays;
//   - else t_i labels a new child.
//
// A child's supporting documents S are the union of its terms' D. A document
// in the S of n siblings gives each 1/n of its own weight (1 at the root),
// and Sup(child) sums these shares, so the supports of a node's children
// never exceed its own and the leaves of the fully extended profile (each
// node's remainder an "others" leaf) sum to |D|. Siblings are sorted by
// descending Sup; each child is split again over its S until no frequent
// term is left.
//
// # The measures (§5.2.2) and re-ranking (§5.2.3)
//
// P(t) = Sup(t)/|D|. With a threshold minDetail, every node with
// P(t) < minDetail is hidden, with its subtree; since supports fall going
// down, the exposed part U[exp] is a subtree holding the root, and each
// exposed node's hidden mass becomes an "others" leaf. expRatio =
// H(U[exp])/H(U), where H sums −P·log P over the leaves. What the client
// sends is the list ⟨t, w_t⟩, w_t = log(|D|/Sup(t)), of U[exp]'s labelled
// nodes. The search wrapper scores each result page l by
// UPScore(l) = Σ w_t·tf(t,l), ranks pages by it (UPRank) and orders them by
// PPRank = α·UPRank + (1−α)·EngineRank.
//
// # What leaves the client
//
// Only Expose's list ⟨t, w_t⟩ (and the query, which this package does not
// see). It gives the server each exposed interest's label and, through
// w_t, its share P(t) of the user's documents; not |D|, no document, no
// supporting set, and no hidden label. The server can still infer the mass
// hidden under each exposed node (its "others" leaf); expRatio counts that
// mass, so it measures everything the list reveals about the tree.
// Rerank takes that list and the result pages only, so the re-ranking
// cannot use anything the user hid. The profile itself, built by Build, is
// the user's private data and stays on the client.
//
// # Decisions the thesis leaves open
//
//   - Rules 1 and 2 compare a term with the label terms of the children
//     made so far, using each label term's D within the parent's documents
//     (the thesis's Example 19 only comes out this way); among several
//     matches the highest Sim (Rule 1) or P (Rule 2) wins, the earlier child
//     on a tie, as the thesis's account of "personalized/search" suggests.
//   - Terms of equal frequency are taken in byte order of the term.
//   - Below the root a document's share is its weight in the parent divided
//     by the number of siblings holding it; this reproduces every support
//     of Example 19.
//   - Logarithms are base 10, as in Example 19; expRatio does not depend on
//     the base. A profile with H(U) = 0 (no interest under the root) exposes
//     nothing: its expRatio is 0.
//   - Example 19 prints expRatio = 69%, but its own entropies give
//     0.580/0.684 = 84.8%; this package follows the formula.
//   - tf of a merged label "a/b" is tf(a) + tf(b). Equal UPScores, and
//     equal PPRanks, are ordered by the engine's rank, so UPRank is a
//     permutation.
//   - Supports are float64 sums; a node whose P is within 1e-9 of minDetail
//     counts as reaching it.
//
// Terms must not hold "/", which joins merged labels. Nothing here is
// constant time; the package reads untrusted documents, profiles and
// result lists (ParseDocuments, ReadProfile, ParseResults) and rejects bad
// input with the line or field, never its text.
package profile
