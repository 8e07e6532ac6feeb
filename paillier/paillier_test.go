package paillier

import (
	"crypto/rand"
	"errors"
	"math/big"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	_, _, sk := testKeys(t)
	for _, key := range []*PrivateKey{sk, testSK2} {
		for _, short := range []bool{false, true} {
			pk := key.PublicKey
			pk.ShortExponent = short
			for i := 0; i < 20; i++ {
				m := randPlain(t, &pk)
				if i == 0 {
					m.SetInt64(0)
				}
				if i == 1 {
					m.Sub(pk.NS, one)
				}
				c := mustEnc(t, &pk, m)
				got, err := key.Decrypt(c)
				if err != nil || got.Cmp(m) != 0 {
					t.Fatalf("s=%d short=%v: got %v, %v; want %v", pk.S, short, got, err, m)
				}
			}
		}
	}
}

func TestEncryptRejectsOutOfRange(t *testing.T) {
	_, _, sk := testKeys(t)
	for _, m := range []*big.Int{big.NewInt(-1), sk.PlaintextModulus()} {
		if _, err := sk.Encrypt(rand.Reader, m); !errors.Is(err, ErrOverflow) {
			t.Fatalf("Encrypt(%v) = %v, want ErrOverflow", m, err)
		}
	}
	if _, err := sk.Decrypt(&Ciphertext{C: new(big.Int).Set(sk.NS1)}); !errors.Is(err, ErrInvalidCiphertext) {
		t.Fatalf("Decrypt(n^2) = %v", err)
	}
	if _, err := sk.Decrypt(&Ciphertext{C: new(big.Int).Set(sk.N)}); !errors.Is(err, ErrInvalidCiphertext) {
		t.Fatalf("Decrypt(n) = %v", err)
	}
}

func TestEncryptMany(t *testing.T) {
	_, _, sk := testKeys(t)
	ms := make([]*big.Int, 37)
	for i := range ms {
		ms[i] = randPlain(t, &sk.PublicKey)
	}
	cs, err := sk.EncryptMany(rand.Reader, ms)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		got, err := sk.Decrypt(c)
		if err != nil || got.Cmp(ms[i]) != 0 {
			t.Fatalf("%d: got %v %v", i, got, err)
		}
	}
}

// TestTextbookKnownAnswer checks that our fixed-base ciphertexts and the
// textbook form (1+n)^m·r^(n^s) mod n^(s+1), computed here with plain
// exponentiations independently of the package code, decrypt alike, and that
// a literal PublicKey{N: n} uses the textbook form.
func TestTextbookKnownAnswer(t *testing.T) {
	_, _, sk := testKeys(t)
	for _, key := range []*PrivateKey{sk, testSK2} {
		n, s := key.N, key.S
		ns := new(big.Int).Exp(n, big.NewInt(int64(s)), nil)
		ns1 := new(big.Int).Mul(ns, n)
		m := big.NewInt(0x1234567890)
		r := big.NewInt(0xdeadbeef)
		c := new(big.Int).Exp(new(big.Int).Add(n, one), m, ns1)
		c.Mul(c, new(big.Int).Exp(r, ns, ns1))
		c.Mod(c, ns1)
		got, err := key.Decrypt(&Ciphertext{C: c})
		if err != nil || got.Cmp(m) != 0 {
			t.Fatalf("s=%d textbook ciphertext decrypts to %v %v", s, got, err)
		}
		// gPow against plain exponentiation.
		for _, e := range []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(77), new(big.Int).Sub(ns, one)} {
			want := new(big.Int).Exp(new(big.Int).Add(n, one), e, ns1)
			if key.gPow(e).Cmp(want) != 0 {
				t.Fatalf("gPow(%v) wrong for s=%d", e, s)
			}
		}
		lit := &PublicKey{N: n, S: s}
		c2 := mustEnc(t, lit, m)
		if got, _ := key.Decrypt(c2); got.Cmp(m) != 0 {
			t.Fatal("literal public key encryption broken")
		}
	}
}

