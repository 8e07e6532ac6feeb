package paillier

import (
	"fmt"
	"math/big"
	"sort"
)

// lagrange returns λ_{0,i}^S = Δ·∏_{j∈S, j≠i} j/(j-i) for every i in S
// (exact integers because Δ = N! clears the denominators).
func lagrange(delta *big.Int, set []int) []*big.Int {
	out := make([]*big.Int, len(set))
	for k, i := range set {
		num := new(big.Int).Set(delta)
		den := big.NewInt(1)
		for _, j := range set {
			if j == i {
				continue
			}
			num.Mul(num, big.NewInt(int64(j)))
			den.Mul(den, big.NewInt(int64(j-i)))
		}
		out[k] = num.Quo(num, den)
	}
	return out
}

// Combine decrypts cs from shares that VerifyShare has accepted for the
// same ciphertexts and ProofContext. It uses the first t+1 shares with
// distinct indices (ordered by index) and fails if there are fewer. The
// result of each ciphertext is in [0, n^s).
//
// Shares must be verified first: Combine cannot tell a wrong share from a
// right one. Its checks (values in range, pos ≡ neg mod n, invertibility)
// catch only values whose component outside ⟨1+n⟩ is wrong; a value
// multiplied by (1+n)^k passes them all and shifts the plaintext by
// λ_i·k/(2Δ²) mod n^s, without an error
// (TestCombineUnverifiedShareGivesWrongPlaintext).
// With exactly t+1 shares there is no redundancy from which Combine could
// notice; only the proofs bind each value to c^(2x_i).
func (pk *ThresholdPublicKey) Combine(cs []*Ciphertext, shares []*DecryptionShare) ([]*big.Int, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	set, byIndex, err := pk.pickShares(cs, shares)
	if err != nil {
		return nil, err
	}
	cb, err := pk.newCombiner(set)
	if err != nil {
		return nil, err
	}
	out := make([]*big.Int, len(cs))
	errs := make([]error, len(cs))
	parallel(len(cs), func(j int) {
		values := make([]*big.Int, len(set))
		for k, i := range set {
			values[k] = byIndex[i].Values[j]
		}
		out[j], errs[j] = cb.combine(values)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pickShares returns the first t+1 distinct party indices among shares, in
// ascending order, and each index's share. Shares with an index outside
// 1..N are ignored; a share with the wrong number of values or a value
// outside (0, n^(s+1)) is an error that names its party.
func (pk *ThresholdPublicKey) pickShares(cs []*Ciphertext, shares []*DecryptionShare) ([]int, map[int]*DecryptionShare, error) {
	need := pk.Threshold + 1
	byIndex := map[int]*DecryptionShare{}
	for _, sh := range shares {
		if sh == nil || sh.Index < 1 || sh.Index > pk.Parties {
			continue
		}
		if len(sh.Values) != len(cs) {
			return nil, nil, shareError(sh.Index, "wrong number of values")
		}
		for _, v := range sh.Values {
			// Range only: a non-unit fails the pos ≡ neg (mod n) check or
			// the inversion in combine.
			if v == nil || v.Sign() <= 0 || v.Cmp(pk.ns1()) >= 0 {
				return nil, nil, shareError(sh.Index, "value out of range")
			}
		}
		if _, dup := byIndex[sh.Index]; !dup {
			byIndex[sh.Index] = sh
		}
	}
	if len(byIndex) < need {
		return nil, nil, fmt.Errorf("paillier: need %d shares from distinct parties, have %d", need, len(byIndex))
	}
	set := make([]int, 0, len(byIndex))
	for i := range byIndex {
		set = append(set, i)
	}
	sort.Ints(set)
	return set[:need], byIndex, nil
}

// combiner holds what Combine derives once from the set S of parties and
// uses for every ciphertext: λ_i = g·L_i with g the gcd of the λ_i, so
// that each share is raised to the small |L_i| and the two products (of
// positive and of negative L_i) to 2g once each; and (4Δ²)^-1 mod n^s.
type combiner struct {
	pk    *ThresholdPublicKey
	small []*big.Int // L_i, signed
	twoG  *big.Int   // 2g
	inv   *big.Int   // (4Δ²)^-1 mod n^s
}

func (pk *ThresholdPublicKey) newCombiner(set []int) (*combiner, error) {
	lam := lagrange(pk.Delta(), set)
	g := new(big.Int)
	for _, l := range lam {
		g.GCD(nil, nil, g, new(big.Int).Abs(l))
	}
	small := make([]*big.Int, len(lam))
	for k, l := range lam {
		small[k] = new(big.Int).Quo(l, g)
	}
	fourDelta2 := new(big.Int).Mul(pk.Delta(), pk.Delta())
	fourDelta2.Lsh(fourDelta2, 2)
	inv := new(big.Int).ModInverse(fourDelta2, pk.ns())
	if inv == nil {
		return nil, fmt.Errorf("%w: 4Δ² not invertible mod n^s", ErrInvalidKey)
	}
	return &combiner{pk: pk, small: small, twoG: new(big.Int).Lsh(g, 1), inv: inv}, nil
}

// combine returns the plaintext of one ciphertext from its share values,
// one per party of the set, in the set's order: ∏ c_i^(2λ_i) =
// c^(4Δ²d) = (1+n)^(4Δ²m) (Damgård–Jurik 2001, §4), its discrete log,
// times (4Δ²)^-1.
func (cb *combiner) combine(values []*big.Int) (*big.Int, error) {
	pk := cb.pk
	ns1 := pk.ns1()
	pos, neg := big.NewInt(1), big.NewInt(1)
	e := new(big.Int)
	for k, v := range values {
		e.Set(cb.small[k])
		isNeg := e.Sign() < 0
		e.Abs(e)
		t := new(big.Int).Exp(v, e, ns1)
		if isNeg {
			neg = mulMod(neg, t, ns1)
		} else {
			pos = mulMod(pos, t, ns1)
		}
	}
	pos.Exp(pos, cb.twoG, ns1)
	neg.Exp(neg, cb.twoG, ns1)
	// pos/neg = c^(4Δ²d) = (1+n)^(4Δ²m); in particular pos ≡ neg mod n.
	var m *big.Int
	if pk.s() == 1 {
		// pos = neg·(1+n·y) mod n² ⇒ (pos-neg)/n ≡ neg·y (mod n): one
		// inversion modulo n instead of modulo n². pos ≡ neg (mod n)
		// must hold for the division to be exact; it fails for some
		// bad values (e.g. a doubled one) but holds for any value
		// times (1+n)^k, so it is no substitute for VerifyShare.
		pn := new(big.Int).Mod(pos, pk.N)
		nn := new(big.Int).Mod(neg, pk.N)
		if pn.Cmp(nn) != 0 {
			return nil, fmt.Errorf("%w: shares do not combine (unverified share?)", ErrInvalidShare)
		}
		if nn.ModInverse(nn, pk.N) == nil {
			return nil, fmt.Errorf("%w: share value not invertible", ErrInvalidShare)
		}
		m = pos.Sub(pos, neg)
		m.Quo(m, pk.N) // exact: pos ≡ neg (mod n)
		m.Mul(m, nn)
		m.Mod(m, pk.N)
	} else {
		if neg.ModInverse(neg, ns1) == nil {
			return nil, fmt.Errorf("%w: share value not invertible", ErrInvalidShare)
		}
		pos.Mul(pos, neg)
		pos.Mod(pos, ns1)
		if new(big.Int).Mod(pos, pk.N).Cmp(one) != 0 {
			return nil, fmt.Errorf("%w: shares do not combine (unverified share?)", ErrInvalidShare)
		}
		m = dlogDJ(pos, pk.N, pk.s())
	}
	m.Mul(m, cb.inv)
	return m.Mod(m, pk.ns()), nil
}
