package secureagg

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/paillier/paillertest"
)

// benchBits is the modulus size of the figures in docs/secureagg.md.
const benchBits = 2048

// benchPrimes returns two 1024-bit safe primes from the fixture cache
// (generating them takes longer than most rounds).
func benchPrimes(b *testing.B) (*big.Int, *big.Int) {
	b.Helper()
	p, q, err := paillertest.SafePrimes(benchBits / 2)
	if err != nil {
		b.Fatal(err)
	}
	return p, q
}

func benchConsortium(b *testing.B, n int) *consortium {
	b.Helper()
	dealt.Lock()
	defer dealt.Unlock()
	key := n*100000 + benchBits
	if c, ok := dealt.m[key]; ok {
		return c
	}
	p, q := benchPrimes(b)
	pk, shares, err := paillier.DealThresholdFromPrimes(rand.Reader, p, q, 1, n, (n-1)/2)
	if err != nil {
		b.Fatal(err)
	}
	ns := names(n)
	keys, err := keyring.AssignShares(ns, shares)
	if err != nil {
		b.Fatal(err)
	}
	c := &consortium{names: ns, pk: pk, keys: keys}
	dealt.m[key] = c
	return c
}

// BenchmarkAggregate measures one aggregation round over in-process parties
// sharing the machine's cores, both backends in one run: ns/op is the
// round's latency, cpu-ms/round the CPU time all parties spent on it; the
// other metrics are bytes sent per party per round (mean and max over
// parties) and the same as a multiple of the ciphertext size of one
// party's own input. Paillier: dec=all asks every party for a decryption
// share, dec=t+1 only t+1 (Config.Decryptors), as sum and quantile do.
// Lattice: plan=verified, the plan Aggregate uses (wrong shares
// detected). A million values run on the lattice backend
// only (Paillier takes hours per round).
func BenchmarkAggregate(b *testing.B) {
	for _, length := range []int{50, 10000, 1000000} {
		for _, n := range []int{3, 5, 9, 17} {
			b.Run(fmt.Sprintf("values=%d/N=%d/backend=lattice/plan=verified", length, n), func(b *testing.B) {
				benchAggregate(b, length, n, BackendLattice, "")
			})
			if length > 10000 {
				continue
			}
			for _, dec := range []string{"all", "t+1"} {
				b.Run(fmt.Sprintf("values=%d/N=%d/backend=paillier/dec=%s", length, n, dec), func(b *testing.B) {
					benchAggregate(b, length, n, BackendPaillier, dec)
				})
			}
		}
	}
}

func benchAggregate(b *testing.B, length, n int, backend Backend, dec string) {
	var c *consortium
	var cfg func(name string) Config
	var own float64
	if backend == BackendLattice {
		var keys map[string]*lattice.Keys
		c, keys = latticeConsortium(b, n)
		cfg = func(name string) Config {
			return Config{Backend: BackendLattice, Lattice: keys[name], FracBits: 16, ValueBits: 32, Timeout: 10 * time.Minute}
		}
	} else {
		c = benchConsortium(b, n)
		cfg = func(name string) Config {
			cfg := Config{Keys: c.keys[name], FracBits: 16, ValueBits: 32, Timeout: 10 * time.Minute}
			if dec == "t+1" {
				cfg.Decryptors = c.pk.Threshold + 1
			}
			return cfg
		}
	}
	net := jobtest.NewNetwork(c.names...)
	in := testInputs(c, min(length, 10000)) // |values| < 1,500: within 32 bits at 16 fractional bits
	for name, v := range in {
		full := make([]float64, length)
		for j := range full {
			full[j] = v[j%len(v)]
		}
		in[name] = full
	}
	step := testStep(c, c.names[0])
	if backend == BackendLattice {
		s, _, err := newLatticeRun(StepNetwork(net.Party(c.names[0]), step), step, cfg(c.names[0]), length)
		if err != nil {
			b.Fatal(err)
		}
		own = float64(s.layout.Ciphertexts() * s.keys.Params.CiphertextBytes())
	} else {
		s, _, err := newPaillierRun(StepNetwork(net.Party(c.names[0]), step), step, cfg(c.names[0]), length)
		if err != nil {
			b.Fatal(err)
		}
		own = float64(s.count * c.pk.CiphertextSize())
	}
	// One untimed round builds the key's precomputed tables,
	// which a node does once per key, not once per round.
	step.Round = 1 << 20
	for _, o := range runAll(b, net, step, cfg, in) {
		if o.err != nil {
			b.Fatal(o.err)
		}
	}
	net.ResetCounters()
	rounds := 0
	cpu0 := cputime.Used(b)
	for b.Loop() {
		step.Round = rounds
		outs := runAll(b, net, step, cfg, in)
		for _, name := range c.names {
			if outs[name].err != nil {
				b.Fatalf("%s: %v", name, outs[name].err)
			}
		}
		rounds++
	}
	cpu := cputime.Used(b) - cpu0
	var total, most float64
	for _, name := range c.names {
		x := float64(net.BytesSent(name)) / float64(rounds)
		total += x
		most = max(most, x)
	}
	mean := total / float64(n)
	b.ReportMetric(float64(cpu.Milliseconds())/float64(rounds), "cpu-ms/round")
	b.ReportMetric(mean, "B/party")
	b.ReportMetric(most, "B/party-max")
	b.ReportMetric(own, "B-own-ct")
	b.ReportMetric(mean/own, "x-own")
	b.ReportMetric(most/own, "x-own-max")
}
