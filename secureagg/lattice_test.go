package secureagg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// The lattice backend's sums are exact: the same totals as the plaintext
// sums of the fixed-point values, over trees of every shape, one and several
// ciphertexts, a coordinator inside or outside the step.
func TestLatticeSums(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, fanout, length int
		coordinator       string
	}{
		{3, 0, 5, "org02"},
		{5, 0, 50, "org01"},
		{5, 2, 20000, "org05"}, // two ciphertexts
		{9, 2, 30, "org04"},    // depth 3
		{9, 0, 30, "outside"},  // the coordinator is not a party: the first party is the root
		{17, 0, 200, "org17"},
	} {
		t.Run(fmt.Sprintf("N=%d/k=%d/len=%d/coord=%s", tc.n, tc.fanout, tc.length, tc.coordinator), func(t *testing.T) {
			t.Parallel()
			c, keys := latticeConsortium(t, tc.n)
			net := jobtest.NewNetwork(c.names...)
			step := coordinatedBy(c, tc.coordinator)
			in, want := exactInputs(c, tc.length, uint64(tc.n*1000+tc.length))
			outs := runAll(t, net, step, func(name string) Config {
				cfg := latticeConfig(keys, name)
				cfg.Fanout = tc.fanout
				return cfg
			}, in)
			for _, name := range c.names {
				o := outs[name]
				if o.err != nil {
					t.Fatalf("%s: %v", name, o.err)
				}
				if !slices.Equal(o.res.Sum, want) {
					t.Fatalf("%s: the sum differs from the exact sum", name)
				}
				if !slices.Equal(o.res.Included, c.names) || len(o.res.Excluded) != 0 || o.res.Noise != nil {
					t.Fatalf("%s: included %v excluded %v noise %v", name, o.res.Included, o.res.Excluded, o.res.Noise)
				}
			}
		})
	}
}

// Both backends give the same sums, to the bit, on the same inputs (the
// fixed-point encoding and decoding are the same), noise aside.
func TestLatticeMatchesPaillier(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	keys := testLattice(t, c)
	in := testInputs(c, 300)
	step := testStep(c, "org01")
	paillierRes := runAll(t, jobtest.NewNetwork(c.names...), step, func(n string) Config { return testConfig(c, n) }, in)
	latticeRes := runAll(t, jobtest.NewNetwork(c.names...), step, func(n string) Config { return latticeConfig(keys, n) }, in)
	for _, n := range c.names {
		if paillierRes[n].err != nil || latticeRes[n].err != nil {
			t.Fatalf("%s: %v / %v", n, paillierRes[n].err, latticeRes[n].err)
		}
		if !slices.Equal(paillierRes[n].res.Sum, latticeRes[n].res.Sum) {
			t.Fatalf("%s: the backends' sums differ", n)
		}
	}
}

// The wrap bound: inputs up to ±(2^ValueBits−1) are summed exactly by
// every party count, ±2^ValueBits is refused at its party before anything
// is encrypted (naming the bound, not the value), as is NaN; the lattice
// backend refuses a ValueBits it cannot carry, naming the bound.
func TestLatticeWrapBound(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 3)
	step := testStep(c, "org01")
	in, want := exactInputs(c, 40, 3) // holds ±(2^40−1)·2^-16
	outs := runAll(t, jobtest.NewNetwork(c.names...), step, func(n string) Config { return latticeConfig(keys, n) }, in)
	if outs["org02"].err != nil || !slices.Equal(outs["org02"].res.Sum, want) {
		t.Fatalf("edge values: %v", outs["org02"].err)
	}
	for _, bad := range []float64{math.Ldexp(1, 40-16), -math.Ldexp(1, 40-16), math.NaN(), math.Inf(1)} {
		in["org02"][7] = bad
		step.Attempt++
		outs = runAll(t, jobtest.NewNetwork(c.names...), step, func(n string) Config { return latticeConfig(keys, n) }, in)
		err := outs["org02"].err
		if !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "2^40") || strings.Contains(err.Error(), "1.6777216e+07") {
			t.Fatalf("input %v: %v, want ErrRange naming 2^40", bad, err)
		}
		var miss *MissingError
		if err := outs["org01"].err; !errors.As(err, &miss) || !slices.Equal(miss.Parties, []string{"org02"}) {
			t.Fatalf("root with %v at org02: %v", bad, err)
		}
	}
	cfg := latticeConfig(keys, "org01")
	cfg.ValueBits = 63
	_, err := Aggregate(t.Context(), jobtest.NewNetwork(c.names...).Party("org01"), step, cfg, []float64{1})
	if err == nil || !strings.Contains(err.Error(), "2^62") {
		t.Fatalf("63 value bits: %v, want a refusal naming 2^62", err)
	}
	noisy := latticeConfig(keys, "org01")
	noisy.ValueBits = 62
	noisy.Noise = &Noise{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1}
	if err := LatticeFits(3, noisy); err == nil || !strings.Contains(err.Error(), "2^62") {
		t.Fatalf("62 value bits and noise: %v, want a refusal naming 2^62", err)
	}
}

