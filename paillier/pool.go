package paillier

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/cohortdm/cohort/internal/prefill"
)

// RandomizerPool moves the cost of encryption off a protocol's critical
// path. Almost all of Encrypt's time is the randomiser H^r (at 2048 bits,
// 228 multiplications modulo n² against the fixed-base table; (1+n)^m and
// the final product are two more), and the randomiser does not depend on
// the plaintext. A pool computes randomisers ahead of time, in one
// goroutine of its own, while the party waits for the network or for the
// next step; Encrypt and Rerandomize then take one and multiply.
//
// The ciphertexts are distributed exactly as PublicKey.Encrypt's: each
// randomiser is H^r for a fresh r drawn as Encrypt draws it (uniform in
// [0, n), or short with PublicKey.ShortExponent), from the pool's random
// source (crypto/rand by default), and is handed out once and then
// forgotten by the pool. When the pool is empty, Encrypt computes its
// randomiser itself, at the cost of PublicKey.Encrypt; the pool never
// reuses or derives one randomiser from another.
//
// A pool lowers latency, not total work: every randomiser still costs an
// exponentiation, on whichever core the filler runs. It helps where
// encryptions come in bursts after idle time (a party that encrypts its
// input when a step arrives), not in a loop that encrypts without pause on
// one core, where the filler and the caller share the same CPU.
//
// Lifecycle: NewRandomizerPool starts the filler, which runs until Close
// is called or ctx ends. Close stops it, waits for it to return, and drops
// the randomisers not handed out. The pool's owner must call Close. After
// Close, Encrypt and Rerandomize still work, computing every randomiser
// themselves. Pause and Resume let an owner keep the filler off the cores
// while it has work of its own (Go has no goroutine priorities). A pool is
// safe for concurrent use.
type RandomizerPool struct {
	pk     PublicKey // a copy: a later change to the caller's key does not reach the filler
	random io.Reader // lockedReader: the filler and the fallback path share it
	supply *prefill.Supply[*big.Int]
}

// PoolStats is what a pool holds and has handed out, for an owner's
// status page and metrics.
type PoolStats struct {
	Size  int // the bound: at most this many randomisers wait
	Ready int // randomisers waiting now
	// Bytes is the memory the waiting randomisers hold: Ready ciphertext-
	// sized integers.
	Bytes int
	Made  int64 // randomisers the filler computed
	Taken int64 // randomisers handed out from the pool
	// Computed counts randomisers computed on the caller's path because
	// the pool was empty.
	Computed int64
	Paused   bool
}

// NewRandomizerPool starts a pool of up to size randomisers for pk, drawn
// from random (crypto/rand.Reader when nil). The first randomiser builds
// the key's fixed-base table if it does not exist yet (about a second at
// 2048 bits), in the filler. Memory: size ciphertext-sized integers (512
// bytes each at 2048 bits).
func NewRandomizerPool(ctx context.Context, pk *PublicKey, random io.Reader, size int) (*RandomizerPool, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	if size < 1 {
		return nil, fmt.Errorf("paillier: randomizer pool size %d: want at least 1", size)
	}
	if random == nil {
		random = rand.Reader
	}
	p := &RandomizerPool{pk: *pk, random: &lockedReader{r: random}, supply: prefill.New[*big.Int](size)}
	go p.fill(ctx)
	return p, nil
}

// fill computes randomisers until the pool is closed or ctx ends (the
// supply's loop, under this pool's name in a goroutine dump).
func (p *RandomizerPool) fill(ctx context.Context) {
	p.supply.Fill(ctx, func() (*big.Int, error) { return p.pk.randomizer(p.random) })
}

// take returns a randomiser: a precomputed one if any is ready, otherwise
// a fresh one computed now.
func (p *RandomizerPool) take() (*big.Int, error) {
	if r, ok := p.supply.Take(); ok {
		return r, nil
	}
	return p.pk.randomizer(p.random)
}

// Serves reports whether the pool's randomisers encrypt under pk: the same
// modulus, degree, base and exponent length. A caller handed a pool by
// someone else checks it before encrypting with it.
func (p *RandomizerPool) Serves(pk *PublicKey) bool {
	return pk != nil && pk.N != nil && pk.S == p.pk.S && pk.N.Cmp(p.pk.N) == 0 &&
		pk.ShortExponent == p.pk.ShortExponent && (pk.H == nil) == (p.pk.H == nil) && (pk.H == nil || pk.H.Cmp(p.pk.H) == 0)
}

// Ready is the number of precomputed randomisers waiting.
func (p *RandomizerPool) Ready() int { return p.supply.Counts().Ready }

// Stats reports the pool's size, what waits in it and what it handed out.
func (p *RandomizerPool) Stats() PoolStats {
	c := p.supply.Counts()
	return PoolStats{Size: c.Size, Ready: c.Ready, Bytes: c.Ready * p.pk.CiphertextSize(),
		Made: c.Made, Taken: c.Taken, Computed: c.Computed, Paused: c.Paused}
}

// Pause stops the filler once the randomiser it is computing is done,
// until Resume: the owner keeps the cores for its own work (a node running
// a job's step) and lets the pool fill while it idles. Encrypt still takes
// what is ready. Pausing a paused pool does nothing.
func (p *RandomizerPool) Pause() { p.supply.Pause() }

// Resume lets a paused filler go on; on a running pool it does nothing.
func (p *RandomizerPool) Resume() { p.supply.Resume() }

// Encrypt is PublicKey.Encrypt with a randomiser from the pool.
func (p *RandomizerPool) Encrypt(m *big.Int) (*Ciphertext, error) {
	if err := p.pk.checkPlain(m); err != nil {
		return nil, err
	}
	r, err := p.take()
	if err != nil {
		return nil, err
	}
	return &Ciphertext{C: mulMod(r, p.pk.gPow(m), p.pk.ns1())}, nil
}

// EncryptMany is PublicKey.EncryptMany with randomisers from the pool: as
// many plaintexts as there are randomisers ready take one each, and
// PublicKey.EncryptMany encrypts the rest on every core, drawing from the
// pool's random source. A randomiser taken is never handed out again, even
// when the call fails.
func (p *RandomizerPool) EncryptMany(ms []*big.Int) ([]*Ciphertext, error) {
	for _, m := range ms {
		if err := p.pk.checkPlain(m); err != nil {
			return nil, err
		}
	}
	out := make([]*Ciphertext, 0, len(ms))
	for len(out) < len(ms) {
		r, ok := p.supply.TakeReady()
		if !ok {
			break
		}
		out = append(out, &Ciphertext{C: mulMod(r, p.pk.gPow(ms[len(out)]), p.pk.ns1())})
	}
	if len(out) == len(ms) {
		return out, nil
	}
	rest := ms[len(out):]
	p.supply.Computed(len(rest))
	more, err := p.pk.EncryptMany(p.random, rest)
	if err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

// Rerandomize is PublicKey.Rerandomize with a randomiser from the pool.
func (p *RandomizerPool) Rerandomize(c *Ciphertext) (*Ciphertext, error) {
	if c == nil || c.C == nil {
		return nil, ErrInvalidCiphertext
	}
	r, err := p.take()
	if err != nil {
		return nil, err
	}
	return &Ciphertext{C: mulMod(r, c.C, p.pk.ns1())}, nil
}

// Close stops the filler, waits for it to return and drops the unused
// randomisers (which never encrypted anything). It is safe to call more than once.
func (p *RandomizerPool) Close() { p.supply.Close() }

// lockedReader serialises reads, so that a caller's io.Reader need not be
// safe for concurrent use.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(b)
}
