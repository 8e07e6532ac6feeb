package lattice

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// sent is what one party put on the wire in one round.
type sent struct {
	contribution []byte
	shares       [][]byte
}

// leafRound plays a round of 5 parties in which party 5 (a leaf of the
// 4-ary tree) only encrypts and makes shares, and captures what it sends:
// its contribution up and its decryption shares to the root.
func leafRound(t *testing.T, keys []*Keys, l *Layout, in [][]int64, round int) sent {
	t.Helper()
	pk := keys[0].PublicKey
	ctx := testContext(pk, round)
	var out sent
	g := NewAggregator(pk, l)
	var total *Aggregate
	var committed []Input
	for i, k := range keys {
		enc, err := NewEncryptor(pk)
		if err != nil {
			t.Fatal(err)
		}
		a, err := enc.EncryptInts(ctx, k.Self, l, in[i])
		if err != nil {
			t.Fatal(err)
		}
		committed = append(committed, a.Inputs[0])
		if k.Self == 5 {
			if out.contribution, err = a.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
		if total == nil {
			total = a
		} else if err := g.Aggregate(total, a, total); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := PlanVerified(pk, available(5))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecryptor(keys[4])
	if err != nil {
		t.Fatal(err)
	}
	target, err := dec.Target(total.Mask(), Expect{Context: ctx, Shape: l.Shape(), Committed: committed})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range plan.QuorumsOf(5) {
		s, err := dec.GenShare(target, plan, q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out.shares = append(out.shares, b)
	}
	return out
}

// Only ciphertexts and decryption shares leave a party that is not the
// root (the root also sends the mask of the total and the total's
// plaintext): neither carries the party's values as 8-byte integers, as
// floats or as packed coefficients, and two rounds on the same input send
// different bytes (fresh encryption and smudging randomness).
func TestLeakage(t *testing.T) {
	keys := testKeys(t, 5, 3)
	l, err := NewLayout(params(t), 64, 16, 40, 5)
	if err != nil {
		t.Fatal(err)
	}
	in := randomInputs(rand.New(rand.NewPCG(18, 19)), 5, 64, 40)
	first := leafRound(t, keys, l, in, 1)
	second := leafRound(t, keys, l, in, 1)
	if bytes.Equal(first.contribution, second.contribution) {
		t.Fatal("two encryptions of the same input are equal")
	}
	if len(first.shares) == 0 || len(first.shares) != len(second.shares) {
		t.Fatalf("party 5 sent %d and %d shares", len(first.shares), len(second.shares))
	}
	for i := range first.shares {
		if bytes.Equal(first.shares[i], second.shares[i]) {
			t.Fatal("two shares of the same target are equal (no fresh smudging)")
		}
	}
	packed, err := l.EncodeInts(in[4])
	if err != nil {
		t.Fatal(err)
	}
	var needles [][]byte
	for i, v := range in[4] {
		if v != 0 {
			needles = append(needles, binary.LittleEndian.AppendUint64(nil, uint64(v)),
				binary.BigEndian.AppendUint64(nil, uint64(v)),
				binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(v)/65536)))
		}
		if c := packed[i]; c > 1<<16 {
			needles = append(needles, binary.LittleEndian.AppendUint64(nil, c))
		}
	}
	for _, msg := range append([][]byte{first.contribution}, first.shares...) {
		for _, n := range needles {
			if bytes.Contains(msg, n) {
				t.Fatalf("a message of %d bytes contains an input value %x", len(msg), n)
			}
		}
	}
}

// The decryption noise has the width the package doc sizes: after a
// quorum of three combines, |e| ≈ 2^114·√3 (uniform smudging per share),
// far above the noise of the aggregate it hides (≈ 2^12 here); and the
// statistical distance the doc states holds for the supported sizes.
func TestSmudgingWidth(t *testing.T) {
	p := params(t)
	for _, n := range []int{3, 5, 17, MaxMembers} {
		d := p.SmudgingDistance(n)
		t.Logf("N=%d: statistical distance per coefficient 2^%.1f", n, d)
		if d > -84 {
			t.Fatalf("N=%d: 2^%.1f", n, d)
		}
	}
	keys := testKeys(t, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(p, 10, 0, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := &round{keys: keys, layout: l, plan: PlanSingle, ctx: testContext(pk, 12)}
	in := randomInputs(rand.New(rand.NewPCG(20, 21)), 5, 10, 10)
	res, err := r.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, res.Totals, plainSums(in))
	bitsOfNoise := r.opened.noiseBits(t)
	t.Logf("decryption noise: 2^%.1f", bitsOfNoise)
	if bitsOfNoise < smudgeBits || bitsOfNoise > smudgeBits+3 {
		t.Fatalf("decryption noise 2^%.1f, expected about 2^%d", bitsOfNoise, smudgeBits+1)
	}
}

// noiseBits is log2 of the largest noise coefficient of the first quorum's
// decryption of the first ciphertext: T·(c0 + Σh) = m + T·e centred
// modulo Q, so |e| ≈ |centred value|/T.
func (o *Opening) noiseBits(t *testing.T) float64 {
	r := o.pk.Params.bgv.RingQ()
	pt := r.NewPoly()
	r.Add(o.agg.c0[0], o.acc[0].value[0], pt)
	r.INTT(pt, pt)
	r.MulScalar(pt, o.pk.Params.PlaintextModulus(), pt)
	coeffs := make([]*big.Int, r.N())
	for i := range coeffs {
		coeffs[i] = new(big.Int)
	}
	r.PolyToBigintCentered(pt, 1, coeffs)
	maxBits := 0
	for _, c := range coeffs {
		maxBits = max(maxBits, c.BitLen())
	}
	return float64(maxBits) - math.Log2(float64(o.pk.Params.PlaintextModulus()))
}

// TestSmudger: the smudging noise is the same integer modulo every prime
// of Q, within [−2^k, 2^k), and as often negative as not, its top bits
// uniform (each pattern of the top two bits about a quarter of 2·8,192).
func TestSmudger(t *testing.T) {
	p := params(t)
	r := p.bgv.RingQ()
	s, err := newSmudger(r.ModuliChain())
	if err != nil {
		t.Fatal(err)
	}
	poly := r.NewPoly()
	coeffs := make([]*big.Int, r.N())
	for i := range coeffs {
		coeffs[i] = new(big.Int)
	}
	var top [4]int
	bound := new(big.Int).Lsh(big.NewInt(1), smudgeBits)
	for range 2 {
		s.read(poly, r.ModuliChain())
		r.PolyToBigintCentered(poly, 1, coeffs)
		for i, c := range coeffs {
			if c.CmpAbs(bound) > 0 || (c.Sign() > 0 && c.Cmp(bound) == 0) {
				t.Fatalf("coefficient %d: %v outside [−2^%d, 2^%d)", i, c, smudgeBits, smudgeBits)
			}
			x := new(big.Int).Add(c, bound)       // in [0, 2^(k+1))
			top[x.Rsh(x, smudgeBits-1).Int64()]++ // the top two of k+1 bits
		}
	}
	n := 2 * r.N()
	for v, k := range top {
		if d := float64(k) - float64(n)/4; d*d > 25*float64(n)*3/16 {
			t.Fatalf("top bits %02b drawn %d times of %d, want about a quarter", v, k, n)
		}
	}
}