// A party that is down before it contributes is named missing by the
// root and every live party; the re-run without it sums the others.
func TestLatticeDroppedParty(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 5)
	// Fanout 2: org01 (root) has children org02 and org03; org02 has
	// children org04 and org05.
	for _, tc := range []struct {
		drop string
		mode jobtest.DropMode
	}{{"org03", jobtest.DropHang}, {"org02", jobtest.DropFail}, {"org05", jobtest.DropFail}} {
		t.Run(tc.drop, func(t *testing.T) {
			t.Parallel()
			step := testStep(c, "org01")
			in, _ := exactInputs(c, 8, 5)
			wantDroppedNamed(t, c.names, step, tc.drop, tc.mode, func(n string) Config { return latticeConfig(keys, n) }, in, true)
			cfg := func(n string) Config {
				cfg := latticeConfig(keys, n)
				cfg.Fanout = 2
				return cfg
			}
			step.Attempt++
			step.Parties = slices.DeleteFunc(slices.Clone(c.names), func(n string) bool { return n == tc.drop })
			net := jobtest.NewNetwork(c.names...)
			outs := runAll(t, net, step, cfg, in)
			if outs["org01"].err != nil {
				t.Fatal(outs["org01"].err)
			}
			if want := plainSum(in, step.Parties); !slices.Equal(outs["org01"].res.Sum, want) {
				t.Fatalf("re-run sum %v, want %v", outs["org01"].res.Sum, want)
			}
		})
	}
}

// A party whose decryption share is lost after the total was formed is
// named and excluded; the root re-plans over the others and every party
// gets the exact sum, that party's input included. org02 is a child of
// the root: at N = 5 it is as if it died after sending up, and the others'
// checks do not wait for it (its sketches went out with its subtree).
func TestLatticeLateShare(t *testing.T) {
	t.Parallel()
	for _, n := range []int{5, 9} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			c, keys := latticeConsortium(t, n)
			in, want := exactInputs(c, 12, 9)
			testkit.RetryLonger(t, raceSlowdown*time.Second, func(hop time.Duration) error {
				net := jobtest.NewNetwork(c.names...)
				net.Intercept("org02", func(to string, m *wire.Message) *wire.Message {
					if m.Type == TypeShare {
						return nil
					}
					return m
				})
				outs := runAll(t, net, testStep(c, "org01"), func(name string) Config {
					cfg := latticeConfig(keys, name)
					cfg.Timeout = hop // the lost share costs a few hops
					return cfg
				}, in)
				for _, name := range c.names {
					o := outs[name]
					if o.err != nil {
						return fmt.Errorf("%s: %w", name, o.err)
					}
					if why := o.res.Excluded["org02"]; len(o.res.Excluded) != 1 || !strings.Contains(why, "in time") {
						return fmt.Errorf("%s: excluded %v", name, o.res.Excluded)
					}
					if !slices.Equal(o.res.Sum, want) || !slices.Equal(o.res.Included, c.names) {
						return fmt.Errorf("%s: wrong sum or included %v", name, o.res.Included)
					}
				}
				return nil
			})
		})
	}
}

