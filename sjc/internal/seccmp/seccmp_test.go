package seccmp

import (
	"bytes"
	"errors"
	"math"
	mrand "math/rand/v2"
	"testing"

	"github.com/cloudflare/circl/group"
)

// compare runs the protocol between A (x) and B (y) in one process, over
// the encodings the parties send, and returns the third party's bit.
func compare(t *testing.T, x, y uint64, delta bool) bool {
	t.Helper()
	k := GenerateKey()
	pub, err := k.Public().AppendPublic(nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := AppendCiphertexts(nil, k.EncryptBits(x, MaxBits))
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ParsePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := ParseCiphertexts(msg, MaxBits)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Evaluate(pk, xs, y, delta)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := AppendCiphertexts(nil, back)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseCiphertexts(reply, MaxBits)
	if err != nil {
		t.Fatal(err)
	}
	beta, err := k.AnyZero(cs)
	if err != nil {
		t.Fatal(err)
	}
	return Less(beta, delta)
}

func TestCompare(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	pairs := [][2]uint64{{0, 1}, {1, 0}, {2, 3}, {3, 2}, {math.MaxUint64 - 1, math.MaxUint64}, {math.MaxUint64, 0},
		{0, math.MaxUint64}, {1 << 63, 1<<63 - 1}, {1<<63 - 1, 1 << 63}}
	for range 3 {
		pairs = append(pairs, [2]uint64{r.Uint64(), r.Uint64()}, [2]uint64{r.Uint64N(1000), r.Uint64N(1000)})
	}
	for _, p := range pairs {
		if p[0] == p[1] {
			continue
		}
		for _, delta := range []bool{false, true} {
			if got, want := compare(t, p[0], p[1], delta), p[0] < p[1]; got != want {
				t.Errorf("x=%d y=%d δ=%v: [x<y] = %v, want %v", p[0], p[1], delta, got, want)
			}
		}
	}
}

// TestBetaIsTheCoinMasked: A's β alone is the tested relation, which the
// coin flips: for the same x < y, β differs with δ.
func TestBetaIsTheCoinMasked(t *testing.T) {
	k := GenerateKey()
	xs := k.EncryptBits(5, 4)
	for _, delta := range []bool{false, true} {
		cs, err := Evaluate(k.Public(), xs, 9, delta)
		if err != nil {
			t.Fatal(err)
		}
		beta, err := k.AnyZero(cs)
		if err != nil {
			t.Fatal(err)
		}
		if beta != !delta {
			t.Errorf("δ=%v: β=%v, want %v", delta, beta, !delta)
		}
	}
}

// TestBlindedValuesAreNotSmall catches a missing blinding: every value A
// decrypts is 0 or outside the small range of the c_i, [1, 3L+2], which
// an unblinded c_i would fall in (and whose position would tell A where x
// and y first differ).
func TestBlindedValuesAreNotSmall(t *testing.T) {
	k := GenerateKey()
	cs, err := Evaluate(k.Public(), k.EncryptBits(0x0123456789abcdef, MaxBits), 0x0123456789abcdee, false)
	if err != nil {
		t.Fatal(err)
	}
	small := map[string]bool{}
	for m := uint64(1); m <= 3*MaxBits+2; m++ {
		b, _ := grp.NewElement().MulGen(grp.NewScalar().SetUint64(m)).MarshalBinaryCompress()
		small[string(b)] = true
	}
	for i, c := range cs {
		m := grp.NewElement().Mul(c.C1, k.x)
		m.Neg(m).Add(m, c.C2)
		b, _ := m.MarshalBinaryCompress()
		if small[string(b)] {
			t.Fatalf("value %d decrypts to a small c_i: not blinded", i)
		}
	}
}

// TestRerandomised catches a missing re-randomisation: two evaluations of
// the same inputs share no C1 (with it, C1 = r·(Σ k_j)·G would let A, who
// knows the k_j, recover r·G).
func TestRerandomised(t *testing.T) {
	k := GenerateKey()
	xs := k.EncryptBits(77, 7)
	seen := map[string]bool{}
	for range 2 {
		cs, err := Evaluate(k.Public(), xs, 78, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			b, _ := c.C1.MarshalBinaryCompress()
			if seen[string(b)] {
				t.Fatal("a C1 repeats across evaluations")
			}
			seen[string(b)] = true
		}
	}
}

func TestMalformed(t *testing.T) {
	if _, err := ParseCiphertexts(make([]byte, 2*ElementLen*MaxBits-1), MaxBits); !errors.Is(err, ErrMalformed) {
		t.Errorf("short: %v", err)
	}
	if _, err := ParseCiphertexts(bytes.Repeat([]byte{0xff}, 2*ElementLen*MaxBits), MaxBits); !errors.Is(err, ErrMalformed) {
		t.Errorf("not elements: %v", err)
	}
	id, _ := grp.Identity().MarshalBinaryCompress()
	if _, err := ParsePublic(id); !errors.Is(err, ErrMalformed) {
		t.Errorf("identity key: %v", err)
	}
	if _, err := Evaluate(GenerateKey().Public(), nil, 1, false); !errors.Is(err, ErrMalformed) {
		t.Errorf("no bits: %v", err)
	}
	if _, err := GenerateKey().AnyZero(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("no values: %v", err)
	}
}

func FuzzParseCiphertexts(f *testing.F) {
	b, _ := AppendCiphertexts(nil, GenerateKey().EncryptBits(3, 2))
	f.Add(b, 2)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n > 1<<10 {
			return
		}
		_, _ = ParseCiphertexts(b, n)
		_, _ = ParsePublic(b)
	})
}

func BenchmarkCompare(b *testing.B) {
	k := GenerateKey()
	for b.Loop() {
		cs, err := Evaluate(k.Public(), k.EncryptBits(123456789, 46), 987654321, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := k.AnyZero(cs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestJointBitSums: three parties' key shares, a comparison bit carried
// under the joint key by XorPlain, sums with constants and a blinding:
// the joint decryption tells zero from nonzero, and no two parties' partials
// alone decrypt.
func TestJointBitSums(t *testing.T) {
	shares := []*PrivateKey{GenerateKey(), GenerateKey(), GenerateKey()}
	joint := Joint([]PublicKey{shares[0].Public(), shares[1].Public(), shares[2].Public()})
	decZero := func(c Ciphertext, who []*PrivateKey) bool {
		var ps []group.Element
		for _, k := range who {
			ps = append(ps, k.PartialOf(c.C1))
		}
		return IsZero(c.C2, ps)
	}
	for _, beta := range []bool{false, true} {
		for _, delta := range []bool{false, true} {
			bit := beta != delta
			c := joint.Rerandomize(XorPlain(joint.Encrypt(map[bool]uint64{false: 0, true: 1}[delta]), beta))
			// 1 − bit, as the later table's count adds it
			notBit := AddPlain(Neg(c), 1)
			for _, x := range []struct {
				c    Ciphertext
				zero bool
			}{{c, !bit}, {notBit, bit}, {joint.Blind(Add(c, AddPlain(joint.Encrypt(0), 0))), !bit}, {joint.Blind(AddPlain(c, 1)), false}} {
				if got := decZero(x.c, shares); got != x.zero {
					t.Errorf("β=%v δ=%v: zero %v, want %v", beta, delta, got, x.zero)
				}
			}
			if decZero(joint.Encrypt(0), shares[:2]) {
				t.Error("two of three partials decrypt E(0)")
			}
		}
	}
}
