package psi

import (
	mrand "math/rand/v2"
	"testing"
)

// TestBandSum checks the AVX2 band sum against bandSum (and bandSum
// against a plain loop over the band's bits) on random windows and
// bands, and on empty, full and single-column bands at every position.
func TestBandSum(t *testing.T) {
	r := mrand.New(mrand.NewPCG(21, 22))
	var p [okvsBand]gf
	for i := range p {
		p[i] = randGF(r)
	}
	slow := func(band *[okvsWords]uint64) gf {
		var v gf
		for j := range okvsBand {
			if band[j/64]>>(j%64)&1 == 1 {
				v = v.add(p[j])
			}
		}
		return v
	}
	bands := [][okvsWords]uint64{{}, {^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}}
	for j := range okvsBand {
		var b [okvsWords]uint64
		b[j/64] = 1 << (j % 64)
		bands = append(bands, b)
	}
	for range 2000 {
		bands = append(bands, [okvsWords]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()})
	}
	if !avx2Available() {
		t.Log("no AVX2: the assembly path is not exercised on this CPU")
	}
	for k, b := range bands {
		want := slow(&b)
		if got := bandSum(&p, &b); got != want {
			t.Fatalf("band %d: bandSum %x, want %x", k, got, want)
		}
		if avx2Available() {
			if got := bandSumAVX2(&p[0], &b); got != want {
				t.Fatalf("band %d: bandSumAVX2 %x, want %x", k, got, want)
			}
		}
	}
}
