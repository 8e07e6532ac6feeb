package secureagg

import (
	"crypto/rand"
	"math"
	"testing"
)

// TestExponentialSharesSumToExponential: the shares of three parties sum
// to Exp(scale): mean scale, variance scale², and the median scale·ln 2;
// a single party's shares (Gamma(1/3)) have a third of the mean. A share
// sized for the wrong number of parties fails the mean by a factor.
func TestExponentialSharesSumToExponential(t *testing.T) {
	const n, honest, scale = 40000, 3, 2.5
	var parts [honest][]float64
	for i := range parts {
		var err error
		if parts[i], err = ExponentialShares(rand.Reader, n, scale, honest); err != nil {
			t.Fatal(err)
		}
	}
	var sum, sq, one float64
	below := 0
	for j := range n {
		x := parts[0][j] + parts[1][j] + parts[2][j]
		sum += x
		sq += x * x
		one += parts[0][j]
		if x <= scale*math.Ln2 {
			below++
		}
	}
	mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
	if math.Abs(mean-scale) > 0.03*scale || math.Abs(variance-scale*scale) > 0.08*scale*scale {
		t.Fatalf("sum of %d parties' shares: mean %.3f variance %.3f, want %v and %v", honest, mean, variance, scale, scale*scale)
	}
	if f := float64(below) / n; math.Abs(f-0.5) > 0.015 {
		t.Fatalf("P(sum ≤ scale·ln 2) = %.3f, want 0.5", f)
	}
	if m := one / n; math.Abs(m-scale/honest) > 0.05*scale/honest {
		t.Fatalf("one party's shares: mean %.3f, want %.3f", m, scale/honest)
	}
	if _, err := ExponentialShares(rand.Reader, 1, 0, honest); err == nil {
		t.Fatal("a zero scale was accepted")
	}
}
