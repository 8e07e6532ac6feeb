package dealerless

import (
	"context"
	"fmt"
	"math/big"
	"runtime"
	"sync"
	"time"
)

// candidate is an accepted modulus with this party's additive shares of
// its factors.
type candidate struct {
	N, p, q *big.Int
}

// findModulus runs candidate batches until one modulus passes trial
// division and every biprimality test.
// It returns nil when none is found within maxPairs pairs.
func (p *party) findModulus(ctx context.Context, maxPairs int, st *Stats) (*candidate, error) {
	r1 := newRing(p.cfg.Bits + 72)
	sh := newSharing(r1, p.n, p.self, p.seeds)
	shs := newSharing(p.sring, p.n, p.self, p.seeds)
	B := p.cfg.Batch
	var sieveTime, prodTime, bipTime time.Duration
	defer func() {
		st.Timing["sieve"] = sieveTime
		st.Timing["product"] = prodTime
		st.Timing["biprimality"] = bipTime
	}()
	for b := 0; b*B < maxPairs; b++ {
		st.Tried = (b + 1) * B
		start := time.Now()
		_, bs, err := p.sieveRounds(ctx, fmt.Sprintf("sv/%d", b), p.sv, p.sring, shs, 2*B)
		if err != nil {
			return nil, err
		}
		pqs, err := p.sievedShares(p.sv, bs)
		if err != nil {
			return nil, err
		}
		ps, qs := pqs[:B], pqs[B:]
		sieveTime += time.Since(start)
		start = time.Now()
		moduli, err := p.multiply(ctx, b, sh, ps, qs)
		if err != nil {
			return nil, err
		}
		surv, mods := p.trialDivide(moduli)
		prodTime += time.Since(start)
		if p.cfg.Progress != nil {
			p.cfg.Progress((b + 1) * B)
		}
		if len(surv) == 0 {
			continue
		}
		start = time.Now()
		c, N, err := p.biprimeBatch(ctx, b, surv, mods, ps, qs)
		bipTime += time.Since(start)
		if err != nil {
			return nil, err
		}
		if N != nil {
			st.Tried = b*B + c + 1
			return &candidate{N: N, p: ps[c], q: qs[c]}, nil
		}
	}
	return nil, nil
}

// multiply computes N = p·q for every candidate pair of batch b from the
// parties' additive shares of p and q, by one BGW multiplication (Ben-Or,
// Goldwasser and Wigderson, STOC 1988; as Boneh and Franklin, "Efficient
// generation of shared RSA keys", J. ACM 2001, §3, use it): each party
// shares its p_i and q_i with polynomials of degree t and a zero with
// degree 2t (shareFactors), every party opens f(k)·g(k) + z(k) for the
// sums f, g, z of what it received, and interpolation at 0 gives N
// (openProducts).
func (p *party) multiply(ctx context.Context, b int, sh *sharing, ps, qs []*big.Int) ([]*big.Int, error) {
	F, G, Z, err := p.shareFactors(ctx, b, sh, ps, qs)
	if err != nil {
		return nil, err
	}
	prod := make([]*big.Int, len(ps))
	for c := range prod {
		x := new(big.Int).Mul(F[c], G[c])
		prod[c] = sh.r.mod(x.Add(x, Z[c]))
	}
	return p.openProducts(ctx, b, sh, prod)
}

