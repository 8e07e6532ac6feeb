package secureagg

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
)

// testBits is the modulus size for tests: small so the package tests stay
// fast; the benchmarks use 2048. paillier refuses such keys unless the test
// binary opts in.
const testBits = 512

func init() { testkit.SmallKeys() }

// TestMain runs sixteen tests at once: the package's time is its protocols'
// hop deadlines (a dropped or tampering party is found when a hop's time
// runs out, eleven hops after the start), not computation (7 s of CPU in
// 250 s of tests, 28 Nov 2026). Eight at once left the six dropped-party
// subtests of 11 s each waiting for a slot: 21 s, and 14 s at sixteen
// (30 Nov 2026, 6 s of CPU either way).
func TestMain(m *testing.M) {
	testkit.WaitingParallel(16)
	os.Exit(m.Run())
}

// dealt caches one dealt key per consortium size for the test binary, since
// dealing dominates test time otherwise.
var dealt = struct {
	sync.Mutex
	m map[int]*consortium
}{m: map[int]*consortium{}}

type consortium struct {
	names []string
	pk    *paillier.ThresholdPublicKey
	keys  map[string]*Keys
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("org%02d", i+1)
	}
	return out
}

func testConsortium(tb testing.TB, n int) *consortium {
	tb.Helper()
	return dealConsortium(tb, n, testBits)
}

func dealConsortium(tb testing.TB, n, bits int) *consortium {
	tb.Helper()
	dealt.Lock()
	defer dealt.Unlock()
	key := n*100000 + bits
	if c, ok := dealt.m[key]; ok {
		return c
	}
	ns := names(n)
	pk, keys, err := keyring.Deal(rand.Reader, bits, ns, 0)
	if err != nil {
		tb.Fatal(err)
	}
	c := &consortium{names: ns, pk: pk, keys: keys}
	dealt.m[key] = c
	return c
}

// coordinatedBy is a step of every member that coordinator coordinates.
func coordinatedBy(c *consortium, coordinator string) job.Step {
	return job.Step{Job: "job-1", Phase: "sum", Round: 3, Attempt: 1, Parties: c.names, Coordinator: coordinator}
}

// testStep is a step of every member whose tree is rooted at root (Root):
// its coordinator is another member, which the tree places at a leaf. Only
// the first two members by name can be the root of a step of every member.
func testStep(c *consortium, root string) job.Step {
	for i := len(c.names) - 1; i >= 0; i-- {
		if s := coordinatedBy(c, c.names[i]); c.names[i] != root && Root(s) == root {
			return s
		}
	}
	if len(c.names) == 1 {
		return coordinatedBy(c, root)
	}
	panic(fmt.Sprintf("secureagg test: %s cannot root a step of every member", root))
}

func testConfig(c *consortium, name string) Config {
	return Config{Keys: c.keys[name], FracBits: 16, ValueBits: 40, Timeout: time.Minute}
}

// inputs returns distinct vectors per party with negatives and fractions.
func testInputs(c *consortium, n int) map[string][]float64 {
	out := map[string][]float64{}
	for i, name := range c.names {
		v := make([]float64, n)
		for j := range v {
			v[j] = float64((i+1)*(j+3)%97) - 40.25 + float64(j)/7
		}
		out[name] = v
	}
	return out
}

type outcome struct {
	res *Result
	err error
}

// runAll runs Aggregate at every party of step concurrently.
func runAll(t testing.TB, net *jobtest.Network, step job.Step, cfg func(name string) Config, inputs map[string][]float64) map[string]outcome {
	t.Helper()
	return runEach(step.Parties, func(ctx context.Context, name string) (*Result, error) {
		return Aggregate(ctx, net.Party(name), step, cfg(name), inputs[name])
	})
}

// wantRootRefused runs Aggregate at every party of step, whose root
// (org01) tampers with what it sends down (newNet makes the network that
// tampers), and checks that nothing is decrypted: org02 and org03 refuse
// (ErrTampered, with why in the text) on what they check, not on a
// deadline, and the root, which would wait for their shares until its own
// deadline, is stopped once they have returned. A party that decrypted
// anything fails the test at once. A refusal for another reason (a sketch
// the party checks against never came: on a loaded machine its maker can
// refuse before the party's key reaches it) is tried again on a fresh
// network (testkit.RetryLonger, from 5 s hops).
func wantRootRefused(t *testing.T, newNet func() *jobtest.Network, step job.Step, cfg func(name string) Config, inputs map[string][]float64, why string) {
	t.Helper()
	testkit.RetryLonger(t, 5*time.Second, func(hop time.Duration) error {
		outs := runRootRefused(newNet(), step, cfg, inputs, hop)
		for n, o := range outs {
			if o.res != nil {
				t.Errorf("%s has a result of a total the root tampered with", n)
			}
		}
		for _, n := range []string{"org02", "org03"} {
			if err := outs[n].err; !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), why) {
				return fmt.Errorf("%s: %v, want ErrTampered with %q", n, err, why)
			}
		}
		if err := outs["org01"].err; !errors.Is(err, ErrTooFewShares) && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("root: %v, want too few shares or stopped waiting for them", err)
		}
		return nil
	})
}

