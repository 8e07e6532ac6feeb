package lattice

import (
	"errors"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// The moduli are what the package doc says: Lattigo's NTT-friendly prime
// generator (primes ≡ 1 mod 2^14) gives the three largest below 2^60 and
// the largest below 2^58; log Q is within the 218 bits the homomorphic
// encryption standard allows at degree 2^13 for 128-bit security.
func TestParamsPrimes(t *testing.T) {
	gq := ring.NewNTTFriendlyPrimesGenerator(60, 1<<14)
	q, err := gq.NextDownstreamPrimes(3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q, paramsQ) {
		t.Fatalf("Q primes %x, generator gives %x", paramsQ, q)
	}
	gt := ring.NewNTTFriendlyPrimesGenerator(58, 1<<14)
	tp, err := gt.NextDownstreamPrime()
	if err != nil {
		t.Fatal(err)
	}
	if tp != paramsT {
		t.Fatalf("T = %x, generator gives %x", paramsT, tp)
	}
	p := params(t)
	if p.LogQ() > 218 || p.Slots() != 1<<13 {
		t.Fatalf("log Q = %.1f, N = %d", p.LogQ(), p.Slots())
	}
	t.Logf("log Q = %.2f, log T = %.2f, ciphertext %d bytes", p.LogQ(), 57.99, p.CiphertextBytes())
}

// The noise budget holds for MaxMembers and fails for four times as many,
// so the bound is checked, not assumed; unknown sets are refused.
func TestParamsBudget(t *testing.T) {
	p := params(t)
	if err := p.checkBudget(MaxMembers); err != nil {
		t.Fatal(err)
	}
	if err := p.checkBudget(4 * MaxMembers); !errors.Is(err, ErrParams) {
		t.Fatalf("budget for %d members: %v", 4*MaxMembers, err)
	}
	if _, err := NewParams("bgv-other"); !errors.Is(err, ErrParams) {
		t.Fatal(err)
	}
}
