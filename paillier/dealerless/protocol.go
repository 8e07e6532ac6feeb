package dealerless

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"crypto/sha3"

	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/paillier/internal/gmpexp"
)

// Network carries one party's messages. Exchange sends out[k-1] to party k
// for every other party k (the entry for this party is ignored) and returns
// what every other party sent in the same round (in[k-1]; nil for this
// party). Round names are unique within one generation. An error must name
// the party that could not be reached or did not answer.
type Network interface {
	Exchange(ctx context.Context, round string, out [][]byte) ([][]byte, error)
}

// Config is one party's input to Generate.
type Config struct {
	// Bits is the size of the modulus N (2048, 3072 or 4096; smaller only
	// in test binaries, see paillier.AllowTestKeySizes).
	Bits int
	// Parties is n ≥ 3; Index is this party's index, 1..n. The threshold
	// is t = ⌊(n−1)/2⌋: any t+1 shares decrypt.
	Parties, Index int
	// Names, when set, are the parties' names, Names[k-1] party k's: an
	// error about a peer names it by its name instead of its index.
	Names []string
	// PublicSeed is public randomness that every party holds the same copy
	// of (the job's seed): it picks the biprimality bases, the fixed base
	// H, the verification base v and the test ciphertext. Never a secret.
	PublicSeed []byte
	// Batch is the number of candidate pairs per network round (default
	// DefaultBatch).
	Batch int
	// MaxCandidates bounds the candidate pairs tried before giving up
	// (default DefaultMaxCandidates).
	MaxCandidates int
	// Random is the source of this party's secrets (crypto/rand when nil).
	Random io.Reader
	// Progress, when set, is told how many candidate pairs were tried.
	Progress func(tried int)
}

// Defaults for Config. A sieved 2048-bit key takes some 4,000 pairs on
// average; a batch of 1024 wastes less of the last batch (pairs after the
// accepted one are still sieved, multiplied and tested) than one of 2048,
// at the cost of more rounds.
const (
	DefaultBatch         = 1024
	DefaultMaxCandidates = 2_000_000
)

// statBits is the statistical security parameter κ of every integer mask.
const statBits = 128

// biprimeTests is the number of Boneh–Franklin tests a modulus must pass;
// a modulus that is not a product of two primes passes each with
// probability at most 1/2 (Boneh–Franklin 2001, §4: unless N = p^a·q^b,
// see the package doc), so at most 2^-80 overall.
const biprimeTests = 80

// Result is one party's outcome.
type Result struct {
	// Share is this party's key share; Share.Public is the public key,
	// identical at every party.
	Share *paillier.KeyShare
	// Candidates is the number of candidate pairs (p, q) whose product was
	// computed.
	Candidates int
	// Timing is the wall time of each phase: "sieve" (the distributed
	// sieve's rounds and the candidate shares), "product" (the BGW products
	// N = pq and their trial division), "biprimality", "convert",
	// "verify".
	Timing map[string]time.Duration

	p, q *big.Int // this party's additive shares of p and q (tests only)
}

// ErrNoModulus means no biprime was found within MaxCandidates.
var ErrNoModulus = errors.New("dealerless: no biprime modulus found")

// party is one party's state during generation.
type party struct {
	cfg   Config
	n, t  int
	self  int
	h     int      // bits of p and q
	r     int64    // the small prime with p ≡ q ≡ 1 (mod r)
	res   *big.Int // p mod 4r: ≡ 3 mod 4, ≡ 1 mod r
	net   Network
	rnd   io.Reader
	seeds [][]byte
	td    *trialDivider
	sring *ring  // the ring of the sieve's sharings
	sv    *sieve // the distributed sieve (sieve.go)
}

// peer names party k (1..n) in an error: "party NAME" when the caller
// gave names, else "party k".
func (p *party) peer(k int) string {
	if p.cfg.Names != nil {
		return "party " + p.cfg.Names[k-1]
	}
	return fmt.Sprintf("party %d", k)
}

// smallPrimeAtLeast returns the smallest odd prime ≥ x.
func smallPrimeAtLeast(x int) int64 {
	for p := int64(x) | 1; ; p += 2 {
		if big.NewInt(p).ProbablyPrime(10) {
			return p
		}
	}
}

// Party is one party's generator across calls: Search for a modulus in
// one or more chunks, then Finish with the one found. Chunks let a job run
// the long search as several short steps, so that a fault loses one chunk
// and not the whole search. A Party is used by one goroutine at a time.
type Party struct{ p *party }

// Candidate is a modulus N that passed trial division and every
// biprimality test, with this party's secret additive shares of its
// factors (never exported, never sent).
type Candidate struct {
	N    *big.Int
	p, q *big.Int
}

