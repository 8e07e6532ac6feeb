package mpc

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"testing"
)

// argmaxPlain is the first index of the largest value.
func argmaxPlain(v []int64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func TestArgmax(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(11, 12))
	const k = 32
	half := int64(1) << (k - 1)
	cases := [][]int64{
		{5},
		{-half, half - 1},
		{half - 1, half - 1},  // tie: the lower index
		{-half, -half, -half}, // all equal, odd length
		{0, -1, 0, -1, 0},     // ties across levels
		{-(half - 1), -1, -half, -1},
	}
	for _, n := range []int{7, 16, 33} {
		v := make([]int64, n)
		for i := range v {
			v[i] = rng.Int64N(5) - 2 // small range: many ties
		}
		cases = append(cases, v)
	}
	wide := make([]int64, 20)
	for i := range wide {
		wide[i] = rng.Int64N(2*half) - half
	}
	cases = append(cases, wide)
	for _, c := range configs {
		for ci, v := range cases {
			t.Run(fmt.Sprintf("n%d/case%d", c.n, ci), func(t *testing.T) {
				idx := make([]int, c.n)
				sh := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
					sv, err := shared(ctx, p, v)
					if err != nil {
						return nil, err
					}
					i, mx, err := p.Argmax(ctx, sv, k)
					if err != nil {
						return nil, err
					}
					idx[p.Self], err = p.OpenIndex(ctx, i, len(v))
					return []Elem{i, mx}, err
				})
				got := reveal(t, sh, c.t)
				want := argmaxPlain(v)
				if got[0] != NewElem(uint64(want)) || got[1] != FromInt(v[want]) {
					t.Fatalf("%v: index %v max %v, want %d", v, got[0], got[1], want)
				}
				for j, i := range idx {
					if i != want {
						t.Fatalf("%v: party %d opened index %d, want %d", v, j, i, want)
					}
				}
			})
		}
	}
}
