package dealerless

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"

	"crypto/sha3"
)

// mersenne127 is the prime 2^127 − 1. The sharing rings are its powers
// Z_{(2^127−1)^e}: every difference of two party indices (at most
// MaxParties) is a unit there, which is all that Shamir sharing and
// Lagrange interpolation need, and a ring of any size is available at once
// without a prime search.
var mersenne127 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))

// ring is Z_P with P = (2^127−1)^e, the smallest such P of at least bits
// bits. Integers below P/2 are recovered exactly from their residues.
type ring struct {
	P     *big.Int
	bits  int // 127·e: P < 2^bits
	width int // bytes of one element on the wire
}

func newRing(bits int) *ring {
	e := (bits + 126) / 127
	p := new(big.Int).Exp(mersenne127, big.NewInt(int64(e)), nil)
	return &ring{P: p, bits: 127 * e, width: (127*e + 7) / 8}
}

func (r *ring) mod(x *big.Int) *big.Int { return x.Mod(x, r.P) }

// sharing holds what Shamir sharing over a ring needs for n parties: the
// pairwise seeds for pseudo-random shares and cached Lagrange coefficients.
//
// Pseudo-random dealing (after Cramer–Damgård–Ishai's pseudo-random secret
// sharing): a polynomial of degree D with f(0) = s is fixed by s and D
// further values, so the dealer takes the shares of the D parties that
// follow it (cyclically) from a stream both it and that party derive from
// their pairwise seed, and sends explicit shares only to the remaining
// n−1−D parties. Any t ≤ D shares of the result are still (pseudo-)uniform
// and independent of s; a zero-sharing of degree 2t among n = 2t+1 parties
// costs no bytes at all.
type sharing struct {
	r     *ring
	n     int
	self  int
	seeds [][]byte // seeds[k-1]: the seed shared with party k; nil for self
	coef  map[[2]int][][]*big.Int
	zero  map[int][]*big.Int
}

func newSharing(r *ring, n, self int, seeds [][]byte) *sharing {
	return &sharing{r: r, n: n, self: self, seeds: seeds, coef: map[[2]int][][]*big.Int{}, zero: map[int][]*big.Int{}}
}

// seeded returns the parties whose shares of a degree-deg polynomial dealt
// by dealer come from the pair streams: the deg parties after dealer.
func (s *sharing) seeded(dealer, deg int) []int {
	out := make([]int, 0, deg)
	for k := 1; k <= deg; k++ {
		out = append(out, (dealer-1+k)%s.n+1)
	}
	return out
}

func (s *sharing) isSeeded(dealer, deg, party int) bool {
	if party == dealer {
		return false
	}
	d := (party - dealer + s.n) % s.n
	return d >= 1 && d <= deg
}

// lagrangeAt returns ℓ_m(x) for the points xs: ∏_{m'≠m} (x − m')/(m − m') mod P.
func (s *sharing) lagrangeAt(xs []int, x int) []*big.Int {
	out := make([]*big.Int, len(xs))
	for a, m := range xs {
		num, den := big.NewInt(1), big.NewInt(1)
		for _, m2 := range xs {
			if m2 == m {
				continue
			}
			num.Mul(num, big.NewInt(int64(x-m2)))
			den.Mul(den, big.NewInt(int64(m-m2)))
		}
		s.r.mod(num)
		s.r.mod(den)
		den.ModInverse(den, s.r.P) // a unit: |m−m2| ≤ n < 2^127−1
		out[a] = s.r.mod(num.Mul(num, den))
	}
	return out
}

// dealCoef returns, for dealer and degree, coef[j-1] = the Lagrange
// coefficients that give f(j) from f(0) and the seeded shares.
func (s *sharing) dealCoef(dealer, deg int) [][]*big.Int {
	k := [2]int{dealer, deg}
	if c, ok := s.coef[k]; ok {
		return c
	}
	xs := append([]int{0}, s.seeded(dealer, deg)...)
	c := make([][]*big.Int, s.n)
	for j := 1; j <= s.n; j++ {
		if !s.isSeeded(dealer, deg, j) {
			c[j-1] = s.lagrangeAt(xs, j)
		}
	}
	s.coef[k] = c
	return c
}

// zeroCoef returns the coefficients that recover f(0) from f(1..deg+1).
func (s *sharing) zeroCoef(deg int) []*big.Int {
	if c, ok := s.zero[deg]; ok {
		return c
	}
	xs := make([]int, deg+1)
	for i := range xs {
		xs[i] = i + 1
	}
	c := s.lagrangeAt(xs, 0)
	s.zero[deg] = c
	return c
}

// stream is the deterministic element stream of one pair for one dealt
// vector: SHAKE-256 over the pair seed, the label and the dealer.
type stream struct {
	xof *sha3.SHAKE
	buf []byte
	r   *ring
}

func (s *sharing) stream(label string, dealer, receiver int) *stream {
	other := receiver
	if receiver == s.self {
		other = dealer
	}
	xof := sha3.NewSHAKE256()
	xof.Write([]byte("cohort/dealerless/prss/v1"))
	xof.Write(s.seeds[other-1])
	xof.Write(binary.BigEndian.AppendUint32(nil, uint32(dealer)))
	xof.Write([]byte(label))
	return &stream{xof: xof, buf: make([]byte, s.r.width), r: s.r}
}