// A party that restarts mid-round (after its contribution went up) comes
// back with its key re-read from its files and a fresh encryption of its
// input. Its new contribution is not the one in the total, so it refuses
// to decrypt the total (its own input, as it now holds it, is not in it);
// the root excludes it and every other party gets the exact sum, its first
// contribution included.
func TestLatticeRestartedParty(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 7)
	// Fanout 2: org04 is a leaf under org02, not a child of the root.
	const who = "org04"
	dir := t.TempDir()
	if err := keyring.SaveLattice(dir, keys[who]); err != nil {
		t.Fatal(err)
	}
	step := testStep(c, "org01")
	in, want := exactInputs(c, 16, 11)
	testkit.RetryLonger(t, raceSlowdown*time.Second, func(hop time.Duration) error {
		outs, restarted := runRestarted(c.names, step, in, who, func(n string) Config {
			cfg := latticeConfig(keys, n)
			cfg.Fanout, cfg.Timeout = 2, hop
			if n == who {
				reread, err := keyring.LoadLattice(dir)
				if err != nil {
					t.Error(err)
				}
				cfg.Lattice = reread
			}
			return cfg
		})
		if !errors.Is(restarted.err, ErrTampered) || !errors.Is(restarted.err, lattice.ErrPolicy) {
			return fmt.Errorf("restarted party: %v, want a refusal to decrypt a total without its input", restarted.err)
		}
		for _, n := range c.names {
			if o := outs[n]; n != who && (o.err != nil || !slices.Equal(o.res.Sum, want) || o.res.Excluded[who] == "") {
				return fmt.Errorf("%s: %v; want the exact sum with %s excluded", n, o.err, who)
			}
		}
		return nil
	})
}