// wantDroppedNamed runs step with party drop dropped (mode) on a fresh
// network and fan-out 2, each party configured by cfg with the hop
// testkit.RetryLonger gives, and checks that every live party, the root,
// inside or below the failed subtree, ends with a MissingError naming
// drop rather than a bare timeout (and, with unformed, one that says no
// total was formed).
func wantDroppedNamed(t *testing.T, names []string, step job.Step, drop string, mode jobtest.DropMode, cfg func(name string) Config, in map[string][]float64, unformed bool) {
	t.Helper()
	testkit.RetryLonger(t, raceSlowdown*time.Second, func(hop time.Duration) error {
		net := jobtest.NewNetwork(names...)
		net.Drop(drop, mode)
		outs := runAll(t, net, step, func(n string) Config {
			c := cfg(n)
			c.Fanout, c.Timeout = 2, hop
			return c
		}, in)
		for _, n := range names {
			var m *MissingError
			if n != drop && (!errors.As(outs[n].err, &m) || !slices.Equal(m.Parties, []string{drop}) || unformed && m.Formed) {
				return fmt.Errorf("%s: %v, want MissingError naming %s", n, outs[n].err, drop)
			}
		}
		return nil
	})
}

// runRootRefused runs Aggregate at every party of step with hops of hop
// and stops the root once every other party has returned.
func runRootRefused(net *jobtest.Network, step job.Step, cfg func(name string) Config, inputs map[string][]float64, hop time.Duration) map[string]outcome {
	root := Root(step)
	var others sync.WaitGroup
	others.Add(len(step.Parties) - 1)
	return runEach(step.Parties, func(ctx context.Context, name string) (*Result, error) {
		c := cfg(name)
		c.Timeout = hop
		if name != root {
			defer others.Done()
			return Aggregate(ctx, net.Party(name), step, c, inputs[name])
		}
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { // ends when the others have, or when Aggregate returned
			defer stop()
			others.Wait()
		}()
		return Aggregate(ctx, net.Party(name), step, c, inputs[name])
	})
}

// runEach runs run at every party concurrently and collects the outcomes.
func runEach(parties []string, run func(ctx context.Context, name string) (*Result, error)) map[string]outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var mu sync.Mutex
	out := map[string]outcome{}
	var wg sync.WaitGroup
	for _, name := range parties {
		wg.Go(func() {
			res, err := run(ctx, name)
			mu.Lock()
			out[name] = outcome{res, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func plainSum(inputs map[string][]float64, parties []string) []float64 {
	var sum []float64
	for _, p := range parties {
		if sum == nil {
			sum = make([]float64, len(inputs[p]))
		}
		for j, x := range inputs[p] {
			sum[j] += x
		}
	}
	return sum
}

func checkSum(t *testing.T, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("sum has %d values, want %d", len(got), len(want))
	}
	for j := range want {
		if math.Abs(got[j]-want[j]) > tol {
			t.Fatalf("sum[%d] = %v, want %v (±%v)", j, got[j], want[j], tol)
		}
	}
}

type bigInt = big.Int

func bigs(xs ...int64) []*big.Int {
	out := make([]*big.Int, len(xs))
	for i, x := range xs {
		out[i] = big.NewInt(x)
	}
	return out
}

func paillierCtx() paillier.ProofContext {
	return paillier.ProofContext{Job: "job-1", Phase: "sum", Round: 3, Attempt: 1}
}

// runChannels runs Aggregate at every party on every sub-channel of step
// at once (job.Step.Sub), within a minute; outcomes are keyed by
// {party, channel}.
func runChannels(net *jobtest.Network, step job.Step, parties, channels []string, cfg func(name string) Config, inputs map[string]map[string][]float64) map[[2]string]outcome {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	got := map[[2]string]outcome{}
	var wg sync.WaitGroup
	for _, name := range parties {
		for _, ch := range channels {
			wg.Go(func() {
				res, err := Aggregate(ctx, net.Party(name), step.Sub(ch), cfg(name), inputs[ch][name])
				mu.Lock()
				got[[2]string{name, ch}] = outcome{res, err}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return got
}
