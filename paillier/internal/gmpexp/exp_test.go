package gmpexp

import (
	"crypto/rand"
	"math/big"
	"testing"
)

func check(t *testing.T, base, exp, mod *big.Int) {
	t.Helper()
	want := new(big.Int).Exp(base, exp, mod)
	for _, f := range []struct {
		name string
		exp  func(b, e, m *big.Int) *big.Int
	}{{"Exp", Exp}, {"ExpPublic", ExpPublic}} {
		if got := f.exp(base, exp, mod); got.Cmp(want) != 0 {
			t.Fatalf("%s: %s(%x, %x, %x) = %x, want %x", Backend(), f.name, base, exp, mod, got, want)
		}
	}
}

func randOdd(t *testing.T, bits int) *big.Int {
	t.Helper()
	m, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
	if err != nil {
		t.Fatal(err)
	}
	m.SetBit(m, bits-1, 1)
	return m.SetBit(m, 0, 1)
}

func randBelow(t *testing.T, bound *big.Int) *big.Int {
	t.Helper()
	x, err := rand.Int(rand.Reader, bound)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestBackend(t *testing.T) {
	b := Backend()
	if b != "gmp" && b != "math/big" {
		t.Fatalf("Backend() = %q", b)
	}
	t.Logf("backend: %s", b)
}

func TestExpRandom(t *testing.T) {
	for _, bits := range []int{3, 63, 64, 65, 127, 128, 512, 1000, 2048, 4096} {
		for i := 0; i < 8; i++ {
			m := randOdd(t, bits)
			base := randBelow(t, m)
			eb := new(big.Int).Lsh(big.NewInt(1), uint(bits+256))
			check(t, base, randBelow(t, eb), m)
			check(t, base, randBelow(t, big.NewInt(1<<20)), m)
		}
	}
}

func TestExpEdge(t *testing.T) {
	m := randOdd(t, 1024)
	x := randBelow(t, m)
	e := randBelow(t, new(big.Int).Lsh(big.NewInt(1), 2100))
	mMinus1 := new(big.Int).Sub(m, big.NewInt(1))
	cases := []struct {
		name           string
		base, exp, mod *big.Int
	}{
		{"exp 0", x, big.NewInt(0), m},
		{"exp 1", x, big.NewInt(1), m},
		{"exp 2", x, big.NewInt(2), m},
		{"base 0", big.NewInt(0), e, m},
		{"base 0 exp 0", big.NewInt(0), big.NewInt(0), m},
		{"base 1", big.NewInt(1), e, m},
		{"base m-1", mMinus1, e, m},
		{"base m", new(big.Int).Set(m), e, m},
		{"base m+x", new(big.Int).Add(m, x), e, m},
		{"base 5m+x", new(big.Int).Add(new(big.Int).Mul(m, big.NewInt(5)), x), e, m},
		{"base much larger than m", new(big.Int).Lsh(x, 3000), e, m},
		{"base negative", new(big.Int).Neg(x), e, m},
		{"mod 1", x, e, big.NewInt(1)},
		{"mod 3", x, e, big.NewInt(3)},
		{"even mod", x, e, new(big.Int).Add(m, big.NewInt(1))},
		{"negative exp", big.NewInt(3), big.NewInt(-5), m},
		{"nil mod", big.NewInt(3), big.NewInt(100), nil},
		{"exp 2^k", x, new(big.Int).Lsh(big.NewInt(1), 4095), m},
		{"exp 2^k-1", x, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 4096), big.NewInt(1)), m},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.base, c.exp, c.mod) })
	}
}

// TestExpDoesNotModifyInputs checks that the arguments are left intact and
// the result does not alias them.
func TestExpDoesNotModifyInputs(t *testing.T) {
	m := randOdd(t, 2048)
	base := new(big.Int).Add(m, randBelow(t, m))
	exp := randBelow(t, new(big.Int).Lsh(big.NewInt(1), 4096))
	b0, e0, m0 := new(big.Int).Set(base), new(big.Int).Set(exp), new(big.Int).Set(m)
	r := Exp(base, exp, m)
	if base.Cmp(b0) != 0 || exp.Cmp(e0) != 0 || m.Cmp(m0) != 0 {
		t.Fatal("Exp modified an argument")
	}
	r.Add(r, big.NewInt(1))
	if base.Cmp(b0) != 0 || exp.Cmp(e0) != 0 || m.Cmp(m0) != 0 {
		t.Fatal("result aliases an argument")
	}
}

func benchExp(b *testing.B, exp func(b, e, m *big.Int) *big.Int, ebits int) {
	m, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 4096))
	m.SetBit(m, 4095, 1).SetBit(m, 0, 1)
	base, _ := rand.Int(rand.Reader, m)
	e, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(ebits)))
	e.SetBit(e, ebits-1, 1)
	for b.Loop() {
		exp(base, e, m)
	}
}

func bigExp(b, e, m *big.Int) *big.Int { return new(big.Int).Exp(b, e, m) }

// 4096-bit modulus (n² at |n| = 2048): a 4095-bit exponent is the
// decryption share, a 4480-bit one the proof's u^ρ and u^z.
func BenchmarkExp4096x4095(b *testing.B)       { benchExp(b, Exp, 4095) }
func BenchmarkExpPublic4096x4095(b *testing.B) { benchExp(b, ExpPublic, 4095) }
func BenchmarkBigExp4096x4095(b *testing.B)    { benchExp(b, bigExp, 4095) }
func BenchmarkExp4096x4480(b *testing.B)       { benchExp(b, Exp, 4480) }
func BenchmarkExpPublic4096x4480(b *testing.B) { benchExp(b, ExpPublic, 4480) }
func BenchmarkBigExp4096x4480(b *testing.B)    { benchExp(b, bigExp, 4480) }