// next returns the stream's next element: the low 127·e bits of width
// bytes of SHAKE output, less P if they exceed it. P = (2^127−1)^e lies
// within e·2^-127 of 2^(127e), so the result is uniform in Z_P up to that
// statistical distance, with no division.
func (st *stream) next() *big.Int {
	st.xof.Read(st.buf)
	bitsOver := 8*len(st.buf) - st.r.bits
	st.buf[0] &= byte(0xff >> bitsOver)
	x := new(big.Int).SetBytes(st.buf)
	if x.Cmp(st.r.P) >= 0 {
		x.Sub(x, st.r.P)
	}
	return x
}

// deal shares every value of vals with a fresh polynomial of degree deg and
// returns shares[j-1][c], party j's share of vals[c]. Seeded parties'
// shares are filled in too (the dealer needs them to interpolate) but are
// not sent.
func (s *sharing) deal(label string, vals []*big.Int, deg int) [][]*big.Int {
	shares := make([][]*big.Int, s.n)
	seeded := s.seeded(s.self, deg)
	for _, k := range seeded {
		st := s.stream(label, s.self, k)
		shares[k-1] = make([]*big.Int, len(vals))
		for c := range vals {
			shares[k-1][c] = st.next()
		}
	}
	coef := s.dealCoef(s.self, deg)
	tmp := new(big.Int)
	for j := 1; j <= s.n; j++ {
		if coef[j-1] == nil {
			continue
		}
		out := make([]*big.Int, len(vals))
		cj := coef[j-1]
		for c, v := range vals {
			acc := new(big.Int).Mul(cj[0], v)
			for a, k := range seeded {
				acc.Add(acc, tmp.Mul(cj[a+1], shares[k-1][c]))
			}
			out[c] = s.r.mod(acc)
		}
		shares[j-1] = out
	}
	return shares
}

// seededShares returns this party's count shares of a vector that dealer
// dealt under label with degree deg, when this party is seeded for it.
func (s *sharing) seededShares(label string, dealer, count int) []*big.Int {
	st := s.stream(label, dealer, s.self)
	out := make([]*big.Int, count)
	for c := range out {
		out[c] = st.next()
	}
	return out
}

// interpolate recovers f(0) from the shares of parties 1..deg+1
// (shares[j-1]).
func (s *sharing) interpolate(shares []*big.Int, deg int) *big.Int {
	c := s.zeroCoef(deg)
	acc := new(big.Int)
	tmp := new(big.Int)
	for j := 0; j <= deg; j++ {
		acc.Add(acc, tmp.Mul(c[j], shares[j]))
	}
	return s.r.mod(acc)
}

// pairSeed derives the seed of a pair from the two random halves that its
// parties sent each other, in party order.
func pairSeed(lo, hi []byte) []byte {
	h := sha256.New()
	h.Write([]byte("cohort/dealerless/pair-seed/v1"))
	h.Write(lo)
	h.Write(hi)
	return h.Sum(nil)
}

// wire: a message body is a sequence of fixed-width big-endian elements.

// ErrMessage wraps every malformed message from a peer.
var ErrMessage = fmt.Errorf("dealerless: malformed message")

// encodeElems writes xs as width-byte big-endian values.
func encodeElems(xs []*big.Int, width int) []byte {
	out := make([]byte, len(xs)*width)
	for i, x := range xs {
		x.FillBytes(out[i*width : (i+1)*width])
	}
	return out
}

// decodeElems reads a body of width-byte elements, each below mod.
func decodeElems(b []byte, width int, mod *big.Int) ([]*big.Int, error) {
	if width <= 0 || len(b)%width != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of %d-byte elements", ErrMessage, len(b), width)
	}
	out := make([]*big.Int, len(b)/width)
	for i := range out {
		x := new(big.Int).SetBytes(b[i*width : (i+1)*width])
		if x.Cmp(mod) >= 0 {
			return nil, fmt.Errorf("%w: element %d out of range", ErrMessage, i)
		}
		out[i] = x
	}
	return out, nil
}

// reader hands out the elements of one peer's message in order.
type reader struct {
	from  string // the peer, as party.peer names it
	elems []*big.Int
	pos   int
	err   error
}

func (rd *reader) take(count int) []*big.Int {
	if rd.err != nil {
		return nil
	}
	if rd.pos+count > len(rd.elems) {
		rd.err = fmt.Errorf("%w from %s: %d elements, want more", ErrMessage, rd.from, len(rd.elems))
		return nil
	}
	out := rd.elems[rd.pos : rd.pos+count]
	rd.pos += count
	return out
}

func (rd *reader) done() error {
	if rd.err == nil && rd.pos != len(rd.elems) {
		rd.err = fmt.Errorf("%w from %s: %d elements, want %d", ErrMessage, rd.from, len(rd.elems), rd.pos)
	}
	return rd.err
}