func TestHomomorphic(t *testing.T) {
	_, _, sk := testKeys(t)
	for _, key := range []*PrivateKey{sk, testSK2} {
		pk := &key.PublicKey
		ns := pk.NS
		dec := func(c *Ciphertext) *big.Int {
			m, err := key.Decrypt(c)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		mod := func(x *big.Int) *big.Int { return x.Mod(x, ns) }
		for i := 0; i < 10; i++ {
			a, b := randPlain(t, pk), randPlain(t, pk)
			k, _ := rand.Int(rand.Reader, ns)
			if i%2 == 1 {
				k.Neg(k)
			}
			ca, cb := mustEnc(t, pk, a), mustEnc(t, pk, b)
			if got := dec(pk.Add(ca, cb)); got.Cmp(mod(new(big.Int).Add(a, b))) != 0 {
				t.Fatal("Add")
			}
			if got := dec(pk.Sub(ca, cb)); got.Cmp(mod(new(big.Int).Sub(a, b))) != 0 {
				t.Fatal("Sub")
			}
			if got := dec(pk.AddPlain(ca, k)); got.Cmp(mod(new(big.Int).Add(a, k))) != 0 {
				t.Fatal("AddPlain")
			}
			if got := dec(pk.MulPlain(ca, k)); got.Cmp(mod(new(big.Int).Mul(a, k))) != 0 {
				t.Fatal("MulPlain")
			}
			if got := dec(pk.Neg(ca)); got.Cmp(mod(new(big.Int).Neg(a))) != 0 {
				t.Fatal("Neg")
			}
			rc, err := pk.Rerandomize(rand.Reader, ca)
			if err != nil || rc.C.Cmp(ca.C) == 0 || dec(rc).Cmp(a) != 0 {
				t.Fatal("Rerandomize")
			}
		}
	}
}

func TestSigned(t *testing.T) {
	_, _, sk := testKeys(t)
	for _, v := range []int64{0, 1, -1, 1 << 40, -(1 << 40)} {
		m, err := sk.EncodeSigned(big.NewInt(v))
		if err != nil {
			t.Fatal(err)
		}
		c := sk.Add(mustEnc(t, &sk.PublicKey, m), mustEnc(t, &sk.PublicKey, m))
		got, _ := sk.Decrypt(c)
		if sk.DecodeSigned(got).Int64() != 2*v {
			t.Fatalf("signed %d", v)
		}
	}
	if _, err := sk.EncodeSigned(sk.NS); !errors.Is(err, ErrOverflow) {
		t.Fatal("EncodeSigned(n^s) accepted")
	}
}

func TestGenerateKeySizes(t *testing.T) {
	for _, bits := range []int{512, 768} {
		sk, err := GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		if sk.N.BitLen() != bits || sk.CiphertextSize() != bits/4 {
			t.Fatalf("bits %d: n has %d bits, ciphertext %d bytes", bits, sk.N.BitLen(), sk.CiphertextSize())
		}
	}
	if _, err := GenerateKey(rand.Reader, 100); !errors.Is(err, ErrInvalidKey) {
		t.Fatal("tiny key accepted")
	}
}

func TestSafePrime(t *testing.T) {
	for _, bits := range []int{64, 128, 256} {
		p, err := GenerateSafePrime(t.Context(), rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		q := new(big.Int).Rsh(p, 1)
		if p.BitLen() != bits || p.Bit(bits-2) != 1 || !p.ProbablyPrime(20) || !q.ProbablyPrime(20) {
			t.Fatalf("bad safe prime %v", p)
		}
	}
}

func TestModWord(t *testing.T) {
	x, _ := rand.Int(rand.Reader, new(big.Int).Lsh(one, 1000))
	for _, r := range smallPrimes()[:2000] {
		if modWord(x, r) != new(big.Int).Mod(x, big.NewInt(int64(r))).Uint64() {
			t.Fatalf("modWord %d", r)
		}
	}
}

func TestFixedBase(t *testing.T) {
	_, _, sk := testKeys(t)
	fb := newFixedBase(sk.H, sk.NS1, 200, 5)
	allOnes := new(big.Int).Sub(new(big.Int).Lsh(one, 200), one) // every window at the table's last element
	for _, e := range []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(31), big.NewInt(32), new(big.Int).Lsh(one, 199), allOnes, new(big.Int).Lsh(one, 300)} {
		if fb.exp(e).Cmp(new(big.Int).Exp(sk.H, e, sk.NS1)) != 0 {
			t.Fatalf("fixed base %v", e)
		}
	}
	for i := 0; i < 50; i++ {
		e, _ := rand.Int(rand.Reader, new(big.Int).Lsh(one, 200))
		if fb.exp(e).Cmp(new(big.Int).Exp(sk.H, e, sk.NS1)) != 0 {
			t.Fatalf("fixed base %v", e)
		}
	}
}

func TestMultiExp(t *testing.T) {
	_, _, sk := testKeys(t)
	m := sk.NS1
	for k := 1; k <= 5; k++ {
		bases := make([]*big.Int, k)
		exps := make([]*big.Int, k)
		want := big.NewInt(1)
		for j := range bases {
			bases[j], _ = rand.Int(rand.Reader, m)
			exps[j], _ = rand.Int(rand.Reader, new(big.Int).Lsh(one, uint(1+j*70)))
			want.Mul(want, new(big.Int).Exp(bases[j], exps[j], m))
			want.Mod(want, m)
		}
		if multiExp(bases, exps, m).Cmp(want) != 0 {
			t.Fatalf("multiExp k=%d", k)
		}
	}
}
