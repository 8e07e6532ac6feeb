package mpc

import (
	"context"
	mrand "math/rand/v2"
	"testing"
)

// gather runs f on every party and returns each party's output vector.
func gather(t *testing.T, n, th int, f func(ctx context.Context, p *Party) ([]Elem, error)) [][]Elem {
	t.Helper()
	out := make([][]Elem, n)
	mustRun(t, n, th, func(ctx context.Context, p *Party) error {
		v, err := f(ctx, p)
		out[p.Self] = v
		return err
	})
	return out
}

// ints embeds a slice of integers.
func ints(x []int64) []Elem {
	out := make([]Elem, len(x))
	for i, v := range x {
		out[i] = FromInt(v)
	}
	return out
}

// signedSamples returns the k-bit edge values (0, ±1, ±(2^(k-1)−1),
// −2^(k-1)) and count random k-bit values.
func signedSamples(rng *mrand.Rand, k, count int) []int64 {
	half := int64(1) << (k - 1)
	out := []int64{0, 1, -1, half - 1, -(half - 1), -half}
	for range count {
		out = append(out, rng.Int64N(2*half)-half)
	}
	return out
}

// shared has party 0 share x among all and returns the party's shares.
func shared(ctx context.Context, p *Party, x []int64) ([]Elem, error) {
	var v []Elem
	if p.Self == 0 {
		v = ints(x)
	}
	return p.Input(ctx, 0, v, len(x))
}

func TestInputMulOpen(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	for _, c := range configs {
		a := signedSamples(rng, 48, 40)
		b := signedSamples(rng, 48, 40)
		var opened [][]Elem = make([][]Elem, c.n)
		prod := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
			sa, err := shared(ctx, p, a)
			if err != nil {
				return nil, err
			}
			var bv []Elem
			if p.Self == c.n-1 {
				bv = ints(b)
			}
			sb, err := p.Input(ctx, c.n-1, bv, len(b))
			if err != nil {
				return nil, err
			}
			ab, err := p.Mul(ctx, sa, sb)
			if err != nil {
				return nil, err
			}
			// Mul twice in a row: a product of products stays degree t.
			abb, err := p.Mul(ctx, ab, sb)
			if err != nil {
				return nil, err
			}
			o, err := p.Open(ctx, Add(MulPublic(FromInt(3), sa), AddPublic(NewElem(7), Sub(abb, sb))))
			opened[p.Self] = o
			return ab, err
		})
		got := reveal(t, prod, c.t)
		for i := range a {
			ea, eb := FromInt(a[i]), FromInt(b[i])
			if got[i] != ea.Mul(eb) {
				t.Fatalf("n=%d: product %d", c.n, i)
			}
			want := FromInt(3).Mul(ea).Add(NewElem(7)).Add(ea.Mul(eb).Mul(eb)).Sub(eb)
			for j := range c.n {
				if opened[j][i] != want {
					t.Fatalf("n=%d: party %d opened %v at %d, want %v", c.n, j, opened[j][i], i, want)
				}
			}
		}
	}
}

func TestRandomBits(t *testing.T) {
	for _, c := range configs {
		const m = 300
		sh := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
			return p.RandomBits(ctx, m)
		})
		ones := 0
		for i, b := range reveal(t, sh, c.t) {
			switch b {
			case NewElem(0):
			case NewElem(1):
				ones++
			default:
				t.Fatalf("n=%d: bit %d is %v", c.n, i, b)
			}
		}
		// 300 fair bits: fewer than 100 or more than 200 ones has
		// probability below 1e-8.
		if ones < 100 || ones > 200 {
			t.Fatalf("n=%d: %d ones in %d bits", c.n, ones, m)
		}
	}
}

// InputAll shares every party's vector in one round: party j's shares,
// from every party, reconstruct its vector, and the rounds are one.
func TestInputAll(t *testing.T) {
	for _, c := range configs {
		per := make([][][]Elem, c.n) // per[i][j]: party i's shares of party j's vector
		rounds := make([]int, c.n)
		mustRun(t, c.n, c.t, func(ctx context.Context, p *Party) error {
			in, err := p.InputAll(ctx, ints([]int64{int64(p.Self + 1), -10 * int64(p.Self+1)}))
			per[p.Self], rounds[p.Self] = in, p.Stats().Rounds
			return err
		})
		for j := range c.n {
			sh := make([][]Elem, c.n)
			for i := range c.n {
				sh[i] = per[i][j]
			}
			got := reveal(t, sh, c.t)
			if a, _ := got[0].Int(); a != int64(j+1) {
				t.Errorf("n=%d: party %d's first value reconstructs to %d", c.n, j, a)
			}
			if b, _ := got[1].Int(); b != -10*int64(j+1) {
				t.Errorf("n=%d: party %d's second value reconstructs to %d", c.n, j, b)
			}
		}
		if rounds[0] != 1 {
			t.Errorf("n=%d: %d rounds, want 1", c.n, rounds[0])
		}
	}
}
