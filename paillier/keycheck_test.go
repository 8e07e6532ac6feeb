package paillier

import (
	"crypto/rand"
	"errors"
	"math/big"
	"testing"
)

// withProductionSizes runs f with the test-size opt-in switched off, as in a
// production binary.
func withProductionSizes(f func()) {
	prev := testKeySizes.Swap(false)
	defer testKeySizes.Store(prev)
	f()
}

func TestKeySizePolicy(t *testing.T) {
	_, _, sk := testKeys(t)
	pb, err := sk.PublicKey.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, bits := range []int{2048, 3072, 4096} {
		if !acceptedBits(bits) {
			t.Errorf("%d bits refused", bits)
		}
	}
	for _, bits := range []int{0, 511, 2049, 2050, 3000, 4097, 6144, 8192} {
		if acceptedBits(bits) {
			t.Errorf("%d bits accepted", bits)
		}
	}
	withProductionSizes(func() {
		for _, bits := range []int{512, 1024, 1536, 2047} {
			if acceptedBits(bits) {
				t.Errorf("%d bits accepted without the test opt-in", bits)
			}
		}
		if _, err := GenerateKey(rand.Reader, testBits); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("GenerateKey(%d) without opt-in: %v", testBits, err)
		}
		if _, _, err := DealThreshold(rand.Reader, testBits, 3, 1); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("DealThreshold(%d) without opt-in: %v", testBits, err)
		}
		if _, err := UnmarshalPublicKey(pb); !errors.Is(err, ErrInvalidKey) || !errors.Is(err, ErrDecode) {
			t.Errorf("512-bit key decoded without opt-in: %v", err)
		}
	})
	if _, err := UnmarshalPublicKey(pb); err != nil {
		t.Fatalf("512-bit key refused with the opt-in: %v", err)
	}
}

