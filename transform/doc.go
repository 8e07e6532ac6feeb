// Package transform recodes an organisation's table for outsourced
// decision-tree mining so that the miner's tree decodes back to exactly
// the tree grown on the original data: Bu, Lakshmanan, Ng and Ramesh,
// "Preservation of Patterns and Input-Output Privacy" (ICDE 2007), §4
// and §5. Each numeric column is cut into pieces (ChooseMaxMP or
// ChooseBP), each piece recoded by a random function (a random bijection
// on a monochromatic piece, whose rows all carry one class; a random
// strictly monotone function otherwise), and the pieces laid out under a
// global invariant, so that sorting the rows by a recoded column gives
// the class string of the original order (Lemma 1). Gini and entropy
// depend on class counts only, and their best split never falls inside a
// run of one class (Lemma 2), so a miner grows the same tree up to its
// thresholds (Theorem 1), which the key maps back (Theorem 2).
//
// Start with Transform (encode.go): it calls EncodeColumn for every
// numeric column, which profiles the column (NewProfile), chooses
// breakpoints and pieces (breakpoints.go), draws the recoding
// (drawImages, layout.go) and checks it (check, check.go), then checks
// the class strings of the whole table (checkClassString). DecodeTree and
// DecodeTreeWithTable (decode.go) map a tree back; key.go and treefile.go
// read and write the key and the miners' tree files (Cohort's tree JSON
// and a scikit-learn-style export); Stats gives the paper's Figure 8 per
// column. Package transform/attack is the paper's disclosure harness and
// docs/transform.md has the figures. The CLI is `cohort data transform`
// and `cohort data decode-tree`.
//
// # Decisions
//
// Where the paper is silent or wrong, the research notes' recommendations
// are taken, with these choices and reasons:
//
//   - Pieces that are not monochromatic run in the global direction (an
//     anti-monotone one would reverse its class substring, changing the
//     tree); a monochromatic piece takes a random permutation of points
//     drawn as for a monotone piece.
//   - w defaults to 20 (the paper's minimum); ChooseBP never draws the
//     first value (it starts a piece anyway); ChooseMaxMP runs exactly as
//     printed (its scan may return the first value); the minimum width of
//     a monochromatic run is counted in distinct values and is off by
//     default.
//   - The layout (the paper's phase iii, whose figure is missing) places
//     pieces left to right with random gaps, over a warp of the value axis
//     with w random knots and slopes up to 32 times steeper or flatter;
//     without the warp, columns with thousands of short pieces stay close
//     to linear at the scale of the whole column and curve fitting cracks
//     them (docs/transform.md).
//   - Two checks beyond the paper, enforced on every key: a monochromatic
//     piece lies further from its neighbours than it is wide, so that the
//     key alone decodes a midpoint threshold (a midpoint between two values
//     of a node never falls inside a piece the node holds); consecutive
//     recoded values are two float32 steps apart, so a miner that reads
//     float32 (scikit-learn) sees the same order. Recoded values are
//     rounded to as few decimals as keep both.
//   - Thresholds follow Cohort's tree semantics (the midpoint of adjacent
//     values present at the node). Those values depend on the node's rows,
//     which the key does not hold, so DecodeTree (key alone) decodes a
//     split to the midpoint of the neighbouring values of the whole column
//     (every training row goes the same way as in the raw tree), and
//     DecodeTreeWithTable (with the original table) reproduces the raw
//     tree's thresholds exactly. Bu et al.'s decoding "A θ f⁻¹(ν′)" is
//     wrong for permuted pieces (the research notes' Figure 7 example).
//   - The global direction is monotone by default. AntiMonotone reverses
//     each column, which also reverses the order in which a miner meets
//     equal-gain thresholds: with a smallest-threshold tie rule, the tree
//     then differs from the raw one wherever one column offers tied splits.
//   - Categorical columns, keys, ids and the class are kept unchanged (the
//     paper treats numeric attributes only).
//   - The key holds the whole value map of every recoded column (not the
//     paper's "minimal" breakpoints and functions): it is as sensitive as
//     the distinct values themselves.
//   - Randomness comes from a ChaCha8 generator seeded from crypto/rand;
//     Options.Rand is for tests and experiments only.
//
// # Leakage profile
//
// The transform runs on the custodian's machine, not on a node: nothing
// is sent anywhere. What the custodian hands over, and what it reveals:
//
//   - The recoded table (to the miner, and to anyone the miner shows it
//     to): the number of rows and their order, unchanged, so a row can be
//     linked by position to any other release of the same table; every
//     categorical, key and id column and the class in clear (the class
//     distribution included); for each numeric column the number of
//     distinct values, which rows share a value, the class string up to
//     reversal (so every candidate split position), which values are
//     monochromatic (the pieces they form stand apart, by the spacing
//     rule; the paper notes the miner can find them anyway), the order of
//     the values outside monochromatic pieces (the sorting attack's
//     input), and the joint distribution of the columns up to one
//     bijection per column. It does not reveal the values, the functions,
//     the knots, or the breakpoints inside non-monochromatic runs — up to
//     what the attacks of package transform/attack recover, which
//     docs/transform.md measures. There is no formal guarantee.
//   - The mined tree (the miner has it): its shape, columns, counts and
//     recoded thresholds. The decoded tree stays with the custodian.
//   - The key (kept by the custodian, mode 0600): the distinct original
//     values of every recoded column and their recodings, i.e. the data's
//     active domain; whoever holds it and the recoded table holds the
//     original table.
//
// Errors on bad input (key files, tree files, tables, options) name the
// field, the node path or the row number, never a value; package tree's
// own messages, which quote labels, are redacted.
//
// Not checked: that a miner's tree was grown by a gini or entropy learner.
// DecodeTreeWithTable refuses a split that no such learner makes (one
// whose left and right original values interleave), and any tree whose
// counts do not match the table; DecodeTree, without the rows, cannot
// tell, and decodes such a split as if it fell between pieces.
package transform
