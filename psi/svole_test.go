package psi

import (
	"crypto/rand"
	mrand "math/rand/v2"
	"testing"
)

// silentVOLE runs the whole silent VOLE of m outputs in one process, base
// OTs included, and returns both sides' outputs and Δ. Both sides take
// their tables from arenas, as in the PSI; the outputs live in them
// until the returned done is called.
func silentVOLE(t testing.TB, m int) (a, c, b []gf, delta gf, ch *voleChoice, p voleParams, done func()) {
	t.Helper()
	bs, pa := newBaseSender(voleWidth)
	br, pb := newBaseReceiver(pa)
	keys, err := br.finish(bs.finish(pb))
	if err != nil {
		t.Fatal(err)
	}
	p = newVoleParams(m)
	var s [32]byte
	rand.Read(s[:])
	rng := mrand.NewChaCha8(s)
	ch = p.newVoleChoice(rng)
	rows := cotRows(p.cots())
	u, tr := cotChooser(prgCiphers(bs.k0), prgCiphers(bs.k1), ch.bits, rows)
	q := cotSender(u, prgCiphers(keys), br.choice, rows)
	delta = deltaOf(br.choice)
	eaSeed := [32]byte{9}
	ss, sr := newScratch(p.senderScratch()), newScratch(p.receiverScratch(m))
	b, msg := p.senderVOLE(q, delta, eaSeed, rng, ss)
	a, c = p.chooserVOLE(tr, ch, msg, eaSeed, sr)
	return a, c, b, delta, ch, p, func() { ss.close(); sr.close() }
}

// TestCOT checks the IKNP correlation q_i = t_i + r_i·Δ row by row.
func TestCOT(t *testing.T) {
	bs, pa := newBaseSender(voleWidth)
	br, pb := newBaseReceiver(pa)
	keys, err := br.finish(bs.finish(pb))
	if err != nil {
		t.Fatal(err)
	}
	const rows = 512
	r := make([]byte, rows/8)
	rand.Read(r)
	u, tr := cotChooser(prgCiphers(bs.k0), prgCiphers(bs.k1), r, rows)
	q := cotSender(u, prgCiphers(keys), br.choice, rows)
	delta := deltaOf(br.choice)
	for i := range rows {
		want := tr[i]
		if r[i/8]>>(i%8)&1 == 1 {
			want = want.add(delta)
		}
		if q[i] != want {
			t.Fatalf("row %d: q ≠ t + r·Δ", i)
		}
	}
}

// TestSilentVOLE checks C = B + A·Δ at every output for several sizes,
// the noise shape (one nonzero entry per block), and that A is not
// degenerate: its entries are distinct.
func TestSilentVOLE(t *testing.T) {
	for _, m := range []int{1, 300, 5000} {
		a, c, b, delta, ch, p, done := silentVOLE(t, m)
		defer done()
		if len(a) != m || len(b) != m || len(c) != m {
			t.Fatalf("m=%d: lengths %d %d %d", m, len(a), len(b), len(c))
		}
		if p.trees < minNoise || p.noiseLen() < eaScale*m {
			t.Fatalf("m=%d: %d trees of %d, below the parameters", m, p.trees, p.per)
		}
		tbl := newGFTable(delta)
		seen := map[gf]bool{}
		for i := range m {
			if c[i] != b[i].add(tbl.mul(a[i])) {
				t.Fatalf("m=%d: C ≠ B + A·Δ at %d", m, i)
			}
			if seen[a[i]] {
				t.Fatalf("m=%d: A repeats at %d", m, i)
			}
			seen[a[i]] = true
		}
		for j := range p.trees {
			if ch.alpha[j] < 0 || ch.alpha[j] >= p.per || ch.a[j] == (gf{}) {
				t.Fatalf("m=%d: tree %d: bad noise", m, j)
			}
		}
	}
}

// TestVoleParams pins the parameters at the benchmark's size and checks
// the bounds at every size: t ≥ 398 blocks, N ≥ 5m, and blocks as long
// as those allow (fewer, deeper trees).
func TestVoleParams(t *testing.T) {
	if minNoise != 398 {
		t.Fatalf("minNoise %d, want 398 (= ⌈128/−log2(0.8)⌉)", minNoise)
	}
	for _, m := range []int{1, 2, 1000, 1 << 16, okvsSize(1 << 20)} {
		p := newVoleParams(m)
		if p.trees < minNoise || p.noiseLen() < eaScale*m || p.per != 1<<p.depth || p.depth < 1 {
			t.Fatalf("m=%d: %+v", m, p)
		}
		if eaScale*m/(2*p.per) >= minNoise {
			t.Fatalf("m=%d: blocks could be twice as long: %+v", m, p)
		}
	}
}

// BenchmarkSilentVOLE is both sides of a silent VOLE of as many outputs
// as the OKVS of 2^20 elements, base OTs included.
func BenchmarkSilentVOLE(b *testing.B) {
	for b.Loop() {
		_, _, _, _, _, _, done := silentVOLE(b, okvsSize(1<<20))
		done()
	}
}
