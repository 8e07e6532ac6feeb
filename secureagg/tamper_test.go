package secureagg

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

func TestLateShareExcluded(t *testing.T) {
	t.Parallel()
	// org02's share is lost on the way: the root names it after the share
	// deadline and decrypts with the others (asking org04, org05 first when
	// only t+1 = 3 parties were asked up front).
	for _, decryptors := range []int{0, 3} {
		t.Run(fmt.Sprintf("decryptors=%d", decryptors), func(t *testing.T) {
			t.Parallel()
			c := testConsortium(t, 5)
			in := testInputs(c, 12)
			testkit.RetryLonger(t, time.Second, func(hop time.Duration) error {
				net := jobtest.NewNetwork(c.names...)
				net.Intercept("org02", func(to string, m *wire.Message) *wire.Message {
					if m.Type == TypeShare {
						return nil
					}
					return m
				})
				outs := runAll(t, net, testStep(c, "org01"), func(n string) Config {
					cfg := testConfig(c, n)
					cfg.Timeout, cfg.Decryptors = hop, decryptors
					return cfg
				}, in)
				for _, n := range c.names {
					o := outs[n]
					if o.err != nil {
						return fmt.Errorf("%s: %w", n, o.err)
					}
					if why := o.res.Excluded["org02"]; len(o.res.Excluded) != 1 || !strings.Contains(why, "in time") {
						return fmt.Errorf("%s: excluded %v", n, o.res.Excluded)
					}
				}
				for _, n := range c.names {
					checkSum(t, outs[n].res.Sum, plainSum(in, c.names), 5.0/(1<<16))
				}
				return nil
			})
		})
	}
}

func TestTamperedResultCaught(t *testing.T) {
	t.Parallel()
	// Every party unpacks and range-checks the root's result itself, so a
	// root (or a relay) that sends an impossible sum is caught, not believed.
	c := testConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	net.Intercept("org01", func(to string, m *wire.Message) *wire.Message {
		if m.Type != TypeResult {
			return m
		}
		var body resultBody
		if err := wire.Unmarshal(m.Body, &body); err != nil {
			t.Error(err)
			return m
		}
		body.Plain[0] = new(big.Int).Sub(c.pk.N, big.NewInt(1)).Bytes()
		m.Body, _ = wire.Marshal(body)
		return m
	})
	outs := runAll(t, net, testStep(c, "org01"), func(n string) Config { return testConfig(c, n) }, testInputs(c, 4))
	if outs["org01"].err != nil {
		t.Fatal(outs["org01"].err)
	}
	for _, n := range c.names[1:] {
		if err := outs[n].err; !errors.Is(err, ErrRoot) || !errors.Is(err, ErrRange) {
			t.Fatalf("%s: %v, want ErrRoot and ErrRange", n, err)
		}
	}
}

// Several aggregations in one step, each on its own sub-channel
// (job.Step.Sub), run at once without their messages answering each
// other: every party gets each channel's own sum. Without the channels the
// same concurrent calls would share message keys.
func TestAggregationsOnSubChannels(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org02")
	channels := []string{"rows", "cols", "score"}
	inputs := map[string]map[string][]float64{}
	for k, ch := range channels {
		in := testInputs(c, 4+k)
		for _, name := range c.names {
			for j := range in[name] {
				in[name][j] += float64(100 * k)
			}
		}
		inputs[ch] = in
	}
	got := runChannels(net, step, c.names, channels, func(name string) Config { return testConfig(c, name) }, inputs)
	for _, ch := range channels {
		want := plainSum(inputs[ch], c.names)
		for _, name := range c.names {
			o := got[[2]string{name, ch}]
			if o.err != nil {
				t.Fatalf("%s on %s: %v", name, ch, o.err)
			}
			checkSum(t, o.res.Sum, want, 5.0/(1<<16))
		}
	}
}