// forgedPublicKey encodes a public key with arbitrary n and H, bypassing
// every constructor check, as an attacker would.
func forgedPublicKey(t *testing.T, n, h *big.Int) []byte {
	t.Helper()
	ns1 := new(big.Int).Mul(n, n)
	b, err := (&PublicKey{N: n, S: 1, NS: n, NS1: ns1, H: h}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustPrime(t *testing.T, bits int) *big.Int {
	t.Helper()
	p, err := rand.Prime(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecodeRefusesDegenerateModulus: moduli with a small factor, perfect
// powers and primes were accepted by UnmarshalPublicKey (only primality was
// checked); anyone can factor them and decrypt.
func TestDecodeRefusesDegenerateModulus(t *testing.T) {
	q := mustPrime(t, testBits-1)
	p := mustPrime(t, testBits/2)
	p3 := mustPrime(t, testBits/3+1)
	cases := map[string]*big.Int{
		"3·q":        new(big.Int).Mul(big.NewInt(3), q),
		"65537·q":    new(big.Int).Mul(big.NewInt(65537), mustPrime(t, testBits-16)),
		"262139·q":   new(big.Int).Mul(big.NewInt(262139), mustPrime(t, testBits-17)), // largest prime below 2^18
		"p²":         new(big.Int).Mul(p, p),
		"p³":         new(big.Int).Exp(p3, big.NewInt(3), nil),
		"prime":      mustPrime(t, testBits),
		"even":       new(big.Int).Lsh(q, 1),
		"2050 bits":  new(big.Int).Mul(mustPrime(t, 1025), mustPrime(t, 1025)),
		"below 512":  new(big.Int).Mul(mustPrime(t, 200), mustPrime(t, 200)),
		"above 4096": new(big.Int).Add(new(big.Int).Lsh(one, 4100), big.NewInt(1)),
	}
	for name, n := range cases {
		_, err := UnmarshalPublicKey(forgedPublicKey(t, n, big.NewInt(2)))
		if name == "above 4096" {
			// Longer than any accepted modulus: refused while decoding n.
			if !errors.Is(err, ErrDecode) {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidKey) || !errors.Is(err, ErrDecode) {
			t.Errorf("%s: accepted or wrong error: %v", name, err)
		}
		if _, err := NewPublicKey(rand.Reader, n, 1, nil); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s: NewPublicKey accepted it: %v", name, err)
		}
	}
	// A test size (1280 bits) is refused by a production binary.
	n1280 := new(big.Int).Mul(mustPrime(t, 640), mustPrime(t, 640))
	withProductionSizes(func() {
		if _, err := UnmarshalPublicKey(forgedPublicKey(t, n1280, big.NewInt(2))); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("1280-bit modulus in production: %v", err)
		}
	})
	// The sieve and perfect-power checks leave honest moduli alone.
	for i := 0; i < 5; i++ {
		n := new(big.Int).Mul(mustPrime(t, testBits/2), mustPrime(t, testBits/2))
		if n.BitLen() != testBits {
			continue
		}
		if err := checkModulus(n); err != nil {
			t.Fatalf("honest modulus refused: %v", err)
		}
	}
}

func TestIroot(t *testing.T) {
	for _, k := range []int{2, 3, 5, 7, 13, 29, 113} {
		for i := 0; i < 20; i++ {
			r, _ := rand.Int(rand.Reader, new(big.Int).Lsh(one, uint(1+(i*4096/k)/20)))
			r.Add(r, big.NewInt(2))
			n := new(big.Int).Exp(r, big.NewInt(int64(k)), nil)
			for _, d := range []int64{-1, 0, 1} {
				m := new(big.Int).Add(n, big.NewInt(d))
				want := new(big.Int).Set(r)
				if d < 0 {
					want.Sub(want, one)
				}
				if got := iroot(m, k); got.Cmp(want) != 0 {
					t.Fatalf("iroot(%v^%d%+d) = %v, want %v", r, k, d, got, want)
				}
			}
		}
	}
}

// TestDecodeRefusesDegenerateBase: H = 1 was accepted, and then every
// ciphertext (1+n)^m·1^r reveals m as (c−1)/n to anyone.
func TestDecodeRefusesDegenerateBase(t *testing.T) {
	_, _, sk := testKeys(t)
	n, ns1 := sk.N, sk.NS1

	// The attack the check prevents.
	weak := sk.PublicKey
	weak.H = big.NewInt(1)
	m := randPlain(t, &weak)
	c := mustEnc(t, &weak, m)
	leak := new(big.Int).Sub(c.C, one)
	if leak.Quo(leak, n).Cmp(m) != 0 {
		t.Fatal("H = 1 should leak the plaintext")
	}

	// An element of order 2: 1 modulo p², −1 modulo q² (CRT).
	p2 := new(big.Int).Mul(sk.P, sk.P)
	q2 := new(big.Int).Mul(sk.Q, sk.Q)
	q2InvP2 := new(big.Int).ModInverse(q2, p2)
	order2 := crt(big.NewInt(1), new(big.Int).Sub(q2, one), p2, q2, q2InvP2)
	cases := map[string]*big.Int{
		"1":       big.NewInt(1),
		"−1":      new(big.Int).Sub(ns1, one),
		"0":       big.NewInt(0),
		"p":       new(big.Int).Set(sk.P),
		"order 2": order2,
		"n^(s+1)": new(big.Int).Set(ns1),
	}
	for name, h := range cases {
		b := forgedPublicKey(t, n, h)
		if _, err := UnmarshalPublicKey(b); err == nil {
			t.Errorf("H = %s accepted", name)
		}
		if h.Sign() > 0 && h.Cmp(ns1) < 0 {
			if _, err := NewPublicKey(nil, n, 1, h); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("NewPublicKey with H = %s: %v", name, err)
			}
		}
	}
	if _, err := UnmarshalPublicKey(forgedPublicKey(t, n, sk.H)); err != nil {
		t.Fatalf("honest H refused: %v", err)
	}
}

// forgeThreshold returns a copy of tpk changed by f, with the key id
// recomputed (the attacker controls the whole encoding).
func forgeThreshold(tpk *ThresholdPublicKey, f func(k *ThresholdPublicKey)) *ThresholdPublicKey {
	k := *tpk
	k.VerificationKeys = make([]*big.Int, len(tpk.VerificationKeys))
	for i, vk := range tpk.VerificationKeys {
		k.VerificationKeys[i] = new(big.Int).Set(vk)
	}
	k.V = new(big.Int).Set(tpk.V)
	f(&k)
	k.KeyID = k.computeKeyID()
	return &k
}

// TestDecodeRefusesDegenerateThresholdKey: V = 1 with v_i = 1 was accepted,
// and then a "share" computed from any secret passes VerifyShare.
func TestDecodeRefusesDegenerateThresholdKey(t *testing.T) {
	tpk, _, _ := testKeys(t)
	ones := forgeThreshold(tpk, func(k *ThresholdPublicKey) {
		k.V = big.NewInt(1)
		for i := range k.VerificationKeys {
			k.VerificationKeys[i] = big.NewInt(1)
		}
	})
	// The attack the check prevents: a share from a random secret verifies
	// under the forged key.
	x, _ := rand.Int(rand.Reader, new(big.Int).Rsh(tpk.NS1, 2))
	cheat := &KeyShare{Index: 1, Secret: x.Add(x, one), Public: ones}
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, big.NewInt(7))}
	d, err := cheat.DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ones.VerifyShare(cs, d, testCtx); err != nil {
		t.Fatalf("the forged key should accept any share: %v", err)
	}

	minus := func(x *big.Int) *big.Int { return new(big.Int).Sub(tpk.NS1, x) }
	var nonSquare *big.Int
	for nonSquare == nil {
		r, _ := rand.Int(rand.Reader, tpk.NS1)
		if big.Jacobi(new(big.Int).Mod(r, tpk.N), tpk.N) == -1 {
			nonSquare = r
		}
	}
	cases := map[string]*ThresholdPublicKey{
		"V = 1, v_i = 1": ones,
		"V = 1":          forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.V = big.NewInt(1) }),
		"V = −1":         forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.V = minus(one) }),
		"v_1 = 1":        forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.VerificationKeys[0] = big.NewInt(1) }),
		"v_3 = −1":       forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.VerificationKeys[2] = minus(one) }),
		"v_2 = v_1":      forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.VerificationKeys[1] = k.VerificationKeys[0] }),
		"v_5 = V":        forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.VerificationKeys[4] = k.V }),
		"v_2 non-square": forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.VerificationKeys[1] = nonSquare }),
		"V non-square":   forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.V = nonSquare }),
		"H = 1":          forgeThreshold(tpk, func(k *ThresholdPublicKey) { k.H = big.NewInt(1) }),
	}
	for name, k := range cases {
		b, err := k.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := UnmarshalThresholdPublicKey(b); !errors.Is(err, ErrInvalidKey) || !errors.Is(err, ErrDecode) {
			t.Errorf("%s: decoded or wrong error: %v", name, err)
		}
		if err := k.Check(); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s: Check: %v", name, err)
		}
		// A key share cannot smuggle the forged key in either.
		ks := &KeyShare{Index: 1, Secret: big.NewInt(1), Public: k}
		if kb, err := ks.MarshalBinary(); err == nil {
			if _, err := UnmarshalKeyShare(kb); err == nil {
				t.Errorf("%s: key share decoded", name)
			}
		}
	}
	if err := tpk.Check(); err != nil {
		t.Fatalf("honest key refused: %v", err)
	}
}
