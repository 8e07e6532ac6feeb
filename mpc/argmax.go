package mpc

import (
	"context"
	"errors"
	"fmt"
)

// ErrIndex is returned by OpenIndex when the opened index is outside
// the vector: the parties' shares did not come from Argmax over it.
var ErrIndex = errors.New("mpc: opened index outside the vector")

// Argmax returns shares of the index (0-based) of the largest of the
// shared signed k-bit values v (k <= MaxBits − 1), ties going to the
// lower index, and shares of that value. It is a tournament: at each of
// ⌈log2 len(v)⌉ levels, adjacent survivors (a at 2q, b at 2q+1) are
// compared at once by one batched LTZ of a − b (k+1 bits), and one
// batched Mul selects the winner and its index obliviously:
// w = a + [a<b](b − a), i = i_a + [a<b](i_b − i_a). As a survivor at 2q
// holds lower indices than the one at 2q+1, a tie keeps the lower one;
// an odd last survivor goes up unmatched. The masks of all len(v) − 1
// comparisons are drawn at once beforehand.
//
// Rounds: 3 (masks) + L (2 + ⌈log2 k⌉), L = ⌈log2 len(v)⌉: 87 for 4,096
// values of 32 bits. Opened: the squares of RandomBits and one masked
// c per comparison, as in Mod2m; the order of the comparisons is fixed
// by len(v) alone. Nothing about the winner is opened: OpenIndex does
// that when the caller decides to release it.
func (p *Party) Argmax(ctx context.Context, v []Elem, k int) (idx, max Elem, err error) {
	if len(v) == 0 {
		return Elem{}, Elem{}, fmt.Errorf("mpc: argmax: empty vector: %w", ErrParams)
	}
	if err := checkKM(k+1, k); err != nil {
		return Elem{}, Elem{}, err
	}
	vals := append([]Elem(nil), v...)
	ids := make([]Elem, len(v))
	for i := range ids {
		ids[i] = NewElem(uint64(i)) // public constants are their own shares
	}
	if len(v) == 1 {
		return ids[0], vals[0], nil
	}
	mk, err := p.prandM(ctx, len(v)-1, k+1, k)
	if err != nil {
		return Elem{}, Elem{}, err
	}
	for off := 0; len(vals) > 1; {
		pairs := len(vals) / 2
		d := make([]Elem, pairs)
		for q := range d {
			d[q] = vals[2*q].Sub(vals[2*q+1])
		}
		lt, err := p.ltzWith(ctx, d, k+1, mk.slice(off, off+pairs))
		if err != nil {
			return Elem{}, Elem{}, err
		}
		off += pairs
		vals, ids, err = p.selectLevel(ctx, vals, ids, lt)
		if err != nil {
			return Elem{}, Elem{}, err
		}
	}
	return ids[0], vals[0], nil
}

// selectLevel keeps, of each adjacent pair, b where lt is 1 and a
// where it is 0, for the values and their indices in one Mul round.
func (p *Party) selectLevel(ctx context.Context, vals, ids, lt []Elem) ([]Elem, []Elem, error) {
	pairs := len(lt)
	xs := make([]Elem, 2*pairs)
	ys := make([]Elem, 2*pairs)
	for q := range pairs {
		xs[q], ys[q] = lt[q], vals[2*q+1].Sub(vals[2*q])
		xs[pairs+q], ys[pairs+q] = lt[q], ids[2*q+1].Sub(ids[2*q])
	}
	prod, err := p.Mul(ctx, xs, ys)
	if err != nil {
		return nil, nil, err
	}
	nv := make([]Elem, 0, pairs+1)
	ni := make([]Elem, 0, pairs+1)
	for q := range pairs {
		nv = append(nv, vals[2*q].Add(prod[q]))
		ni = append(ni, ids[2*q].Add(prod[pairs+q]))
	}
	if len(vals)%2 == 1 {
		nv = append(nv, vals[len(vals)-1])
		ni = append(ni, ids[len(ids)-1])
	}
	return nv, ni, nil
}

// OpenIndex opens a shared index into a vector of n values, such as
// Argmax's, to every party. One round; it opens the index and nothing
// else, which is the output by design.
func (p *Party) OpenIndex(ctx context.Context, idx Elem, n int) (int, error) {
	o, err := p.Open(ctx, []Elem{idx})
	if err != nil {
		return 0, err
	}
	i, ok := o[0].Int()
	if !ok || i < 0 || i >= int64(n) {
		return 0, ErrIndex
	}
	return int(i), nil
}
