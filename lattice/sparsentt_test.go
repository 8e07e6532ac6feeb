package lattice

import (
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// TestSparseNTT: the pruned NTT of a sparse polynomial equals Lattigo's NTT
// followed by its Montgomery form (or not: the scattered case), coefficient for coefficient modulo
// every prime, for the positions BinSummer's layouts give (one or several
// terms a row, bins a power of two or not, one to sixteen nodes), for
// scattered positions, for one position and for every position (no stage
// sparse). Dropping a live residue or a stage makes it fail.
func TestSparseNTT(t *testing.T) {
	p := params(t)
	rq := p.bgv.RingQ().AtLevel(p.bgv.MaxLevel())
	n := p.Slots()
	rng := mrand.New(mrand.NewPCG(3, 4))
	layout := func(bins, nodes, terms int) []int {
		span := bins * nodes
		rows := n / (2 * span)
		var pos []int
		for r := range rows {
			for range terms {
				if e := rng.IntN(bins) - 2*span*r; e < 0 {
					pos = append(pos, e+n)
				} else {
					pos = append(pos, e)
				}
			}
		}
		return pos
	}
	scattered := make([]int, 300)
	for i := range scattered {
		scattered[i] = rng.IntN(n)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	cases := map[string][]int{
		"32 bins":             layout(32, 1, 1),
		"32 bins, 2 nodes":    layout(32, 2, 1),
		"32 bins, 3 terms":    layout(32, 1, 3),
		"27 bins, 2 nodes":    layout(27, 2, 1),
		"2 bins":              layout(2, 1, 1),
		"2 bins, 16 nodes":    layout(2, 16, 2),
		"scattered":           scattered,
		"one":                 {n - 5},
		"every":               all,
		"the first row alone": layout(32, 1, 1)[:1],
	}
	var s sparseNTT
	for name, raw := range cases {
		slices.Sort(raw)
		pos := slices.Compact(raw)
		got, want := rq.NewPoly(), rq.NewPoly()
		for j, q := range rq.ModuliChain() {
			for _, e := range pos {
				v := rng.Uint64N(q)
				got.Coeffs[j][e], want.Coeffs[j][e] = v, v
			}
		}
		rng.Shuffle(len(pos), func(a, b int) { pos[a], pos[b] = pos[b], pos[a] })
		mont := name != "scattered"
		in := *got.CopyNew()
		s.forward(rq, got, pos, mont)
		rq.NTT(want, want)
		if mont {
			rq.MForm(want, want)
		}
		equal := func(mix string) {
			for j := range want.Coeffs {
				if !slices.Equal(got.Coeffs[j], want.Coeffs[j]) {
					t.Fatalf("%s%s: modulus %d: the sparse NTT differs from Lattigo's", name, mix, j)
				}
			}
		}
		equal("")
		// Every stage-mix: the first k planned stages as planned, the rest
		// dense (each dense kernel's entry stride, odd and even counts of
		// dense stages, none).
		s.plan(n, pos)
		planned := slices.Clone(s.stages)
		for k := range planned {
			s.stages = planned[:k]
			got.Copy(in)
			s.run(rq, got, pos, mont)
			equal(fmt.Sprintf(", dense after %d stages", k))
		}
	}
}

// TestSparseNTTRings: the same for other degrees and primes (the kernels'
// shapes at small n) and for a prime of 62 bits, where Lattigo's NTT
// is wrong (X·X is not X² there; ours is right), which therefore takes
// Lattigo's NTT.
func TestSparseNTTRings(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(9, 10))
	var s sparseNTT
	for _, c := range []struct{ logN, bits int }{{4, 60}, {5, 50}, {6, 61}, {7, 60}, {4, 62}} {
		n := 1 << c.logN
		g := ring.NewNTTFriendlyPrimesGenerator(uint64(c.bits), uint64(2*n))
		q, err := g.NextDownstreamPrime()
		if err != nil {
			t.Fatal(err)
		}
		rq, err := ring.NewRing(n, []uint64{q})
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= n; k = 2*k + 1 {
			pos := rng.Perm(n)[:min(k, n)]
			got := rq.NewPoly()
			for _, e := range pos {
				got.Coeffs[0][e] = rng.Uint64N(q)
			}
			want := *got.CopyNew()
			s.forward(rq, got, pos, true)
			rq.NTT(want, want)
			rq.MForm(want, want)
			if !slices.Equal(got.Coeffs[0], want.Coeffs[0]) {
				t.Fatalf("n = %d, a %d-bit prime, %d nonzeros: the sparse NTT differs from Lattigo's", n, c.bits, len(pos))
			}
		}
	}
}

// TestDenseKernels: the two sequences of dense kernels (denseAsm, in
// assembly on amd64, and denseGo) give the same coefficients from every
// entry stride, and so do radix4 and radix4Fast on a run of quadruples,
// on any values below 4q (what the stages before leave), for every prime; TestSparseNTT checks the build's own against Lattigo's (run
// it with -tags purego for denseGo).
func TestDenseKernels(t *testing.T) {
	p := params(t)
	rq := p.bgv.RingQ().AtLevel(p.bgv.MaxLevel())
	n := p.Slots()
	rng := mrand.New(mrand.NewPCG(7, 8))
	for _, sub := range rq.SubRings[:rq.Level()+1] {
		q, r := sub.Modulus, rootsOf(sub)
		in := make([]uint64, n)
		for j := range in {
			in[j] = rng.Uint64N(4 * q)
		}
		for st, m := n/2, 1; st >= 1; st, m = st/2, 2*m {
			a, b := slices.Clone(in), slices.Clone(in)
			denseGo(a, st, m, q, r)
			denseAsm(b, st, m, q, r)
			if !slices.Equal(a, b) {
				t.Fatalf("modulus %d, from stride %d: the dense kernels differ", q, st)
			}
			if st < 2 {
				continue
			}
			lo, hi := rng.IntN(st/2), st/2 // a run of quadruples, as pairRuns plans
			hi -= rng.IntN(hi - lo)
			a, b = slices.Clone(in), slices.Clone(in)
			radix4(a, st, m, q, r, lo, hi)
			radix4Fast(b, st, m, q, r, lo, hi)
			if !slices.Equal(a, b) {
				t.Fatalf("modulus %d, stride %d, quadruples [%d, %d): the radix-4 kernels differ", q, st, lo, hi)
			}
		}
	}
}

// BenchmarkWeigh times one chunk's W (its NTT in Montgomery form) at
// default_credit's layout (32 bins, one node: 128 rows a chunk).
func BenchmarkWeigh(b *testing.B) { benchWeigh(b, 1) }

// BenchmarkWeighNode is BenchmarkWeigh for a node's subset of the chunk's
// rows (boost's levels below the root): every other row, 64 terms.
func BenchmarkWeighNode(b *testing.B) { benchWeigh(b, 2) }

// benchWeigh times the W of every every-th row of a chunk, each in a
// random bin of 32 with weight 1.
func benchWeigh(b *testing.B, every int) {
	l, s := weighSummer(b, 32, 1)
	rng := mrand.New(mrand.NewPCG(5, 6))
	var terms []BinTerm
	for r := 0; r < l.Rows(); r += every {
		terms = append(terms, BinTerm{Row: r, Bin: rng.IntN(32), Weight: 1})
	}
	for b.Loop() {
		s.weigh(terms, 0)
	}
}

// TestFullNTT: sparseNTT.full of dense polynomials (every coefficient
// uniform below its prime, and the extremes 0 and q−1) equals Lattigo's
// NTT coefficient for coefficient, so a fresh encryption made with it is
// the one rq.NTT would make (binsums_fresh.go).
func TestFullNTT(t *testing.T) {
	p := params(t)
	rq := p.bgv.RingQ().AtLevel(p.bgv.MaxLevel())
	rng := mrand.New(mrand.NewPCG(7, 8))
	var s sparseNTT
	for round := range 4 {
		got, want := rq.NewPoly(), rq.NewPoly()
		for j, q := range rq.ModuliChain() {
			for i := range got.Coeffs[j] {
				v := rng.Uint64N(q)
				switch round {
				case 1:
					v = q - 1
				case 2:
					v = 0
				}
				got.Coeffs[j][i], want.Coeffs[j][i] = v, v
			}
		}
		s.full(rq, got)
		rq.NTT(want, want)
		for j := range want.Coeffs {
			if !slices.Equal(got.Coeffs[j], want.Coeffs[j]) {
				t.Fatalf("round %d: modulus %d: the full NTT differs from Lattigo's", round, j)
			}
		}
	}
}

// BenchmarkFullNTT times sparseNTT.full of one dense polynomial (every
// prime of Q), against Lattigo's NTT.
func BenchmarkFullNTT(b *testing.B) {
	p := params(b)
	rq := p.bgv.RingQ().AtLevel(p.bgv.MaxLevel())
	x := rq.NewPoly()
	var s sparseNTT
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			s.full(rq, x)
		}
	})
	b.Run("lattigo", func(b *testing.B) {
		for b.Loop() {
			rq.NTT(x, x)
		}
	})
}

