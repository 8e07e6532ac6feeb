package secureagg

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/paillier"
)

// TestAggregateDrawsFromThePool checks that a Paillier aggregation takes
// its encryptions' randomisers from Config.Randomizers, one per
// ciphertext, and still sums exactly; with a deterministic Random it
// leaves the pool alone.
func TestAggregateDrawsFromThePool(t *testing.T) {
	c := testConsortium(t, 3)
	const n = 300
	in := testInputs(c, n)
	want := plainSum(in, c.names)
	cfg := testConfig(c, c.names[0])
	enc, err := planEncoding(len(c.names), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := newPaillierScheme(c.pk, enc, n, len(c.names))
	if err != nil {
		t.Fatal(err)
	}
	pools := map[string]*paillier.RandomizerPool{}
	for _, name := range c.names {
		p, err := paillier.NewRandomizerPool(context.Background(), &c.pk.PublicKey, nil, sc.count)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		pools[name] = p
	}
	for _, name := range c.names {
		waitReady(t, pools[name], sc.count)
		pools[name].Pause() // what is taken stays taken: the counts below are exact
	}
	for round, random := range []bool{false, true} {
		step := testStep(c, c.names[0])
		step.Round = round
		outs := runAll(t, jobtest.NewNetwork(c.names...), step, func(name string) Config {
			cfg := testConfig(c, name)
			cfg.Randomizers = pools[name]
			if random {
				cfg.Random = rand.Reader
			}
			return cfg
		}, in)
		for _, name := range c.names {
			if outs[name].err != nil {
				t.Fatalf("random=%v: %s: %v", random, name, outs[name].err)
			}
			checkSum(t, outs[name].res.Sum, want, 1e-3)
			if st := pools[name].Stats(); st.Taken != int64(sc.count) || st.Computed != 0 {
				t.Fatalf("random=%v: %s's pool: %+v, want %d taken and none computed", random, name, st, sc.count)
			}
		}
	}
}

// waitReady waits until p holds n randomisers (the filler's event; the
// test's own deadline is the limit).
func waitReady(t *testing.T, p *paillier.RandomizerPool, n int) {
	t.Helper()
	for p.Ready() < n {
		select {
		case <-t.Context().Done():
			t.Fatalf("pool holds %d of %d randomisers", p.Ready(), n)
		default:
		}
		time.Sleep(time.Millisecond)
	}
}
