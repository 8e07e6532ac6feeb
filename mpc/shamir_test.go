package mpc

import "testing"

// configs are the (n, t) pairs every protocol test runs with.
var configs = []struct{ n, t int }{{3, 1}, {5, 2}}

// reveal reconstructs secrets from every party's shares (sh[i] is
// party i's vector), using all of them: it checks that the shares of
// every t+1 consecutive parties agree, so a wrong degree shows.
func reveal(t *testing.T, sh [][]Elem, th int) []Elem {
	t.Helper()
	want, err := Reconstruct(sh, th)
	if err != nil {
		t.Fatal(err)
	}
	for start := 1; start+th < len(sh); start++ {
		got := reconstructAt(sh, start, th)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("shares of parties %d..%d give another secret at %d", start, start+th, i)
			}
		}
	}
	return want
}

// reconstructAt interpolates at 0 from the shares of parties
// start..start+t (points start+1..start+t+1).
func reconstructAt(sh [][]Elem, start, th int) []Elem {
	out := make([]Elem, len(sh[0]))
	for a := start; a <= start+th; a++ {
		num, den := NewElem(1), NewElem(1)
		for b := start; b <= start+th; b++ {
			if b == a {
				continue
			}
			num = num.Mul(NewElem(uint64(b + 1)))
			den = den.Mul(FromInt(int64(b - a)))
		}
		l := num.Mul(den.Inv())
		for k := range out {
			out[k] = out[k].Add(l.Mul(sh[a][k]))
		}
	}
	return out
}
