package lattice

import (
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// TestEncodePlaced: the class holder's chunk plaintexts, encoded from
// their nonzero coefficients, equal bgv.Encoder.Encode's of the placed
// coefficients, modulo every prime, for layouts of one to sixteen nodes,
// bins a power of two or not, negative, zero and large values, and a last
// chunk part full.
func TestEncodePlaced(t *testing.T) {
	t.Parallel()
	p := params(t)
	pk, _ := binKeys(t)
	e, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	rng := mrand.New(mrand.NewPCG(9, 10))
	for _, c := range []struct{ bins, nodes int }{{32, 1}, {27, 2}, {2, 16}, {8, 1}} {
		l, err := NewNodeBinLayout(p, c.bins, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		rows := l.Rows() + l.Rows()/3
		g, h := make([]int64, rows*c.nodes), make([]int64, rows*c.nodes)
		for i := range g {
			g[i], h[i] = rng.Int64N(1<<50)-1<<49, rng.Int64N(1<<50)
		}
		g[0], h[1] = 0, -1
		params := p.bgv
		for k := range l.Chunks(rows) {
			got, want := bgv.NewPlaintext(params, params.MaxLevel()), bgv.NewPlaintext(params, params.MaxLevel())
			got.IsBatched, want.IsBatched = false, false
			e.encodePlaced(l, g, h, k, got)
			if err := e.ecd.Encode(l.place(g, h, k), want); err != nil {
				t.Fatal(err)
			}
			for j := range want.Value.Coeffs {
				if !slices.Equal(got.Value.Coeffs[j], want.Value.Coeffs[j]) {
					t.Fatalf("%d bins, %d nodes, chunk %d, prime %d: the placed encoding differs from Encode's", c.bins, c.nodes, k, j)
				}
			}
		}
	}
}
