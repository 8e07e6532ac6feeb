package secureagg

import (
	"bytes"
	"crypto/rand"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

func TestTree(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 5, 9, 17, 40} {
		for _, k := range []int{1, 2, 4} {
			ps := names(n)
			root := ps[n/2]
			last := ps[0]
			tr, err := newTree(ps, root, last, k)
			if err != nil {
				t.Fatal(err)
			}
			if tr.root() != root || tr.parent(root) != "" {
				t.Fatalf("root %q", tr.root())
			}
			if n > 1 && last != root && (len(tr.children(last)) != 0 || tr.order[n-1] != last) {
				t.Fatalf("N=%d k=%d: %s placed last has children %v", n, k, last, tr.children(last))
			}
			seen := map[string]int{}
			for _, p := range ps {
				for _, ch := range tr.children(p) {
					seen[ch]++
					if tr.parent(ch) != p {
						t.Fatalf("parent of %s is %s, not %s", ch, tr.parent(ch), p)
					}
					if tr.depth(ch) != tr.depth(p)+1 {
						t.Fatal("depth")
					}
				}
			}
			for _, p := range ps {
				if want := map[bool]int{true: 0, false: 1}[p == root]; seen[p] != want {
					t.Fatalf("N=%d k=%d: %s is a child %d times", n, k, p, seen[p])
				}
			}
			if got := tr.subtree(root); !slices.Equal(got, ps) {
				t.Fatalf("subtree(root) = %v", got)
			}
			// Balanced: height is ⌈log_k((k−1)N+1)⌉−1 for k > 1.
			if k > 1 {
				want := int(math.Ceil(math.Log(float64((k-1)*n+1))/math.Log(float64(k))-1e-9)) - 1
				if h := tr.height(root); h != want {
					t.Fatalf("N=%d k=%d: height %d, want %d", n, k, h, want)
				}
			}
		}
	}
	if _, err := newTree([]string{"a", "a"}, "a", "", 2); err == nil {
		t.Fatal("duplicate accepted")
	}
	if _, err := newTree([]string{"a"}, "b", "", 2); err == nil {
		t.Fatal("foreign root accepted")
	}
}

func TestNoiseShareSums(t *testing.T) {
	t.Parallel()
	// The sum of m shares has the target variance: 2b² for Laplace, σ² for
	// Gaussian.
	for _, nz := range []Noise{
		{Mechanism: Laplace, Epsilon: 0.5, Sensitivity: 2},
		{Mechanism: Gaussian, Epsilon: 0.5, Delta: 1e-5, Sensitivity: 1},
	} {
		rep, err := nz.plan(7)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newNoiseSampler(rep, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		const trials = 20000
		var sum2, sumAbs float64
		for range trials {
			var x float64
			for range 7 {
				x += s.sample()
			}
			sum2 += x * x
			sumAbs += math.Abs(x)
		}
		v := sum2 / trials
		want := rep.Scale * rep.Scale
		if nz.Mechanism == Laplace {
			want *= 2
			// E|Lap(b)| = b.
			if m := sumAbs / trials; math.Abs(m-rep.Scale)/rep.Scale > 0.05 {
				t.Fatalf("laplace mean |x| %v, want %v", m, rep.Scale)
			}
		}
		if math.Abs(v-want)/want > 0.08 {
			t.Fatalf("%s: variance %v, want %v", nz.Mechanism, v, want)
		}
	}
}

func TestNoisePlanRejects(t *testing.T) {
	t.Parallel()
	for _, nz := range []Noise{
		{Mechanism: Laplace, Epsilon: 0, Sensitivity: 1},
		{Mechanism: Laplace, Epsilon: 1, Sensitivity: -1},
		{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1, Delta: 0.1},
		{Mechanism: Gaussian, Epsilon: 0.5, Sensitivity: 1},
		{Mechanism: "cauchy", Epsilon: 1, Sensitivity: 1},
		{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1, Colluders: 3},
		{Mechanism: Laplace, Epsilon: math.NaN(), Sensitivity: 1},
	} {
		if _, err := nz.plan(3); err == nil {
			t.Fatalf("%+v accepted", nz)
		}
	}
}

func FuzzDecodeResult(f *testing.F) {
	ok, _ := wire.Marshal(resultBody{Plain: [][]byte{{1, 2}, {3}}, Included: []string{"a", "b"}, Excluded: map[string]string{"b": "x"},
		Noise: &NoiseReport{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1, Scale: 1, Shares: 2}})
	modulus := big.NewInt(1 << 40)
	f.Add(ok)
	miss, _ := wire.Marshal(resultBody{Missing: []string{"a"}})
	f.Add(miss)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResult(b, 2, modulus, []string{"a", "b"})
		if err != nil {
			return
		}
		if r.Error == "" && len(r.Missing) == 0 && len(r.Plain) != 2 {
			t.Fatal("accepted a sum of the wrong length")
		}
		for _, p := range r.Plain {
			if new(big.Int).SetBytes(p).Cmp(modulus) >= 0 {
				t.Fatal("accepted a plaintext out of range")
			}
		}
		_, _ = DecodeOutcome(b)
	})
}

func FuzzDecodeCiphertexts(f *testing.F) {
	c := testConsortium(f, 3)
	cts, err := c.pk.EncryptMany(rand.Reader, bigs(1, 2))
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := c.pk.MarshalCiphertexts(cts)
	ok, _ := wire.Marshal(ciphertextBody{Shape: "s", Ciphertexts: raw})
	f.Add(ok)
	miss, _ := wire.Marshal(ciphertextBody{Missing: []string{"org02"}})
	f.Add(miss)
	f.Add(raw)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, missing, err := decodeCiphertexts(b, &c.pk.PublicKey, "s", 2, []string{"org02", "org03"})
		if err != nil {
			return
		}
		if len(missing) == 0 && len(got) != 2 {
			t.Fatal("accepted the wrong number of ciphertexts")
		}
		n2 := new(bigInt).Mul(c.pk.N, c.pk.N)
		for _, ct := range got {
			if ct.C.Sign() <= 0 || ct.C.Cmp(n2) >= 0 {
				t.Fatal("accepted a ciphertext out of range")
			}
		}
	})
}

func FuzzDecodeShare(f *testing.F) {
	c := testConsortium(f, 3)
	cts, err := c.pk.EncryptMany(rand.Reader, bigs(1, 2))
	if err != nil {
		f.Fatal(err)
	}
	sh, err := c.keys["org02"].Share.DecryptShare(rand.Reader, cts, paillierCtx())
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := sh.MarshalBinary()
	ok, _ := wire.Marshal(shareBody{Share: raw})
	f.Add(ok)
	f.Add(raw)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeShare(b, c.pk, 2, 2)
		if err != nil {
			return
		}
		if got.Index != 2 || len(got.Values) != 2 {
			t.Fatal("accepted a share of the wrong shape")
		}
		if !bytes.Equal(b, ok) {
			// A modified share may decode, but must not verify.
			if c.pk.VerifyShare(cts, got, paillierCtx()) == nil {
				t.Fatal("a modified share verified")
			}
		}
	})
}