// Stats describe one call: candidate pairs whose product was computed (up
// to and including the accepted one) and wall time per phase.
type Stats struct {
	Tried  int
	Timing map[string]time.Duration
}

// NewParty checks cfg and prepares this party's generator.
func NewParty(cfg Config) (*Party, error) {
	n := cfg.Parties
	if n < 3 || n > paillier.MaxParties {
		return nil, fmt.Errorf("dealerless: %d parties; need 3..%d (two parties cannot have an honest majority)", n, paillier.MaxParties)
	}
	if cfg.Index < 1 || cfg.Index > n {
		return nil, fmt.Errorf("dealerless: party index %d outside 1..%d", cfg.Index, n)
	}
	if cfg.Names != nil && len(cfg.Names) != n {
		return nil, fmt.Errorf("dealerless: %d party names for %d parties", len(cfg.Names), n)
	}
	if err := paillier.CheckModulusSize(cfg.Bits); err != nil {
		return nil, fmt.Errorf("dealerless: %w", err)
	}
	if len(cfg.PublicSeed) == 0 {
		return nil, fmt.Errorf("dealerless: empty public seed")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.MaxCandidates <= 0 {
		cfg.MaxCandidates = DefaultMaxCandidates
	}
	rnd := cfg.Random
	if rnd == nil {
		rnd = rand.Reader
	}
	p := &party{cfg: cfg, n: n, t: (n - 1) / 2, self: cfg.Index, h: cfg.Bits / 2, rnd: rnd}
	// r ≥ n+2 leaves the slack the share reduction needs (see convert).
	p.r = smallPrimeAtLeast(n + 2)
	for x := int64(3); ; x += 4 { // x ≡ 3 mod 4, ≡ 1 mod r
		if x%p.r == 1 {
			p.res = big.NewInt(x)
			break
		}
	}
	p.td = newTrialDivider()
	// The sieve shares over the candidates' ring, or a wider one when
	// many parties would leave M fewer than 16 bits (sieve.go).
	p.sring = newRing(max(cfg.Bits+72, 16*n+statBits+bitlen(n)+2))
	sv, err := newSieve(n, p.r, p.h, p.sring)
	if err != nil {
		return nil, err
	}
	p.sv = sv
	return &Party{p: p}, nil
}

// Search runs candidate batches over net until a modulus passes every test
// or maxPairs pairs (rounded up to whole batches) have been tried; it
// returns a nil Candidate when none was found. Every party must call it
// with the same maxPairs over the same rounds. Each call exchanges fresh
// pair seeds, so every call may use its own Network (one job step).
func (P *Party) Search(ctx context.Context, net Network, maxPairs int) (*Candidate, Stats, error) {
	p := P.p
	p.net = net
	st := Stats{Timing: map[string]time.Duration{}}
	if err := p.exchangeSeeds(ctx); err != nil {
		return nil, st, err
	}
	c, err := p.findModulus(ctx, maxPairs, &st)
	if err != nil || c == nil {
		return nil, st, err
	}
	return &Candidate{N: c.N, p: c.p, q: c.q}, st, nil
}

// Finish converts a found candidate into this party's threshold key share
// over net (fresh pair seeds), verifies the whole key with a test
// decryption, and returns the share.
func (P *Party) Finish(ctx context.Context, net Network, c *Candidate) (*paillier.KeyShare, Stats, error) {
	p := P.p
	p.net = net
	st := Stats{Timing: map[string]time.Duration{}}
	if c == nil || c.N == nil || c.p == nil || c.q == nil {
		return nil, st, fmt.Errorf("dealerless: no candidate to finish")
	}
	if err := p.exchangeSeeds(ctx); err != nil {
		return nil, st, err
	}
	start := time.Now()
	y, err := p.convert(ctx, &candidate{N: c.N, p: c.p, q: c.q})
	if err != nil {
		return nil, st, err
	}
	st.Timing["convert"] = time.Since(start)
	start = time.Now()
	ks, err := p.verify(ctx, c.N, y)
	if err != nil {
		return nil, st, err
	}
	st.Timing["verify"] = time.Since(start)
	return ks, st, nil
}

// Generate runs the whole generation for one party over net in one go
// (Search with Config.MaxCandidates, then Finish) and returns its key share
// of a verified key. Every party must call it with the same Bits, Parties
// and PublicSeed. On any error nothing is returned: there is no partial
// key.
func Generate(ctx context.Context, cfg Config, net Network) (*Result, error) {
	P, err := NewParty(cfg)
	if err != nil {
		return nil, err
	}
	c, st, err := P.Search(ctx, net, P.p.cfg.MaxCandidates)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("%w in %d candidate pairs", ErrNoModulus, st.Tried)
	}
	ks, st2, err := P.Finish(ctx, prefixed{net, "finish/"}, c)
	if err != nil {
		return nil, err
	}
	for k, v := range st2.Timing {
		st.Timing[k] = v
	}
	return &Result{Share: ks, Candidates: st.Tried, Timing: st.Timing, p: c.p, q: c.q}, nil
}

