package mpc

import (
	"fmt"
	"io"
)

// Shamir's scheme (Shamir, "How to Share a Secret", CACM 1979) of
// degree t over GF(p): a secret s is f(0) of a random polynomial f of
// degree t, and party i (index 0..n-1) holds f(i+1). Any t+1 shares
// determine s; any t are uniform and independent of it.

// share returns the n shares f(1..n) of secret s under a polynomial of
// degree t whose other coefficients are coef (len(coef) = t, uniform).
func share(s Elem, coef []Elem, n int) []Elem {
	out := make([]Elem, n)
	for i := range out {
		x := NewElem(uint64(i + 1))
		// Horner: f(x) = s + x (c1 + x (c2 + ... + x ct)).
		var acc Elem
		for j := len(coef) - 1; j >= 0; j-- {
			acc = acc.Add(coef[j]).Mul(x)
		}
		out[i] = acc.Add(s)
	}
	return out
}

// shareVec shares every element of v with degree t among n parties,
// drawing the coefficients from r in one read; out[j] is party j's
// vector of shares.
func shareVec(r io.Reader, v []Elem, t, n int) ([][]Elem, error) {
	coef, err := randElems(r, len(v)*t)
	if err != nil {
		return nil, err
	}
	out := make([][]Elem, n)
	for j := range out {
		out[j] = make([]Elem, len(v))
	}
	for i, s := range v {
		sh := share(s, coef[i*t:(i+1)*t], n)
		for j := range out {
			out[j][i] = sh[j]
		}
	}
	return out, nil
}

// lagrangeAt0 returns the coefficients λ_i, i = 1..m, with
// f(0) = Σ λ_i f(i) for every f of degree < m:
// λ_i = Π_{j≠i} j / (j - i).
func lagrangeAt0(m int) []Elem {
	lam := make([]Elem, m)
	for i := 1; i <= m; i++ {
		num, den := NewElem(1), NewElem(1)
		for j := 1; j <= m; j++ {
			if j == i {
				continue
			}
			num = num.Mul(NewElem(uint64(j)))
			den = den.Mul(FromInt(int64(j - i)))
		}
		lam[i-1] = num.Mul(den.Inv())
	}
	return lam
}

// combine returns Σ λ_i sh[i][k] for every position k: the secrets
// behind the shares of parties 1..len(lam). Every sh[i] must have
// length m.
func combine(lam []Elem, sh [][]Elem, m int) []Elem {
	out := make([]Elem, m)
	for i, l := range lam {
		for k := range out {
			out[k] = out[k].Add(l.Mul(sh[i][k]))
		}
	}
	return out
}

// Reconstruct returns the secrets behind the shares of parties 0..t
// (points 1..t+1) under degree-t sharing: sh[i] is party i's vector. It
// is what Open does with what it receives; tests use it on shares they
// gathered themselves.
func Reconstruct(sh [][]Elem, t int) ([]Elem, error) {
	if len(sh) < t+1 {
		return nil, fmt.Errorf("mpc: reconstruct: %d share vectors, want %d", len(sh), t+1)
	}
	m := len(sh[0])
	for i := range t + 1 {
		if len(sh[i]) != m {
			return nil, fmt.Errorf("mpc: reconstruct: party %d: %d shares, want %d", i, len(sh[i]), m)
		}
	}
	return combine(lagrangeAt0(t+1), sh[:t+1], m), nil
}
