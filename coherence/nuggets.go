package coherence

import (
	"context"
	"slices"
)

// nuggetFamily holds the nuggets over their border (Xu, ch. 4, §4.4.1): the
// upper bound is every item of support at least k', the lower bound L the
// maximal itemsets of support at least k', so the edges ⟨{u}, β⟩ cover the
// non-empty subsets of the members of L. The family is kept as the ZDD of
// that downset, variables ordered by descending support. Counting over it
// takes one pass whatever the number of nuggets, and suppressing an item
// is a restriction of the diagram; the thesis's Computeδ would instead
// meet, on a dense border such as Connect's, nearly every examined edge
// with every new one.
type nuggetFamily struct {
	z      *zdd
	root   uint32
	varOf  []int32 // per item, its variable or -1
	item   []int32 // per variable, its item
	length int
	// Lower is the number of maximal nuggets.
	Lower int
}

// maxNuggetNodes bounds the nugget diagram (about 40 bytes a node).
const maxNuggetNodes = 50_000_000

func newNuggetFamily(ctx context.Context, pr *problem, removed []int32, nug Nuggets) (*nuggetFamily, error) {
	gone := make([]bool, len(pr.db.Items))
	for _, v := range removed {
		gone[v] = true
	}
	low, err := maximalFrequent(ctx, pr, gone, nug.K)
	if err != nil {
		return nil, err
	}
	f := &nuggetFamily{z: newZDD(maxNuggetNodes), varOf: make([]int32, len(pr.db.Items)), length: nug.P, Lower: len(low)}
	for v, s := range pr.sup {
		f.varOf[v] = -1
		if s >= nug.K && !gone[v] {
			f.item = append(f.item, int32(v))
		}
	}
	slices.SortFunc(f.item, func(a, b int32) int {
		if pr.sup[a] != pr.sup[b] {
			return pr.sup[b] - pr.sup[a]
		}
		return int(a - b)
	})
	for x, v := range f.item {
		f.varOf[v] = int32(x)
	}
	sets := make([][]int32, len(low))
	for i, l := range low {
		s := make([]int32, len(l))
		for j, v := range l {
			s[j] = f.varOf[v]
		}
		slices.Sort(s)
		sets[i] = s
	}
	slices.SortFunc(sets, slices.Compare)
	f.root = f.z.down(f.z.family(sets, 0))
	if f.z.full() {
		return nil, ErrTooLarge
	}
	return f, nil
}

// counts returns the number of nuggets and, per item, of those holding it.
func (f *nuggetFamily) counts(items int) (Count, []Count, error) {
	total, perVar, err := f.z.counts(f.root, f.length, len(f.item))
	if err != nil {
		return Count{}, nil, err
	}
	per := make([]Count, items)
	for x, c := range perVar {
		per[f.item[x]] = c
	}
	return total, per, nil
}

// suppress removes every nugget holding v.
func (f *nuggetFamily) suppress(v int32) error {
	if x := f.varOf[v]; x >= 0 {
		f.root = f.z.offset(f.root, x)
	}
	if f.z.full() {
		return ErrTooLarge
	}
	return nil
}
