package dealerless

import (
	"crypto/rand"
	"math/big"
	"testing"
)

// TestDealInterpolate: every party's shares, seeded or explicit, lie on one
// polynomial of the dealt degree whose value at 0 is the secret, and any
// deg+1 of them recover it.
func TestDealInterpolate(t *testing.T) {
	r := newRing(300)
	for _, n := range []int{3, 4, 5, 7} {
		for _, deg := range []int{(n - 1) / 2, 2 * ((n - 1) / 2)} {
			seeds := make([][][]byte, n+1) // seeds[i][k-1]: party i's seed with k
			for i := 1; i <= n; i++ {
				seeds[i] = make([][]byte, n)
			}
			for i := 1; i <= n; i++ {
				for k := i + 1; k <= n; k++ {
					s := make([]byte, 32)
					_, _ = rand.Read(s)
					seeds[i][k-1], seeds[k][i-1] = s, s
				}
			}
			shs := make([]*sharing, n+1)
			for i := 1; i <= n; i++ {
				shs[i] = newSharing(r, n, i, seeds[i])
			}
			secret, _ := rand.Int(rand.Reader, r.P)
			dealer := 2
			dealt := shs[dealer].deal("x", []*big.Int{secret}, deg)
			got := make([]*big.Int, n)
			for j := 1; j <= n; j++ {
				if shs[dealer].isSeeded(dealer, deg, j) {
					got[j-1] = shs[j].seededShares("x", dealer, 1)[0]
					if got[j-1].Cmp(dealt[j-1][0]) != 0 {
						t.Fatalf("n=%d deg=%d: party %d's seeded share differs from the dealer's", n, deg, j)
					}
				} else {
					got[j-1] = dealt[j-1][0]
				}
			}
			if s := shs[1].interpolate(got, deg); s.Cmp(secret) != 0 {
				t.Fatalf("n=%d deg=%d: interpolated %v, want %v", n, deg, s, secret)
			}
			// The shares of parties 2..deg+2 give the same value.
			if deg+2 <= n {
				xs := make([]int, deg+1)
				for i := range xs {
					xs[i] = i + 2
				}
				c := shs[1].lagrangeAt(xs, 0)
				acc := new(big.Int)
				for i, x := range xs {
					acc.Add(acc, new(big.Int).Mul(c[i], got[x-1]))
				}
				if r.mod(acc).Cmp(secret) != 0 {
					t.Fatalf("n=%d deg=%d: shares are not on one polynomial of degree %d", n, deg, deg)
				}
			}
		}
	}
}

// TestTrialDivision: moduli with a prime factor below 2^18 fail, a product
// of two large primes passes, and filter agrees with passes on a batch.
func TestTrialDivision(t *testing.T) {
	td := newTrialDivider()
	p, _ := rand.Prime(rand.Reader, 256)
	q, _ := rand.Prime(rand.Reader, 256)
	if !td.passes(new(big.Int).Mul(p, q)) {
		t.Fatal("a product of two 256-bit primes failed")
	}
	batch := []*big.Int{new(big.Int).Mul(p, q)}
	want := []bool{true}
	for _, small := range []int64{3, 5, 4093, 4099, 65537, 262139} {
		n := new(big.Int).Mul(p, big.NewInt(small))
		if td.passes(n) {
			t.Fatalf("%d·p passed", small)
		}
		batch, want = append(batch, n), append(want, false)
	}
	n := new(big.Int).Mul(p, big.NewInt(262147)) // the first prime above 2^18
	if !td.passes(n) {
		t.Fatal("262147·p failed: the bound is 2^18")
	}
	batch, want = append(batch, n), append(want, true)
	for range 40 { // random odd moduli: the two tests must agree
		x, _ := rand.Int(rand.Reader, pow2(512))
		x.SetBit(x, 0, 1)
		batch, want = append(batch, x), append(want, td.passes(x))
	}
	got := td.filter(batch)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("filter[%d] = %v, passes = %v", i, got[i], want[i])
		}
	}
}