// runRestarted runs Aggregate at every party of step; party who goes down
// once its contribution is on its way up and comes back at once with a
// fresh Aggregate (its configuration from cfg, read again), whose outcome
// is restarted.
func runRestarted(names []string, step job.Step, in map[string][]float64, who string, cfg func(string) Config) (outs map[string]outcome, restarted outcome) {
	net := jobtest.NewNetwork(names...)
	crash, crashed := context.WithCancel(context.Background())
	defer crashed()
	net.Intercept(who, func(to string, m *wire.Message) *wire.Message {
		if m.Type == TypeUp {
			crashed() // the node goes down once its contribution is on its way
		}
		return m
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		<-crash.Done()
		net.Intercept(who, nil)
		restarted.res, restarted.err = Aggregate(context.Background(), net.Party(who), step, cfg(who), in[who])
	})
	outs = map[string]outcome{}
	var mu sync.Mutex
	for _, n := range names {
		wg.Go(func() {
			ctx := context.Background()
			if n == who {
				ctx = crash
			}
			res, err := Aggregate(ctx, net.Party(n), step, cfg(n), in[n])
			if n == who {
				// It may end before its contribution leaves (a hop
				// missed on a starved machine): restart it anyway, so
				// that the verdict is wrong and retried, not a hang.
				crashed()
			}
			mu.Lock()
			outs[n] = outcome{res, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return outs, restarted
}

// tamperShares makes party name send decryption shares whose last
// coefficient is off by one: well formed, with no proof to fail, so only
// the comparison of quorums can find them.
func tamperShares(net *jobtest.Network, name string) {
	net.Intercept(name, func(to string, m *wire.Message) *wire.Message {
		if m.Type != TypeShare {
			return m
		}
		i := len(m.Body) - 8
		c := binary.LittleEndian.Uint64(m.Body[i:])
		if c > 0 {
			c--
		} else {
			c++
		}
		binary.LittleEndian.PutUint64(m.Body[i:], c)
		return m
	})
}

// A party whose decryption shares are wrong is detected by the verified
// plan and named by the blame plan: it is excluded, and every party gets
// the exact sum, its input included. With three parties (a quorum of two)
// the wrong share is detected but its maker cannot be told apart: the
// aggregation fails naming the suspects, and no wrong sum is returned.
func TestLatticeTamperedShareNamed(t *testing.T) {
	t.Parallel()
	for _, n := range []int{4, 5, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			c, keys := latticeConsortium(t, n)
			net := jobtest.NewNetwork(c.names...)
			tamperShares(net, "org03")
			in, want := exactInputs(c, 30, 13)
			outs := runAll(t, net, testStep(c, "org01"), func(name string) Config { return latticeConfig(keys, name) }, in)
			for _, name := range c.names {
				o := outs[name]
				if o.err != nil {
					t.Fatalf("%s: %v", name, o.err)
				}
				if why := o.res.Excluded["org03"]; len(o.res.Excluded) != 1 || !strings.Contains(why, "wrong decryption share") {
					t.Fatalf("%s: excluded %v, want org03 for a wrong share", name, o.res.Excluded)
				}
				if !slices.Equal(o.res.Sum, want) || !slices.Equal(o.res.Included, c.names) {
					t.Fatalf("%s: wrong sum or included %v", name, o.res.Included)
				}
			}
		})
	}
	t.Run("3", func(t *testing.T) {
		t.Parallel()
		c, keys := latticeConsortium(t, 3)
		net := jobtest.NewNetwork(c.names...)
		tamperShares(net, "org03")
		in, _ := exactInputs(c, 30, 13)
		outs := runAll(t, net, testStep(c, "org01"), func(name string) Config { return latticeConfig(keys, name) }, in)
		if err := outs["org01"].err; !errors.Is(err, ErrTooFewShares) || !strings.Contains(err.Error(), "org03") {
			t.Fatalf("root: %v, want a failure naming the suspects", err)
		}
		for _, name := range c.names[1:] {
			if err := outs[name].err; !errors.Is(err, ErrRoot) || outs[name].res != nil {
				t.Fatalf("%s: %v, want the root's failure and no sum", name, err)
			}
		}
	})
}

// A root (or a coordinator lying about who coordinates) that sends down,
// as the total, one party's ciphertext under the list of every input, to
// have it decrypted alone, is caught: every party checks the total
// against the root's own mask and the sketches the root's children sent
// it, and makes no share of anything else. Nothing is decrypted.
func TestLatticeDecryptionOracleRefused(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 3)
	newNet := func() *jobtest.Network {
		net := jobtest.NewNetwork(c.names...)
		// The root's own ciphertext under the total's header: the "total"
		// would decrypt to the root's input alone.
		net.Intercept("org01", rewriteLatticeDown(t, func(comps [][]byte) [][]byte {
			total, own := comps[0], comps[1]
			forged := append(slices.Clone(total[:len(total)-coeffBytes(t, own)]), own[len(own)-coeffBytes(t, own):]...)
			return [][]byte{forged, own}
		}))
		return net
	}
	in, _ := exactInputs(c, 4, 17)
	wantRootRefused(t, newNet, testStep(c, "org01"), func(n string) Config { return latticeConfig(keys, n) }, in, "not the sum of its parts")
}

// coeffBytes is the length of the coefficients that end an mhe frame
// (a version byte, the header's length as a uvarint, the header).
func coeffBytes(t *testing.T, b []byte) int {
	n, k := binary.Uvarint(b[1:])
	if k <= 0 {
		t.Fatal("not an mhe frame")
	}
	return len(b) - 1 - k - int(n)
}

// Differential-privacy noise works on the lattice backend as on Paillier:
// each party's share is drawn inside its encryption, the total carries
// noise of the calibrated spread, every party gets the same noisy sum and
// the report.
func TestLatticeNoise(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 5)
	for _, nz := range []*Noise{
		{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1},
		{Mechanism: Gaussian, Epsilon: 0.5, Delta: 1e-6, Sensitivity: 1, Colluders: 2},
	} {
		t.Run(string(nz.Mechanism), func(t *testing.T) {
			t.Parallel()
			in := testInputs(c, 400)
			outs := runAll(t, jobtest.NewNetwork(c.names...), testStep(c, "org01"), func(n string) Config {
				cfg := latticeConfig(keys, n)
				cfg.Noise = nz
				return cfg
			}, in)
			if outs["org01"].err != nil {
				t.Fatal(outs["org01"].err)
			}
			res := outs["org01"].res
			rep := res.Noise
			if rep == nil || rep.Mechanism != nz.Mechanism || rep.Epsilon != nz.Epsilon || rep.Delta != nz.Delta || rep.Shares != 5 {
				t.Fatalf("noise report %+v", rep)
			}
			want := plainSum(in, c.names)
			var ss float64
			for j := range want {
				d := res.Sum[j] - want[j]
				ss += d * d
			}
			sd := math.Sqrt(ss / float64(len(want)))
			target := rep.Scale
			if nz.Mechanism == Laplace {
				target *= math.Sqrt2
			}
			target *= math.Sqrt(float64(rep.Shares) / float64(rep.Shares-rep.Colluders))
			if sd < target/2 || sd > target*2 {
				t.Fatalf("noise sd %v, target %v", sd, target)
			}
			for _, n := range c.names {
				if outs[n].err != nil || !slices.Equal(outs[n].res.Sum, res.Sum) {
					t.Fatalf("%s disagrees on the noisy sum: %v", n, outs[n].err)
				}
			}
		})
	}
}