// A root (or a coordinator lying about who coordinates) that sends a
// party's own ciphertext back down as the total, to have it decrypted, is
// caught: every party forms the total from the root's components and
// checks each child's product against the digest that child sent it, and
// makes no decryption share of anything else. Nothing is decrypted.
func TestDecryptionOracleRefused(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	step := testStep(c, "org01") // org01 is the root; org02 and org03 its children
	newNet := func() *jobtest.Network {
		net := jobtest.NewNetwork(c.names...)
		var leaf []byte // org02's encrypted input, as it sent it up
		net.Intercept("org02", func(to string, m *wire.Message) *wire.Message {
			if m.Type == TypeUp {
				var body ciphertextBody
				if err := wire.Unmarshal(m.Body, &body); err == nil {
					leaf = body.Ciphertexts
				}
			}
			return m
		})
		net.Intercept("org01", func(to string, m *wire.Message) *wire.Message {
			if m.Type != TypeDown {
				return m
			}
			var body ciphertextBody
			if err := wire.Unmarshal(m.Body, &body); err != nil || len(body.Components) != 3 {
				t.Errorf("down body: %v", err)
				return m
			}
			// Keep org02's product, make the root's own input and org03's
			// product encryptions of zero: the "total" is org02's input alone.
			zeros := make([]*big.Int, c.count(t, leaf))
			for i := range zeros {
				zeros[i] = new(big.Int)
			}
			zero, err := c.pk.EncryptMany(rand.Reader, zeros)
			if err != nil {
				t.Error(err)
				return m
			}
			z, _ := c.pk.MarshalCiphertexts(zero)
			body.Components = [][]byte{z, leaf, z}
			m.Body, _ = wire.Marshal(body)
			return m
		})
		return net
	}
	wantRootRefused(t, newNet, step, func(n string) Config { return testConfig(c, n) }, testInputs(c, 4), "org03") // org03's product is not as org03 sent it
}

// Fold finds the root's complete result, or the missing parties (with
// their own errors when they withdrew), and whether the total was formed.
func TestFold(t *testing.T) {
	t.Parallel()
	step := job.Step{Parties: []string{"a", "b", "c"}, Coordinator: "c"} // a is the root
	full := &Outcome{Sum: []float64{3}, Included: []string{"a", "b", "c"}, Formed: true}
	v, err := Fold(step, map[string]*Outcome{"a": full, "b": {Included: full.Included, Formed: true}}, map[string]string{"c": "late report"}, []string{"c"})
	if err != nil || v.Result == nil || v.Result.Sum[0] != 3 {
		t.Fatalf("complete result with a late report: %+v %v", v, err)
	}
	v, err = Fold(step, map[string]*Outcome{"a": {Missing: []string{"b"}}, "c": {Missing: []string{"a"}}}, map[string]string{"b": "x"}, []string{"b"})
	if err != nil || v.Result != nil || v.Formed || len(v.Missing) != 2 {
		t.Fatalf("up-phase failure: %+v %v", v, err)
	}
	v, err = Fold(step, map[string]*Outcome{"b": {Missing: []string{"a"}, Formed: true}}, map[string]string{"a": "x", "c": "too few shares"}, []string{"a"})
	if err != nil || !v.Formed || v.Failed["c"] != "too few shares" {
		t.Fatalf("failure after the total was formed: %+v %v", v, err)
	}
	v, err = Fold(step, map[string]*Outcome{"a": {Missing: []string{"b"}}}, map[string]string{"b": "no such table"}, nil)
	if err != nil || v.Missing["b"] != "no such table" {
		t.Fatalf("a party that withdrew: %+v %v", v, err)
	}
	if _, err := Fold(step, map[string]*Outcome{"b": {Sum: []float64{math.NaN()}}}, nil, nil); err == nil || !strings.Contains(err.Error(), "party b") {
		t.Fatalf("a malformed outcome: %v", err)
	}
}

// count is how many ciphertexts an encoded list holds.
func (c *consortium) count(t *testing.T, b []byte) int {
	cts, err := c.pk.UnmarshalCiphertexts(b)
	if err != nil {
		t.Error(err)
	}
	return len(cts)
}
