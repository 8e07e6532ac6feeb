package boost

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/lattice"
)

// Several columns in one product (issue 34, fourteenth session). A layout
// of B bins gives each row's gradient B coefficients and its hessian B
// more, and one plaintext product per chunk fills all of them; bin 0 is
// never summed under encryption (the class holder takes it as the node's
// total less the other bins': lattice_first.go), so a column of b bins
// uses b−1 of the B positions. A table's columns rarely all have B bins:
// default_credit's host has columns of 32, 32, 11, 11, 11, 11, 10, 7, 4
// and 2 bins, a9a's binary columns 2 each. So the table's party packs its
// columns into groups whose positions add up to at most B, first fit by
// decreasing width, and makes one product per chunk and group instead of
// one per chunk and column: 4 groups instead of 10 columns on
// default_credit's host, 32 instead of 63 on a9a's host. Each group's
// sums are one ciphertext, one mask and one decryption, as a column's
// were.
//
// What it discloses: the class holder must know where each column's
// bins lie, so the table's party tells it, in part 0 of its bin sums to
// the class holder alone, every numeric column's number of bins: how many
// split candidates the column has, which the Paillier path's bin sums, a
// ciphertext per bin, tell it too. The part is recorded as score, the form
// each numeric column declares to the class holder for what it learns to
// score the column's splits (Kind.Uses). The decryptors learn the number
// of groups, which the number of ciphertexts they receive tells them
// anyway. The class holder reads the same sums as before: every other
// coefficient of a decrypted group is still masked.

// packAt is where a column's bins lie: its group and the position of its
// bin 1 (bin b at offset+b−1).
type packAt struct{ group, offset int }

// colPack is a table's numeric columns packed into a layout's positions.
type colPack struct {
	width  int      // the positions of a group: the layout's bins
	groups int      // at least one
	bins   []int    // by column: its bins
	at     []packAt // by column
	cols   [][]int  // by group: its columns, in column order
}

// packColumns packs columns of bins[f] bins each into groups of width
// positions, first fit by decreasing width (ties by column), each column
// taking bins[f]−1 positions. Everyone who knows bins and width finds the
// same packing: the table's party sums by it, the class holder reads by it.
func packColumns(bins []int, width int) (colPack, error) {
	p := colPack{width: width, bins: slices.Clone(bins), at: make([]packAt, len(bins))}
	order := make([]int, len(bins))
	for f, b := range bins {
		if b < 1 || b > width {
			return colPack{}, fmt.Errorf("%w: column %d of %d bins in a layout of %d", ErrLayoutBins, f, b, width)
		}
		order[f] = f
	}
	slices.SortStableFunc(order, func(x, y int) int { return bins[y] - bins[x] })
	var used []int // by group: the positions taken
	for _, f := range order {
		need := bins[f] - 1
		g := slices.IndexFunc(used, func(u int) bool { return u+need <= width })
		if g < 0 {
			g, used = len(used), append(used, 0)
		}
		p.at[f] = packAt{group: g, offset: used[g]}
		used[g] += need
	}
	p.groups = max(1, len(used))
	p.cols = make([][]int, p.groups)
	for f, a := range p.at {
		p.cols[a.group] = append(p.cols[a.group], f)
	}
	return p, nil
}

// colBins is each numeric column's number of bins.
func (l *Local) colBins() []int {
	out := make([]int, len(l.feats))
	for f, ft := range l.feats {
		out[f] = len(ft.Cuts) + 1
	}
	return out
}

// pack is the table's columns packed for a layout of width bins.
func (l *Local) pack(width int) (colPack, error) {
	return packColumns(l.colBins(), width)
}

// groupTermsFrom appends to terms group g's terms of entries that start
// at entry e0 of the message: entry by entry, one term per position that
// the entry's rows fall in (every column of the group at its offset,
// rows in bin 0 left out: lattice_first.go), weighted by their counts.
func (l *Local) groupTermsFrom(terms []lattice.BinTerm, p *colPack, g int, entries [][]rowCount, e0 int) []lattice.BinTerm {
	for e, rs := range entries {
		from := len(terms)
		for _, f := range p.cols[g] {
			bin, off := l.feats[f].bin, p.at[f].offset-1
			for _, rc := range rs {
				b := int(bin[rc.row])
				if b == 0 {
					continue
				}
				pos := off + b
				if i := slices.IndexFunc(terms[from:], func(t lattice.BinTerm) bool { return t.Bin == pos }); i >= 0 {
					terms[from+i].Weight += rc.count
					continue
				}
				terms = append(terms, lattice.BinTerm{Row: e0 + e, Bin: pos, Weight: rc.count})
			}
		}
	}
	return terms
}

// unpack adds a decrypted group's sums (layout.Read's order: node y's
// position q at y·width+q) of the layout's summed nodes into out, column
// by column of the group, bin b of node nodes[y] from position
// offset+b−1; bin 0 is left to fillFirstBins.
func (p *colPack) unpack(out BinSums, g int, gs, hs []int64, nodes []int) {
	for _, f := range p.cols[g] {
		off := p.at[f].offset - 1
		for b := 1; b < p.bins[f]; b++ {
			q := off + b
			for y, k := range nodes {
				out[f][b][2*k] += gs[y*p.width+q]
				out[f][b][2*k+1] += hs[y*p.width+q]
			}
		}
	}
}