// BenchmarkWeighBinary times one chunk's W at a9a's layouts: two bins a
// node (binary columns, two to a group of positions), one to sixteen nodes
// a slot, each row in either position or both with probability a half;
// the sub-benchmarks name the plan's stages (0 lists, 1 copies, 2 runs).
//
//	go test ./lattice -run '^$' -bench WeighBinary -count 6
func BenchmarkWeighBinary(b *testing.B) {
	for _, nodes := range []int{1, 2, 4, 8, 16} {
		l, s := weighSummer(b, 2, nodes)
		rng := mrand.New(mrand.NewPCG(5, 6))
		var terms []BinTerm
		for r := 0; r < l.Rows(); r++ {
			for bin := range 2 {
				if rng.IntN(2) == 0 {
					terms = append(terms, BinTerm{Row: r, Bin: bin, Weight: 1})
				}
			}
		}
		s.weigh(terms, 0)
		kinds := ""
		for _, st := range s.ntt.stages {
			kinds += fmt.Sprint(st.kind)
		}
		b.Run(fmt.Sprintf("nodes=%d/stages=%s", nodes, kinds), func(b *testing.B) {
			for b.Loop() {
				s.weigh(terms, 0)
			}
		})
	}
}

// weighSummer is a layout of bins bins and nodes nodes a slot under the
// test key, and a BinSummer for it.
func weighSummer(b *testing.B, bins, nodes int) (*BinLayout, *BinSummer) {
	pk, _ := binKeys(b)
	l, err := NewNodeBinLayout(pk.Params, bins, nodes)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewBinSummer(pk, l)
	if err != nil {
		b.Fatal(err)
	}
	return l, s
}
