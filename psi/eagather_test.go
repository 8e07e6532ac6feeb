package psi

import (
	"math/bits"
	mrand "math/rand/v2"
	"testing"
)

// TestEAGather checks gather (the assembly on amd64) against gatherGo
// and both against a sum written out here, for output counts around the
// prefetch distance and the batch, over expander indices and over
// indices at the ends of x.
func TestEAGather(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	x := make([]gf, 5000)
	for i := range x {
		x[i] = gf{rng.Uint64(), rng.Uint64()}
	}
	e := newEAExpander([32]byte{7}, len(x))
	for _, n := range []int{0, 1, 7, 8, 9, 17, 100, eaBatch} {
		idx := e.next(n)
		if n > 0 {
			idx[0], idx[len(idx)-1] = 0, uint32(len(x)-1)
		}
		got, ref := make([]gf, n), make([]gf, n)
		gather(got, x, idx)
		gatherGo(ref, x, idx)
		for k := range n {
			var want gf
			for j := range eaWeight {
				want = want.add(x[idx[k*eaWeight+j]])
			}
			if got[k] != want || ref[k] != want {
				t.Fatalf("n=%d output %d: gather %v, gatherGo %v, want %v", n, k, got[k], ref[k], want)
			}
		}
	}
}

// BenchmarkEAEncode is the EA code of one silent VOLE at 2^20 elements
// (N = 5.78 M, m = 1.15 M): the accumulation and the gathers.
func BenchmarkEAEncode(b *testing.B) {
	p := newVoleParams(okvsSize(1 << 20))
	sc := newScratch(p.senderScratch())
	defer sc.close()
	out := make([]gf, p.m)
	x := take[gf](sc, p.noiseLen())
	for i := range x {
		x[i] = gf{uint64(i), uint64(i) * 3}
	}
	for b.Loop() {
		eaEncode(out, x, [32]byte{1})
	}
}

// TestEAExpander checks the expander's indices against their definition:
// draw i is the high word of w·N, w the low (i even) or high (i odd)
// half of AES-128 of the counter c+i/2 under the EA seed's first 16
// bytes, c the blocks used by the earlier batches (a batch of an odd
// number of draws leaves its last block's high half unused), over
// batches of odd and even sizes.
func TestEAExpander(t *testing.T) {
	seed := [32]byte{3, 1, 4}
	const n = 5_780_000
	e := newEAExpander(seed, n)
	aes := newFixedAESWith(seed[:16], false)
	ctr := 0
	for _, cnt := range []int{1, 3, eaBatch, 2, 7} {
		for draw, got := range e.next(cnt) {
			blk := []gf{{uint64(ctr + draw/2), 0}}
			aes.encrypt(blk, blk)
			w := blk[0].lo
			if draw%2 == 1 {
				w = blk[0].hi
			}
			want, _ := bits.Mul64(w, n)
			if uint64(got) != want {
				t.Fatalf("batch of %d after %d blocks, draw %d: %d, want %d", cnt, ctr, draw, got, want)
			}
		}
		ctr += (cnt*eaWeight + 1) / 2
	}
}

// TestGather16 checks gather16 (the assembly on amd64) against
// gather16Go for element and digest slices, counts around the prefetch
// distance, and an index out of range refused.
func TestGather16(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(11, 12))
	src := make([]gf, 1000)
	for i := range src {
		src[i] = gf{rng.Uint64(), rng.Uint64()}
	}
	ds := make([][digestLen]byte, len(src))
	for i := range ds {
		src[i].put(ds[i][:])
	}
	for _, n := range []int{0, 1, 15, 16, 17, 33, 1000} {
		idx := make([]int32, n)
		for k := range idx {
			idx[k] = int32(rng.IntN(len(src)))
		}
		got, want := make([]gf, n), make([]gf, n)
		gather16(got, src, idx)
		gather16Go(want, src, idx)
		gotD, wantD := make([][digestLen]byte, n), make([][digestLen]byte, n)
		gather16(gotD, ds, idx)
		gather16Go(wantD, ds, idx)
		for k := range n {
			if got[k] != src[idx[k]] || want[k] != src[idx[k]] || gotD[k] != ds[idx[k]] || wantD[k] != ds[idx[k]] {
				t.Fatalf("n=%d position %d (index %d): %v %v %x %x, want %v", n, k, idx[k], got[k], want[k], gotD[k], wantD[k], src[idx[k]])
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an index past the source was accepted")
		}
	}()
	gather16(make([]gf, 1), src, []int32{int32(len(src))})
}
