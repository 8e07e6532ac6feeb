package mont

import (
	"crypto/rand"
	"math/big"
	mrand "math/rand/v2"
	"slices"
	"testing"
	"time"
)

// formOf is x·R mod m by math/big, the definition ToForm must meet.
func formOf(x, m *big.Int) *big.Int {
	t := new(big.Int).Lsh(x, uint(len(m.Bits())*64))
	return t.Mod(t, m)
}

// check multiplies the forms of x and y and compares with math/big.
func check(t *testing.T, mm *Modulus, m, x, y *big.Int) {
	t.Helper()
	a, b := mm.ToForm(x), mm.ToForm(y)
	if got, want := new(big.Int).SetBits(append([]big.Word(nil), a...)), formOf(x, m); got.Cmp(want) != 0 {
		t.Fatalf("ToForm(%x) mod %x = %x, want %x", x, m, got, want)
	}
	z := make([]big.Word, mm.Words())
	mm.Mul(z, a, b, make([]big.Word, mm.ScratchWords()))
	want := new(big.Int).Mul(x, y)
	want.Mod(want, m)
	if got := mm.FromForm(z); got.Cmp(want) != 0 {
		t.Fatalf("%x·%x mod %x = %x, want %x", x, y, m, got, want)
	}
	// Aliased output.
	mm.Mul(a, a, b, make([]big.Word, mm.ScratchWords()))
	if got := mm.FromForm(a); got.Cmp(want) != 0 {
		t.Fatalf("aliased: %x·%x mod %x = %x, want %x", x, y, m, got, want)
	}
}

func randOdd(t *testing.T, bits int) *big.Int {
	t.Helper()
	m, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
	if err != nil {
		t.Fatal(err)
	}
	return m.SetBit(m, bits-1, 1).SetBit(m, 0, 1)
}

// TestMulRandom: random moduli of 1 to 70 words (every remainder of the
// assembly's blocks of four) and the 4096-bit size of n² at 2048-bit n.
func TestMulRandom(t *testing.T) {
	sizes := []int{2, 63, 64, 65, 127, 128, 129, 191, 255, 1000, 2048, 4095, 4096, 4097}
	for w := 1; w <= 70; w += 3 {
		sizes = append(sizes, 64*w, 64*w-5)
	}
	for _, bits := range sizes {
		m := randOdd(t, bits)
		mm := New(m)
		for i := 0; i < 20; i++ {
			x, _ := rand.Int(rand.Reader, m)
			y, _ := rand.Int(rand.Reader, m)
			check(t, mm, m, x, y)
		}
	}
}

// TestMulEdges: operands 0, 1, 2 and m−1 against moduli of all-ones
// words (where the result's carry word c is set), 3, 2^(64k−1)+1 and
// 2^(64k)−2^64+1.
func TestMulEdges(t *testing.T) {
	one := big.NewInt(1)
	mods := []*big.Int{big.NewInt(3), big.NewInt(0x7fffffffffffffff)}
	for _, k := range []int{1, 2, 4, 5, 64} {
		r := new(big.Int).Lsh(one, uint(64*k))
		mods = append(mods,
			new(big.Int).Sub(r, one),                      // all ones
			new(big.Int).Add(new(big.Int).Rsh(r, 1), one)) // 2^(64k−1)+1
		if k > 1 { // 2^(64k) − 2^64 + 1: sparse
			mods = append(mods, new(big.Int).Add(new(big.Int).Sub(r, new(big.Int).Lsh(one, 64)), one))
		}
	}
	for _, m := range mods {
		mm := New(m)
		if mm == nil {
			t.Fatalf("New(%x) = nil", m)
		}
		mm1 := new(big.Int).Sub(m, one)
		for _, x := range []*big.Int{big.NewInt(0), one, big.NewInt(2), mm1} {
			for _, y := range []*big.Int{big.NewInt(0), one, big.NewInt(2), mm1} {
				if x.Cmp(m) < 0 && y.Cmp(m) < 0 {
					check(t, mm, m, x, y)
				}
			}
		}
	}
}

// TestNewRefuses: even moduli, 1, 0 and negatives have no Montgomery form.
func TestNewRefuses(t *testing.T) {
	for _, m := range []int64{0, 1, 2, 4096, -7} {
		if New(big.NewInt(m)) != nil {
			t.Errorf("New(%d) != nil", m)
		}
	}
}

// TestStep: the assembly step against the Go definition, every length up
// to 20 and random words including all-ones, with t's top word 0 or 1.
func TestStep(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	word := func() big.Word {
		if r.IntN(4) == 0 {
			return ^big.Word(0)
		}
		return big.Word(r.Uint64())
	}
	for n := 1; n <= 20; n++ {
		for trial := 0; trial < 50; trial++ {
			a, m, tt := make([]big.Word, n), make([]big.Word, n), make([]big.Word, n+1)
			for i := range a {
				a[i], m[i], tt[i] = word(), word(), word()
			}
			m[0] |= 1
			tt[n] = big.Word(r.IntN(2))
			bi, minv := word(), word()
			t2 := append([]big.Word(nil), tt...)
			step(tt, a, m, bi, minv)
			stepGeneric(t2, a, m, bi, minv)
			if !slices.Equal(tt, t2) {
				t.Fatalf("n=%d: %x, want %x", n, tt, t2)
			}
		}
	}
}

// FuzzMul: any odd modulus and operands reduced below it.
func FuzzMul(f *testing.F) {
	f.Add([]byte{3}, []byte{2}, []byte{2})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []byte{0xff, 0xfe}, []byte{1})
	f.Fuzz(func(t *testing.T, mb, xb, yb []byte) {
		m := new(big.Int).SetBytes(mb)
		m.SetBit(m, 0, 1)
		if m.BitLen() < 2 || m.BitLen() > 8192 {
			return
		}
		x := new(big.Int).SetBytes(xb)
		y := new(big.Int).SetBytes(yb)
		check(t, New(m), m, x.Mod(x, m), y.Mod(y, m))
	})
}

// BenchmarkMulInterleaved alternates batches of both multiplications so
// that a loaded machine slows both alike, and reports their times and
// quorem/mont.
func BenchmarkMulInterleaved(b *testing.B) {
	m, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 4096))
	if err != nil {
		b.Fatal(err)
	}
	m.SetBit(m, 4095, 1).SetBit(m, 0, 1)
	x, _ := rand.Int(rand.Reader, m)
	y, _ := rand.Int(rand.Reader, m)
	mm := New(m)
	a, c, s := mm.ToForm(x), mm.ToForm(y), make([]big.Word, mm.ScratchWords())
	p, q, r := new(big.Int), new(big.Int), new(big.Int).Set(x)
	var tm, tq time.Duration
	const batch = 50
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			mm.Mul(a, a, c, s)
		}
		t1 := time.Now()
		for range batch {
			p.Mul(r, y)
			q.QuoRem(p, m, r)
		}
		tm += t1.Sub(t0)
		tq += time.Since(t1)
	}
	n := float64(b.N * batch)
	b.ReportMetric(float64(tm.Nanoseconds())/n, "ns/mont")
	b.ReportMetric(float64(tq.Nanoseconds())/n, "ns/quorem")
	b.ReportMetric(float64(tq)/float64(tm), "quorem/mont")
}