// shareFactors deals this party's shares of p, q and zero for batch b to
// every other party (in one round, cand/b; shares a seeded pair can derive
// are not sent) and returns, for each candidate, the sums of the shares
// this party holds: f(self), g(self), z(self).
func (p *party) shareFactors(ctx context.Context, b int, sh *sharing, ps, qs []*big.Int) (F, G, Z []*big.Int, err error) {
	B := len(ps)
	zeros := make([]*big.Int, B)
	for c := range zeros {
		zeros[c] = new(big.Int)
	}
	lp, lq, lz := fmt.Sprintf("cand/%d/p", b), fmt.Sprintf("cand/%d/q", b), fmt.Sprintf("cand/%d/z", b)
	shP := sh.deal(lp, ps, p.t)
	shQ := sh.deal(lq, qs, p.t)
	shZ := sh.deal(lz, zeros, 2*p.t)
	out := make([][]*big.Int, p.n)
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		if !sh.isSeeded(p.self, p.t, k) {
			out[k-1] = append(out[k-1], shP[k-1]...)
			out[k-1] = append(out[k-1], shQ[k-1]...)
		}
		if !sh.isSeeded(p.self, 2*p.t, k) {
			out[k-1] = append(out[k-1], shZ[k-1]...)
		}
	}
	rds, err := p.readers(ctx, fmt.Sprintf("cand/%d", b), out, sh.r)
	if err != nil {
		return nil, nil, nil, err
	}
	F, G, Z = shP[p.self-1], shQ[p.self-1], shZ[p.self-1]
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		var fk, gk, zk []*big.Int
		if sh.isSeeded(k, p.t, p.self) {
			fk, gk = sh.seededShares(lp, k, B), sh.seededShares(lq, k, B)
		} else {
			fk, gk = rds[k-1].take(B), rds[k-1].take(B)
		}
		if sh.isSeeded(k, 2*p.t, p.self) {
			zk = sh.seededShares(lz, k, B)
		} else {
			zk = rds[k-1].take(B)
		}
		if err := rds[k-1].done(); err != nil {
			return nil, nil, nil, fmt.Errorf("dealerless: round cand/%d: %w", b, err)
		}
		for c := 0; c < B; c++ { // reduced once, in the product
			F[c].Add(F[c], fk[c])
			G[c].Add(G[c], gk[c])
			Z[c].Add(Z[c], zk[c])
		}
	}
	return F, G, Z, nil
}

// openProducts sends this party's point prod of every product polynomial
// to all (round prod/b) and interpolates each at 0 from all n points.
func (p *party) openProducts(ctx context.Context, b int, sh *sharing, prod []*big.Int) ([]*big.Int, error) {
	B := len(prod)
	bc := make([][]*big.Int, p.n)
	for k := range bc {
		bc[k] = prod
	}
	rds, err := p.readers(ctx, fmt.Sprintf("prod/%d", b), bc, sh.r)
	if err != nil {
		return nil, err
	}
	all := make([][]*big.Int, p.n)
	all[p.self-1] = prod
	for k := 1; k <= p.n; k++ {
		if k != p.self {
			if all[k-1] = rds[k-1].take(B); rds[k-1].done() != nil {
				return nil, fmt.Errorf("dealerless: round prod/%d: %w", b, rds[k-1].done())
			}
		}
	}
	sh.zeroCoef(2 * p.t) // cached before the parallel loop reads it
	moduli := make([]*big.Int, B)
	parallel(B, func(c int) {
		sharesAt := make([]*big.Int, p.n)
		for k := range all {
			sharesAt[k] = all[k][c]
		}
		moduli[c] = sh.interpolate(sharesAt, 2*p.t)
	})
	return moduli, nil
}

// trialDivide keeps the moduli of exactly cfg.Bits bits that pass trial
// division, with their indices in the batch.
func (p *party) trialDivide(moduli []*big.Int) ([]int, []*big.Int) {
	var sized []int
	var cands []*big.Int
	for c, N := range moduli {
		if N.BitLen() == p.cfg.Bits {
			sized, cands = append(sized, c), append(cands, N)
		}
	}
	var surv []int
	var mods []*big.Int
	for i, ok := range p.td.filter(cands) {
		if ok {
			surv, mods = append(surv, sized[i]), append(mods, cands[i])
		}
	}
	return surv, mods
}

