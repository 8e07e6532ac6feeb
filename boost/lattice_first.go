package boost

// Bin 0 by subtraction on the lattice path. Every join row of a star
// joins exactly one row of each other table, and every row of a table
// falls in one bin of each of its columns (Bin is in [0, len(cuts)]), so
// a column's bin sums at a node add up to the node's gradient and
// hessian sums over its join rows, which the class holder computes itself
// (Holder.Level). So the table's party leaves bin 0's rows out of its Ws
// (groupTermsFrom) and the class holder takes bin 0's sums as the node's
// totals less the other bins' sums. The sums are exact integers, so the
// bins and the model are those the full sums give. What it saves: bin
// 0's terms in every W (on a9a's one-hot columns most rows, so that Ws
// grow sparse, their NTTs skip more and a chunk without terms needs no
// product, and a column of b bins takes b−1 positions of its group:
// lattice_pack.go). What anyone learns is unchanged: the class holder
// decrypts no sum of bin 0 and computes it from what it knows;
// the table's party and the decryptors see ciphertexts of the same
// shape.

// fillFirstBins sets bin 0 of every column of bs at the given open nodes
// to the node's totals (totals(k): node k's gradient and hessian sums)
// less the column's other bins' sums there.
func fillFirstBins(bs BinSums, nodes []int, totals func(k int) (g, h int64)) {
	for _, bins := range bs {
		if len(bins) == 0 || bins[0] == nil {
			continue
		}
		for _, k := range nodes {
			g, h := totals(k)
			for _, v := range bins[1:] {
				if v != nil {
					g, h = g-v[2*k], h-v[2*k+1]
				}
			}
			bins[0][2*k], bins[0][2*k+1] = g, h
		}
	}
}
