package coherence

import (
	"errors"
	"math/big"
	"math/bits"
)

// Count is an exact count of itemsets, up to 2^128 - 1: a border of a few
// edges can represent astronomically many (Xu reports 52,218,553,280
// nuggets of Connect on 110,505 edges).
type Count struct{ hi, lo uint64 }

// ErrOverflow means a count passed 2^128 - 1: the border represents more
// itemsets than this package counts (lower p or p').
var ErrOverflow = errors.New("coherence: more than 2^128 itemsets to count")

// CountOf returns n as a Count.
func CountOf(n uint64) Count { return Count{lo: n} }

// add returns c + d, setting *over when it overflows.
func (c Count) add(d Count, over *bool) Count {
	lo, carry := bits.Add64(c.lo, d.lo, 0)
	hi, carry := bits.Add64(c.hi, d.hi, carry)
	if carry != 0 {
		*over = true
	}
	return Count{hi, lo}
}

// sub returns c - d; d must not exceed c.
func (c Count) sub(d Count) Count {
	lo, borrow := bits.Sub64(c.lo, d.lo, 0)
	hi, _ := bits.Sub64(c.hi, d.hi, borrow)
	return Count{hi, lo}
}

// Cmp compares c with d.
func (c Count) Cmp(d Count) int {
	switch {
	case c.hi != d.hi:
		if c.hi < d.hi {
			return -1
		}
		return 1
	case c.lo != d.lo:
		if c.lo < d.lo {
			return -1
		}
		return 1
	}
	return 0
}

// IsZero reports whether c is 0.
func (c Count) IsZero() bool { return c.hi == 0 && c.lo == 0 }

// Big returns c as a big.Int.
func (c Count) Big() *big.Int {
	b := new(big.Int).SetUint64(c.hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(c.lo))
}

// Float returns c rounded to a float64.
func (c Count) Float() float64 { return float64(c.hi)*0x1p64 + float64(c.lo) }

// String is c in decimal.
func (c Count) String() string { return c.Big().String() }

// MarshalJSON writes c as a JSON number.
func (c Count) MarshalJSON() ([]byte, error) { return []byte(c.String()), nil }

// cmpCountRatio compares a/b with c/d exactly, x/0 being infinite (and
// equal to any other infinity).
func cmpCountRatio(a, b, c, d Count) int {
	switch {
	case b.IsZero() && d.IsZero():
		return 0
	case b.IsZero():
		return 1
	case d.IsZero():
		return -1
	}
	if a.hi == 0 && b.hi == 0 && c.hi == 0 && d.hi == 0 {
		return cmpRatio(a.lo, b.lo, c.lo, d.lo)
	}
	x := new(big.Int).Mul(a.Big(), d.Big())
	return x.Cmp(new(big.Int).Mul(c.Big(), b.Big()))
}

// binomials holds S(n, m) = Σ_{i=0}^{min(n,m)} C(n, i): the number of ways
// to choose at most m of n items, for n up to its size.
type binomials struct {
	rows [][]Count // rows[n][i] = S(n, i), i = 0..n
	over bool
}

// grow makes rows up to n available.
func (b *binomials) grow(n int) {
	for len(b.rows) <= n {
		k := len(b.rows)
		// C(k, i) = C(k-1, i-1) + C(k-1, i); cumulate as we go.
		row := make([]Count, k+1)
		var sum Count
		for i := 0; i <= k; i++ {
			var c Count
			switch {
			case i == 0 || i == k:
				c = Count{lo: 1}
			default:
				prev := b.rows[k-1]
				ci1 := prev[i-1]
				if i >= 2 {
					ci1 = ci1.sub(prev[i-2])
				}
				ci := prev[i].sub(prev[i-1])
				c = ci1.add(ci, &b.over)
			}
			sum = sum.add(c, &b.over)
			row[i] = sum
		}
		b.rows = append(b.rows, row)
	}
}

// sum returns S(n, m), 0 when m < 0.
func (b *binomials) sum(n, m int) Count {
	if m < 0 || n < 0 {
		return Count{}
	}
	b.grow(n)
	return b.rows[n][min(n, m)]
}