// biprimeBatch runs the biprimality test on the survivors of batch b: one
// test first (most non-biprimes fail it), then the other biprimeTests−1 on
// those that passed. It returns the first modulus that passed all, with
// its index in the batch, or a nil modulus.
func (p *party) biprimeBatch(ctx context.Context, b int, surv []int, mods, ps, qs []*big.Int) (int, *big.Int, error) {
	pass, err := p.biprime(ctx, fmt.Sprintf("bip/%d", b), surv, mods, ps, qs, 0, 1)
	if err != nil {
		return 0, nil, err
	}
	var surv2 []int
	var mods2 []*big.Int
	for i, ok := range pass {
		if ok {
			surv2, mods2 = append(surv2, surv[i]), append(mods2, mods[i])
		}
	}
	if len(surv2) == 0 {
		return 0, nil, nil
	}
	pass, err = p.biprime(ctx, fmt.Sprintf("bip2/%d", b), surv2, mods2, ps, qs, 1, biprimeTests-1)
	if err != nil {
		return 0, nil, err
	}
	for i, ok := range pass {
		if ok {
			return surv2[i], mods2[i], nil
		}
	}
	return 0, nil, nil
}

// testBase derives the k-th public base g of the biprimality test of N:
// a unit with Jacobi symbol (g/N) = +1.
func (p *party) testBase(N *big.Int, k int) *big.Int {
	st := p.publicStream("biprime-base", N, big.NewInt(int64(k)))
	for {
		g := publicBelow(st, N)
		if g.Sign() > 0 && big.Jacobi(g, N) == 1 {
			return g
		}
	}
}

// biprime runs tests first..first+count−1 of the Boneh–Franklin
// biprimality test (BF 2001 §4.1) on each modulus in one round: party 1
// sends g^((N+1−p_1−q_1)/4), every other party g^(−(p_i+q_i)/4), mod N;
// the product is g^(φ(N)/4), which is ±1 for every g with (g/N) = 1 when
// N is the product of two primes ≡ 3 mod 4.
func (p *party) biprime(ctx context.Context, round string, idx []int, mods []*big.Int, ps, qs []*big.Int, first, count int) ([]bool, error) {
	width := (p.cfg.Bits + 7) / 8
	vals := make([]*big.Int, len(idx)*count)
	parallel(len(vals), func(j int) {
		i, k := j/count, j%count
		N := mods[i]
		e := new(big.Int).Add(ps[idx[i]], qs[idx[i]])
		if p.self == 1 {
			e.Sub(new(big.Int).Add(N, big.NewInt(1)), e)
		}
		e.Rsh(e, 2) // exact: see sampleShares
		v := secretExp(p.testBase(N, first+k), e, N)
		if p.self != 1 {
			v.ModInverse(v, N) // g is a unit: (g/N) = 1
		}
		vals[j] = v
	})
	in, err := p.exchange(ctx, round, p.toAll(encodeElems(vals, width)))
	if err != nil {
		return nil, err
	}
	prods := make([]*big.Int, len(vals))
	for j := range vals {
		prods[j] = new(big.Int).Set(vals[j])
	}
	bound := pow2(p.cfg.Bits)
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		el, err := decodeElems(in[k-1], width, bound)
		if err == nil && len(el) != len(vals) {
			err = fmt.Errorf("%w: %d values, want %d", ErrMessage, len(el), len(vals))
		}
		if err != nil {
			return nil, fmt.Errorf("dealerless: round %s, %s: %w", round, p.peer(k), err)
		}
		for j := range el {
			N := mods[j/count]
			prods[j].Mul(prods[j], el[j])
			prods[j].Mod(prods[j], N)
		}
	}
	pass := make([]bool, len(idx))
	for i := range idx {
		N := mods[i]
		minus1 := new(big.Int).Sub(N, big.NewInt(1))
		pass[i] = true
		for k := 0; k < count; k++ {
			v := prods[i*count+k]
			if v.Cmp(big.NewInt(1)) != 0 && v.Cmp(minus1) != 0 {
				pass[i] = false
				break
			}
		}
	}
	return pass, nil
}

// parallel runs f(0..n−1) on all cores and returns when every call has.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
}
