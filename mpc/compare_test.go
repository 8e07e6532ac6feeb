package mpc

import (
	"context"
	mrand "math/rand/v2"
	"testing"
)

func TestMod2mTrunc(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(5, 6))
	for _, c := range configs {
		for _, k := range []int{2, 8, 33, 48} {
			for _, m := range []int{1, k / 2, k - 1} {
				if m < 1 {
					continue
				}
				a := signedSamples(rng, k, 30)
				sh := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
					sa, err := shared(ctx, p, a)
					if err != nil {
						return nil, err
					}
					r, err := p.Mod2m(ctx, sa, k, m)
					if err != nil {
						return nil, err
					}
					q, err := p.Trunc(ctx, sa, k, m)
					return append(r, q...), err
				})
				got := reveal(t, sh, c.t)
				for i, x := range a {
					mod := x & (1<<m - 1)
					if got[i] != FromInt(mod) || got[len(a)+i] != FromInt(x>>m) {
						t.Fatalf("n=%d k=%d m=%d a=%d: mod %v trunc %v", c.n, k, m, x, got[i], got[len(a)+i])
					}
				}
			}
		}
	}
}

func TestBitLT(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(7, 8))
	for _, c := range configs {
		for _, m := range []int{1, 2, 3, 5, 8, 32, 47, 63} {
			const count = 40
			a := make([]uint64, count)
			b := make([]uint64, count)
			for i := range a {
				a[i], b[i] = rng.Uint64()>>(64-m), rng.Uint64()>>(64-m)
				if i%4 == 0 {
					b[i] = a[i] // equal: not less
				}
			}
			a[1], b[1] = 0, 1<<m-1
			a[2], b[2] = 1<<m-1, 0
			bits := make([]int64, 0, count*m)
			for _, v := range b {
				for j := range m {
					bits = append(bits, int64(v>>j&1))
				}
			}
			sh := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
				sb, err := shared(ctx, p, bits)
				if err != nil {
					return nil, err
				}
				return p.BitLT(ctx, a, sb, m)
			})
			for i, g := range reveal(t, sh, c.t) {
				want := NewElem(0)
				if a[i] < b[i] {
					want = NewElem(1)
				}
				if g != want {
					t.Fatalf("n=%d m=%d: %d < %d gave %v", c.n, m, a[i], b[i], g)
				}
			}
		}
	}
}

func TestLTZAbs(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(9, 10))
	for _, c := range configs {
		for _, k := range []int{2, 16, 33, 48} {
			a := signedSamples(rng, k, 40)
			sh := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
				sa, err := shared(ctx, p, a)
				if err != nil {
					return nil, err
				}
				s, err := p.LTZ(ctx, sa, k)
				if err != nil {
					return nil, err
				}
				abs, err := p.Abs(ctx, sa, k)
				return append(s, abs...), err
			})
			got := reveal(t, sh, c.t)
			for i, x := range a {
				lt, abs := int64(0), x
				if x < 0 {
					lt, abs = 1, -x
				}
				if got[i] != FromInt(lt) || got[len(a)+i] != FromInt(abs) {
					t.Fatalf("n=%d k=%d a=%d: ltz %v abs %v", c.n, k, x, got[i], got[len(a)+i])
				}
			}
		}
	}
}

func TestEQZ(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(15, 16))
	for _, c := range configs {
		for _, k := range []int{2, 7, 32, 48} {
			a := signedSamples(rng, k, 30)
			a = append(a, 0, 0, 1<<(k-1)>>1) // zeros twice, a power of two
			sh := gather(t, c.n, c.t, func(ctx context.Context, p *Party) ([]Elem, error) {
				sa, err := shared(ctx, p, a)
				if err != nil {
					return nil, err
				}
				return p.EQZ(ctx, sa, k)
			})
			for i, g := range reveal(t, sh, c.t) {
				want := NewElem(0)
				if a[i] == 0 {
					want = NewElem(1)
				}
				if g != want {
					t.Fatalf("n=%d k=%d: eqz(%d) = %v", c.n, k, a[i], g)
				}
			}
		}
	}
}
