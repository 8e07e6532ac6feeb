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
		rds, err := p.readers(ctx, fmt.Sprintf("cand/%d", b), out, r1)
		if err != nil {
			return nil, err
		}
		F, G, Z := shP[p.self-1], shQ[p.self-1], shZ[p.self-1]
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
				return nil, fmt.Errorf("dealerless: round cand/%d: %w", b, err)
			}
			for c := 0; c < B; c++ { // reduced once, in the product below
				F[c].Add(F[c], fk[c])
				G[c].Add(G[c], gk[c])
				Z[c].Add(Z[c], zk[c])
			}
		}
		prod := make([]*big.Int, B)
		for c := range prod {
			x := new(big.Int).Mul(F[c], G[c])
			prod[c] = r1.mod(x.Add(x, Z[c]))
		}
		bc := make([][]*big.Int, p.n)
		for k := range bc {
			bc[k] = prod
		}
		rds, err = p.readers(ctx, fmt.Sprintf("prod/%d", b), bc, r1)
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
		prodTime += time.Since(start)
		if p.cfg.Progress != nil {
			p.cfg.Progress((b + 1) * B)
		}
		if len(surv) == 0 {
			continue
		}
		start = time.Now()
		pass, err := p.biprime(ctx, fmt.Sprintf("bip/%d", b), surv, mods, ps, qs, 0, 1)
		if err != nil {
			return nil, err
		}
		var surv2 []int
		var mods2 []*big.Int
		for i, ok := range pass {
			if ok {
				surv2, mods2 = append(surv2, surv[i]), append(mods2, mods[i])
			}
		}
		if len(surv2) > 0 {
			pass, err = p.biprime(ctx, fmt.Sprintf("bip2/%d", b), surv2, mods2, ps, qs, 1, biprimeTests-1)
			if err != nil {
				return nil, err
			}
		}
		bipTime += time.Since(start)
		for i, ok := range pass {
			if ok && len(surv2) > 0 {
				c := surv2[i]
				st.Tried = b*B + c + 1
				return &candidate{N: mods2[i], p: ps[c], q: qs[c]}, nil
			}
		}
	}
	return nil, nil
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
	body := encodeElems(vals, width)
	out := make([][]byte, p.n)
	for k := range out {
		if k+1 != p.self {
			out[k] = body
		}
	}
	in, err := p.exchange(ctx, round, out)
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
			return nil, fmt.Errorf("dealerless: round %s, party %d: %w", round, k, err)
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
