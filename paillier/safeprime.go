package paillier

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"sync"
)

// sievePrimes are the odd primes below sieveBound used to sieve safe-prime
// candidates.
const sieveBound = 1 << 18

var (
	sievePrimesOnce sync.Once
	sievePrimes     []uint32
)

func smallPrimes() []uint32 {
	sievePrimesOnce.Do(func() {
		comp := make([]bool, sieveBound)
		for i := 3; i < sieveBound; i += 2 {
			if comp[i] {
				continue
			}
			sievePrimes = append(sievePrimes, uint32(i))
			for j := i * i; j < sieveBound; j += 2 * i {
				comp[j] = true
			}
		}
	})
	return sievePrimes
}

// sieveWidth is the number of consecutive odd candidates q sieved at once.
const sieveWidth = 1 << 15

// GenerateSafePrime returns a safe prime p = 2q+1 (q prime) of exactly bits
// bits whose two top bits are set, so that the product of two such primes
// has exactly 2·bits bits. Candidates q and 2q+1 are sieved together against
// all odd primes below 2^18, survivors get a base-2 Fermat test on q and on
// p, and only then Miller–Rabin plus Baillie–PSW (math/big ProbablyPrime).
// It runs GOMAXPROCS workers, each on its own random interval, and stops
// them all when one finds a prime or ctx is cancelled. Randomness is read
// from random under a lock.
func GenerateSafePrime(ctx context.Context, random io.Reader, bits int) (*big.Int, error) {
	if bits < 64 || bits > MaxBits/2 {
		return nil, fmt.Errorf("%w: safe primes must have 64..%d bits", ErrInvalidKey, MaxBits/2)
	}
	if random == nil {
		random = rand.Reader
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	read := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := io.ReadFull(random, b)
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	type result struct {
		p   *big.Int
		err error
	}
	res := make(chan result, workers)
	for w := 0; w < workers; w++ {
		go func() {
			p, err := safePrimeWorker(ctx, read, bits)
			res <- result{p, err}
		}()
	}
	var firstErr error
	for w := 0; w < workers; w++ {
		r := <-res
		if r.err == nil && r.p != nil {
			cancel()
			return r.p, nil
		}
		if firstErr == nil {
			firstErr = r.err
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return nil, firstErr
}

func safePrimeWorker(ctx context.Context, read func([]byte) error, bits int) (*big.Int, error) {
	primes := smallPrimes()
	qbits := bits - 1
	buf := make([]byte, (qbits+7)/8)
	bad := make([]bool, sieveWidth)
	two := big.NewInt(2)
	q := new(big.Int)
	p := new(big.Int)
	pm1 := new(big.Int)
	t := new(big.Int)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := read(buf); err != nil {
			return nil, err
		}
		if extra := len(buf)*8 - qbits; extra > 0 {
			buf[0] &= byte(0xff >> extra)
		}
		q0 := new(big.Int).SetBytes(buf)
		// Top two bits of p = 2q+1 set ⇔ top two bits of q set.
		q0.SetBit(q0, qbits-1, 1)
		q0.SetBit(q0, qbits-2, 1)
		q0.SetBit(q0, 0, 1)
		// Make room so q0 + 2·sieveWidth keeps its top bits.
		q0.SetBit(q0, 20, 0)
		q0.SetBit(q0, 19, 0)
		for i := range bad {
			bad[i] = false
		}
		for _, r := range primes {
			rem := uint32(modWord(q0, r))
			// Candidate j is q = q0 + 2j. Bad if q ≡ 0 or q ≡ (r-1)/2 (mod r),
			// i.e. r | q or r | 2q+1.
			inv2 := (r + 1) / 2 // 2^-1 mod r
			for _, target := range [2]uint32{0, (r - 1) / 2} {
				j := (uint64(target) + uint64(r) - uint64(rem)) % uint64(r) * uint64(inv2) % uint64(r)
				for ; j < sieveWidth; j += uint64(r) {
					bad[j] = true
				}
			}
		}
		for j := 0; j < sieveWidth; j++ {
			if bad[j] {
				continue
			}
			if j&63 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			q.SetInt64(int64(2 * j))
			q.Add(q, q0)
			p.Lsh(q, 1)
			p.Add(p, one)
			// Fermat base 2 on q, then on p.
			pm1.Sub(q, one)
			if t.Exp(two, pm1, q).Cmp(one) != 0 {
				continue
			}
			pm1.Sub(p, one)
			if t.Exp(two, pm1, p).Cmp(one) != 0 {
				continue
			}
			if q.ProbablyPrime(20) && p.ProbablyPrime(20) {
				if p.BitLen() != bits {
					break
				}
				return new(big.Int).Set(p), nil
			}
		}
	}
}

// generateSafePrimePair returns two distinct safe primes of bits bits.
func generateSafePrimePair(random io.Reader, bits int) (*big.Int, *big.Int, error) {
	ctx := context.Background()
	p, err := GenerateSafePrime(ctx, random, bits)
	if err != nil {
		return nil, nil, fmt.Errorf("paillier: safe prime: %w", err)
	}
	for {
		q, err := GenerateSafePrime(ctx, random, bits)
		if err != nil {
			return nil, nil, fmt.Errorf("paillier: safe prime: %w", err)
		}
		if q.Cmp(p) != 0 {
			return p, q, nil
		}
	}
}

// modWord returns x mod r for a small r.
func modWord(x *big.Int, r uint32) uint64 {
	var rem uint64
	words := x.Bits()
	const wb = 32 << (^uint(0) >> 63)
	for i := len(words) - 1; i >= 0; i-- {
		w := uint64(words[i])
		if wb == 64 {
			// (rem·2^64 + w) mod r, in two 32-bit halves to avoid overflow.
			rem = ((rem << 32) | (w >> 32)) % uint64(r)
			rem = ((rem << 32) | (w & 0xffffffff)) % uint64(r)
		} else {
			rem = ((rem << 32) | w) % uint64(r)
		}
	}
	return rem
}