// prefixed names a Network's rounds apart from another use of the same
// network.
type prefixed struct {
	Network
	prefix string
}

func (n prefixed) Exchange(ctx context.Context, round string, out [][]byte) ([][]byte, error) {
	return n.Network.Exchange(ctx, n.prefix+round, out)
}

// exchange is Network.Exchange with every peer's body decoded into ring
// elements of r (nil r: raw bytes are returned as is).
func (p *party) exchange(ctx context.Context, round string, out [][]byte) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in, err := p.net.Exchange(ctx, round, out)
	if err != nil {
		return nil, fmt.Errorf("dealerless: round %s: %w", round, err)
	}
	if len(in) != p.n {
		return nil, fmt.Errorf("dealerless: round %s: network returned %d messages for %d parties", round, len(in), p.n)
	}
	return in, nil
}

func (p *party) readers(ctx context.Context, round string, out [][]*big.Int, r *ring) ([]*reader, error) {
	raw := make([][]byte, p.n)
	for k := range out {
		if k+1 != p.self {
			raw[k] = encodeElems(out[k], r.width)
		}
	}
	in, err := p.exchange(ctx, round, raw)
	if err != nil {
		return nil, err
	}
	rds := make([]*reader, p.n)
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		el, err := decodeElems(in[k-1], r.width, r.P)
		if err != nil {
			return nil, fmt.Errorf("dealerless: round %s, %s: %w", round, p.peer(k), err)
		}
		rds[k-1] = &reader{from: p.peer(k), elems: el}
	}
	return rds, nil
}

// exchangeSeeds sends each peer 32 random bytes; the pair seed is derived
// from both halves, so it is secret to the pair as long as the channel is
// confidential (Noise on libp2p).
func (p *party) exchangeSeeds(ctx context.Context) error {
	mine := make([][]byte, p.n)
	for k := 1; k <= p.n; k++ {
		if k != p.self {
			mine[k-1] = make([]byte, 32)
			if _, err := io.ReadFull(p.rnd, mine[k-1]); err != nil {
				return fmt.Errorf("dealerless: randomness: %w", err)
			}
		}
	}
	in, err := p.exchange(ctx, "seeds", mine)
	if err != nil {
		return err
	}
	p.seeds = make([][]byte, p.n)
	for k := 1; k <= p.n; k++ {
		if k == p.self {
			continue
		}
		if len(in[k-1]) != 32 {
			return fmt.Errorf("dealerless: %w from %s: seed of %d bytes", ErrMessage, p.peer(k), len(in[k-1]))
		}
		if p.self < k {
			p.seeds[k-1] = pairSeed(mine[k-1], in[k-1])
		} else {
			p.seeds[k-1] = pairSeed(in[k-1], mine[k-1])
		}
	}
	return nil
}

// publicStream is public randomness derived from the public seed.
func (p *party) publicStream(label string, data ...*big.Int) io.Reader {
	xof := sha3.NewSHAKE256()
	xof.Write([]byte("cohort/dealerless/public/v1"))
	xof.Write(p.cfg.PublicSeed)
	xof.Write([]byte(label))
	for _, d := range data {
		b := d.Bytes()
		xof.Write([]byte{byte(len(b) >> 8), byte(len(b))})
		xof.Write(b)
	}
	return xof
}

// randBelow returns a uniform integer in [0, bound) from this party's
// secret randomness.
func (p *party) randBelow(bound *big.Int) (*big.Int, error) {
	x, err := rand.Int(p.rnd, bound)
	if err != nil {
		return nil, fmt.Errorf("dealerless: randomness: %w", err)
	}
	return x, nil
}

func pow2(bits int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(bits)) }

// publicBelow draws an element of [0, bound) from a public stream (with 128
// extra bits, statistically uniform).
func publicBelow(r io.Reader, bound *big.Int) *big.Int {
	buf := make([]byte, (bound.BitLen()+7)/8+16)
	_, _ = io.ReadFull(r, buf) // a SHAKE stream never fails
	x := new(big.Int).SetBytes(buf)
	return x.Mod(x, bound)
}

// secretExp is base^e mod m for a secret exponent e ≥ 0 (constant time
// with the gmp build tag; math/big is not).
func secretExp(base, e, m *big.Int) *big.Int { return gmpexp.Exp(base, e, m) }
