package secureagg

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
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

// TestPrecomputeCountsCiphertexts checks that an aggregation counts the
// ciphertexts it will make, not its values, towards paillier's wide
// table: a few dozen packed ciphertexts must not build the wide table
// that only hundreds of encryptions pay for. The key is dealt for this
// test alone, so that no other test's uses are counted with it, and the
// test is not parallel, so that no other test maps tables meanwhile.
func TestPrecomputeCountsCiphertexts(t *testing.T) {
	names := names(2)
	pk, keys, err := keyring.Deal(rand.Reader, testBits, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := &consortium{names: names, pk: pk, keys: keys}
	const n = 600 // at 512 bits the wide table pays from 319 uses; 600 values pack into 50 ciphertexts
	sc, err := newPaillierScheme(pk, mustEncoding(t, c), n, len(names))
	if err != nil {
		t.Fatal(err)
	}
	if sc.count*len(names)*2 > n/2 { // each party counts its ciphertexts twice: precomputed, then encrypted
		t.Fatalf("%d values pack into %d ciphertexts: too many for this test", n, sc.count)
	}
	before := paillier.MappedFixedBaseBytes()
	in := testInputs(c, n)
	outs := runAll(t, jobtest.NewNetwork(names...), testStep(c, names[0]), func(name string) Config { return testConfig(c, name) }, in)
	for _, name := range names {
		if outs[name].err != nil {
			t.Fatalf("%s: %v", name, outs[name].err)
		}
		checkSum(t, outs[name].res.Sum, plainSum(in, names), 1e-3)
	}
	if grew := paillier.MappedFixedBaseBytes() - before; grew > 0 {
		t.Fatalf("%d packed ciphertexts mapped %d bytes of fixed-base tables: the aggregation counted its %d values as encryptions", sc.count, grew, n)
	}
}

// mustEncoding is the fixed-point encoding of testConfig for c.
func mustEncoding(t *testing.T, c *consortium) *encoding {
	t.Helper()
	enc, err := planEncoding(len(c.names), testConfig(c, c.names[0]))
	if err != nil {
		t.Fatal(err)
	}
	return enc
}
