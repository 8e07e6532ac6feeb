package secureagg

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

func TestAggregateSums(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, fanout, length int
		coordinator       string
		decryptors        int
	}{
		{3, 0, 5, "org02", 0},
		{5, 0, 50, "org01", 0},
		{5, 2, 120, "org05", 3},
		{9, 2, 30, "org04", 0},   // depth 3
		{9, 0, 30, "outside", 5}, // coordinator not a party: first party is root
	} {
		t.Run(fmt.Sprintf("N=%d/k=%d/len=%d/root=%s/dec=%d", tc.n, tc.fanout, tc.length, tc.coordinator, tc.decryptors), func(t *testing.T) {
			t.Parallel()
			c := testConsortium(t, tc.n)
			net := jobtest.NewNetwork(c.names...)
			step := coordinatedBy(c, tc.coordinator)
			in := testInputs(c, tc.length)
			outs := runAll(t, net, step, func(name string) Config {
				cfg := testConfig(c, name)
				cfg.Fanout = tc.fanout
				cfg.Decryptors = tc.decryptors
				return cfg
			}, in)
			want := plainSum(in, c.names)
			for _, name := range c.names {
				o := outs[name]
				if o.err != nil {
					t.Fatalf("%s: %v", name, o.err)
				}
				checkSum(t, o.res.Sum, want, float64(tc.n)/(1<<16))
				if !slices.Equal(o.res.Included, c.names) || len(o.res.Excluded) != 0 || o.res.Noise != nil {
					t.Fatalf("%s: included %v excluded %v noise %v", name, o.res.Included, o.res.Excluded, o.res.Noise)
				}
				if !slices.Equal(o.res.Sum, outs[c.names[0]].res.Sum) {
					t.Fatalf("%s got a different sum from %s", name, c.names[0])
				}
			}
		})
	}
}

// TestTwoMembers: the default key over two members is 2-of-2, and two
// parties aggregate with it; a bad share cannot be outvoted, so it fails
// the aggregation naming the party instead of being excluded.
func TestTwoMembers(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 2)
	if c.pk.Parties != 2 || c.pk.Threshold != 1 {
		t.Fatalf("two members got a %d-of-%d key, want 2-of-2", c.pk.Threshold+1, c.pk.Parties)
	}
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	in := testInputs(c, 7)
	outs := runAll(t, net, step, func(name string) Config { return testConfig(c, name) }, in)
	want := plainSum(in, c.names)
	for _, name := range c.names {
		if o := outs[name]; o.err != nil {
			t.Fatalf("%s: %v", name, o.err)
		} else {
			checkSum(t, o.res.Sum, want, 2.0/(1<<16))
		}
	}
	net.Intercept("org02", func(to string, m *wire.Message) *wire.Message {
		if m.Type == TypeShare {
			m.Body[len(m.Body)/2] ^= 0x55
		}
		return m
	})
	step.Attempt++
	outs = runAll(t, net, step, func(name string) Config { return testConfig(c, name) }, in)
	if err := outs["org01"].err; !errors.Is(err, ErrTooFewShares) || !strings.Contains(err.Error(), "org02") {
		t.Fatalf("root with a bad share from its only peer: %v", err)
	}
}

func TestAggregateSubsetOfMembers(t *testing.T) {
	t.Parallel()
	// A step over 3 of 5 members: share indices come from the member list,
	// not from the step's parties.
	c := testConsortium(t, 5)
	net := jobtest.NewNetwork(c.names...)
	step := coordinatedBy(c, "org04")
	step.Parties = []string{"org02", "org04", "org05"}
	in := testInputs(c, 10)
	outs := runAll(t, net, step, func(n string) Config { return testConfig(c, n) }, in)
	for _, p := range step.Parties {
		if outs[p].err != nil {
			t.Fatalf("%s: %v", p, outs[p].err)
		}
		checkSum(t, outs[p].res.Sum, plainSum(in, step.Parties), 3.0/(1<<16))
	}
}

func TestDroppedPartyIsNamed(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	// With fanout 2 the order is org01 (root), org02..org05; org02 is an inner
	// node (children org04, org05) and org03 a leaf.
	for _, tc := range []struct {
		drop string
		mode jobtest.DropMode
	}{{"org03", jobtest.DropHang}, {"org02", jobtest.DropFail}, {"org05", jobtest.DropFail}} {
		t.Run(tc.drop, func(t *testing.T) {
			t.Parallel()
			step := testStep(c, "org01")
			wantDroppedNamed(t, c.names, step, tc.drop, tc.mode, func(n string) Config { return testConfig(c, n) }, testInputs(c, 8), false)
			net := jobtest.NewNetwork(c.names...)
			// The re-run without the dropped party succeeds.
			step.Attempt++
			step.Parties = slices.DeleteFunc(slices.Clone(c.names), func(n string) bool { return n == tc.drop })
			in := testInputs(c, 8)
			outs := runAll(t, net, step, func(n string) Config { return testConfig(c, n) }, in)
			if outs["org01"].err != nil {
				t.Fatal(outs["org01"].err)
			}
			checkSum(t, outs["org01"].res.Sum, plainSum(in, step.Parties), 4.0/(1<<16))
		})
	}
}

// corruptShares makes party name send a decryption share whose first value
// is wrong but well formed, so only the proof can catch it.
func corruptShares(t *testing.T, net *jobtest.Network, pk *paillier.ThresholdPublicKey, name string) {
	net.Intercept(name, func(to string, m *wire.Message) *wire.Message {
		if m.Type != TypeShare {
			return m
		}
		var body shareBody
		if err := wire.Unmarshal(m.Body, &body); err != nil {
			t.Error(err)
			return m
		}
		sh, err := pk.UnmarshalDecryptionShare(body.Share)
		if err != nil {
			t.Error(err)
			return m
		}
		n2 := new(big.Int).Mul(pk.N, pk.N)
		sh.Values[0] = new(big.Int).Mod(new(big.Int).Mul(sh.Values[0], sh.Values[0]), n2)
		if body.Share, err = sh.MarshalBinary(); err != nil {
			t.Error(err)
		}
		if m.Body, err = wire.Marshal(body); err != nil {
			t.Error(err)
		}
		return m
	})
}

func TestCorruptedShareExcluded(t *testing.T) {
	t.Parallel()
	// Decryptors 3 = t+1: org01..org03 are asked first, org03's bad share
	// makes the root ask org04 and org05.
	for _, decryptors := range []int{0, 3} {
		t.Run(fmt.Sprintf("decryptors=%d", decryptors), func(t *testing.T) {
			t.Parallel()
			testCorruptedShare(t, decryptors)
		})
	}
}

func testCorruptedShare(t *testing.T, decryptors int) {
	c := testConsortium(t, 5)
	net := jobtest.NewNetwork(c.names...)
	corruptShares(t, net, c.pk, "org03")
	step := testStep(c, "org01")
	in := testInputs(c, 20)
	outs := runAll(t, net, step, func(n string) Config {
		cfg := testConfig(c, n)
		cfg.Decryptors = decryptors
		return cfg
	}, in)
	for _, n := range c.names {
		o := outs[n]
		if o.err != nil {
			t.Fatalf("%s: %v", n, o.err)
		}
		why, ok := o.res.Excluded["org03"]
		if !ok || len(o.res.Excluded) != 1 || !strings.Contains(why, "invalid") {
			t.Fatalf("%s: excluded %v, want org03 for an invalid share", n, o.res.Excluded)
		}
		if !slices.Equal(o.res.Included, c.names) {
			t.Fatalf("%s: included %v", n, o.res.Included)
		}
		checkSum(t, o.res.Sum, plainSum(in, c.names), 5.0/(1<<16))
	}
}

func TestTooFewValidShares(t *testing.T) {
	t.Parallel()
	for _, decryptors := range []int{0, 2} {
		t.Run(fmt.Sprintf("decryptors=%d", decryptors), func(t *testing.T) {
			t.Parallel()
			testTooFewValidShares(t, decryptors)
		})
	}
}

func testTooFewValidShares(t *testing.T, decryptors int) {
	c := testConsortium(t, 3) // t = 1: two shares needed
	net := jobtest.NewNetwork(c.names...)
	corruptShares(t, net, c.pk, "org02")
	corruptShares(t, net, c.pk, "org03")
	outs := runAll(t, net, testStep(c, "org01"), func(n string) Config {
		cfg := testConfig(c, n)
		cfg.Decryptors = decryptors
		return cfg
	}, testInputs(c, 4))
	if err := outs["org01"].err; !errors.Is(err, ErrTooFewShares) || !strings.Contains(err.Error(), "org02, org03") {
		t.Fatalf("root: %v", err)
	}
	if err := outs["org02"].err; !errors.Is(err, ErrRoot) {
		t.Fatalf("org02: %v", err)
	}
}

func TestInputOutOfRange(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	in := testInputs(c, 4)
	in["org02"][1] = math.Ldexp(1, 40-16) // exactly 2^ValueBits once encoded
	outs := runAll(t, net, testStep(c, "org01"), func(n string) Config { return testConfig(c, n) }, in)
	if err := outs["org02"].err; !errors.Is(err, ErrRange) {
		t.Fatalf("org02: %v, want ErrRange", err)
	}
	var miss *MissingError
	if err := outs["org01"].err; !errors.As(err, &miss) || !slices.Equal(miss.Parties, []string{"org02"}) {
		t.Fatalf("root: %v", err)
	}
	in["org02"][1] = math.NaN()
	outs = runAll(t, net, testStep(c, "org01"), func(n string) Config { return testConfig(c, n) }, in)
	if err := outs["org02"].err; !errors.Is(err, ErrRange) {
		t.Fatalf("NaN input: %v", err)
	}
}

func TestDecryptedSumOutOfRange(t *testing.T) {
	t.Parallel()
	// org03 bypasses its own range check by sending an encryption of a value
	// far beyond the bound: the decrypted slot is out of range, and the
	// root reports an error instead of a sum.
	c := testConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	st := testStep(c, "org01")
	probe, _, err := newPaillierRun(StepNetwork(net.Party("org03"), st), st, testConfig(c, "org03"), 4)
	if err != nil {
		t.Fatal(err)
	}
	slotBits := probe.packing.SlotBits
	// org03 is a child of the root: it sends the others the digest of what
	// it sent up, which it forges too (a malicious party, not a relay).
	var forged []byte
	net.Intercept("org03", func(to string, m *wire.Message) *wire.Message {
		if m.Type == TypeDigest {
			body, err := decodeDigest(m.Body)
			if err != nil {
				t.Error(err)
			}
			body.D = forged // the root's commitment it passes on as received
			m.Body, _ = wire.Marshal(body)
			return m
		}
		if m.Type != TypeUp {
			return m
		}
		var body ciphertextBody
		if err := wire.Unmarshal(m.Body, &body); err != nil {
			t.Error(err)
			return m
		}
		cts, err := c.pk.UnmarshalCiphertexts(body.Ciphertexts)
		if err != nil {
			t.Error(err)
			return m
		}
		// Slot 0 raised by 2^(SlotBits−1): beyond what 3 in-range inputs can reach.
		huge := new(big.Int).Lsh(big.NewInt(1), uint(slotBits-1))
		bad, err := c.pk.EncryptMany(rand.Reader, []*big.Int{huge})
		if err != nil {
			t.Error(err)
			return m
		}
		cts[0] = c.pk.Add(cts[0], bad[0])
		body.Ciphertexts, _ = c.pk.MarshalCiphertexts(cts)
		forged = digest(testStep(c, "org01"), "org03", body.Ciphertexts)
		m.Body, _ = wire.Marshal(body)
		return m
	})
	// org03, the cheat, refuses to make a share of a total without its
	// subtree as it (honestly) formed it, before the interception forged
	// it: the root asks org02 alone (t+1 with itself), so that it does not
	// wait out org03's share.
	outs := runAll(t, net, testStep(c, "org01"), func(n string) Config {
		cfg := testConfig(c, n)
		cfg.Decryptors = c.pk.Threshold + 1
		return cfg
	}, testInputs(c, 4))
	if err := outs["org01"].err; !errors.Is(err, ErrRange) {
		t.Fatalf("root: %v, want ErrRange", err)
	}
	// org02 is honest; org03, the cheat, is not asked what it thinks.
	if err := outs["org02"].err; !errors.Is(err, ErrRoot) {
		t.Fatalf("org02: %v, want ErrRoot", err)
	}
}

func TestConfigMismatchDetected(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	outs := runAll(t, net, testStep(c, "org01"), func(n string) Config {
		cfg := testConfig(c, n)
		cfg.Timeout = time.Second
		if n == "org03" {
			cfg.FracBits = 20
		}
		return cfg
	}, testInputs(c, 4))
	var miss *MissingError
	if err := outs["org01"].err; !errors.As(err, &miss) || !slices.Equal(miss.Parties, []string{"org03"}) {
		t.Fatalf("root: %v", err)
	}
}

func TestLeakage(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	in := testInputs(c, 40)
	const who = "org03"
	// Inputs whose encodings are at least five bytes long: the bodies are
	// kilobytes of ciphertexts and shares, in which a three-byte needle
	// turns up by chance in about one run in fifteen (CI's race pass found
	// one), a five-byte one in about one in a million.
	for j, x := range in[who] {
		in[who][j] = math.Copysign(math.Abs(x)+100_000, x)
	}
	fp := paillier.FixedPoint{FracBits: 16}
	// The party's encoded inputs as they would appear in a careless body.
	var needles [][]byte
	for _, x := range in[who] {
		v, err := fp.Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		if v.Sign() == 0 {
			continue
		}
		if enc := new(big.Int).Abs(v).Bytes(); len(enc) < 5 {
			t.Fatalf("input %v encodes to %d bytes: too short to search for", x, len(enc))
		}
		needles = append(needles, new(big.Int).Abs(v).Bytes())
		needles = append(needles, binary.BigEndian.AppendUint64(nil, math.Float64bits(x)))
	}
	capture := func(root string) []jobtest.Sent {
		net := jobtest.NewNetwork(c.names...)
		net.Capture(who)
		step := testStep(c, "org01")
		if root == who { // org02 coordinates org02 … org05: who is the root
			step = coordinatedBy(c, "org02")
			step.Parties = c.names[1:]
		}
		outs := runAll(t, net, step, func(n string) Config { return testConfig(c, n) }, in)
		if outs[who].err != nil {
			t.Fatal(outs[who].err)
		}
		return net.Captured(who)
	}
	allowed := map[string]wire.Disclosure{
		TypeUp: wire.DiscloseCiphertext, TypeDown: wire.DiscloseCiphertext,
		TypeShare: wire.DiscloseDecryptionShare, TypeResult: wire.DisclosePublicResult,
		TypeDigest: wire.DiscloseControl, TypeCommit: wire.DiscloseControl,
		TypeFormed: wire.DiscloseControl,
	}
	var first [][]byte
	for run, root := range []string{"org01", "org01", who} {
		sent := capture(root)
		if len(sent) == 0 {
			t.Fatal("nothing captured")
		}
		var cts [][]byte
		for _, s := range sent {
			m := s.Message
			if d, ok := allowed[m.Type]; !ok || d != s.Disclosure {
				t.Fatalf("%s sent %s with disclosure %q", who, m.Type, s.Disclosure)
			}
			if root != who && (m.Type == TypeDown || m.Type == TypeResult) {
				// org03 is a leaf under fanout 4 with root org01.
				t.Fatalf("leaf %s sent %s", who, m.Type)
			}
			if m.Job != "job-1" || m.Phase != "sum" || m.Round != 3 || m.Attempt != 1 {
				t.Fatalf("message without the step's ids: %v", m)
			}
			if m.Type == TypeResult {
				continue // the public result is everyone's output, not org03's input
			}
			for _, nd := range needles {
				if len(nd) >= 5 && bytes.Contains(m.Body, nd) {
					t.Fatalf("%s body contains an encoding of an input (%x)", m.Type, nd)
				}
			}
			if m.Type == TypeUp {
				var body ciphertextBody
				if err := wire.Unmarshal(m.Body, &body); err != nil {
					t.Fatal(err)
				}
				cts = append(cts, body.Ciphertexts)
			}
		}
		if run == 0 {
			first = cts
		}
		if run == 1 {
			if len(cts) != 1 || len(first) != 1 || bytes.Equal(cts[0], first[0]) {
				t.Fatal("two runs on the same input sent equal ciphertexts: encryption is not randomised")
			}
		}
	}
}

func TestBytesPerParty(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	net := jobtest.NewNetwork(c.names...)
	in := testInputs(c, 200)
	outs := runAll(t, net, testStep(c, "org01"), func(n string) Config { return testConfig(c, n) }, in)
	if outs["org01"].err != nil {
		t.Fatal(outs["org01"].err)
	}
	st := testStep(c, "org01")
	s, _, err := newPaillierRun(StepNetwork(net.Party("org03"), st), st, testConfig(c, "org03"), 200)
	if err != nil {
		t.Fatal(err)
	}
	own := int64(s.count * c.pk.CiphertextSize())
	// org03 is a leaf: it sends one up message and one share.
	if got := net.BytesSent("org03"); got > 3*own {
		t.Fatalf("leaf sent %d bytes, own ciphertexts are %d", got, own)
	}
}

func TestNoiseInsideSum(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	for _, nz := range []*Noise{
		{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1},
		{Mechanism: Gaussian, Epsilon: 0.5, Delta: 1e-6, Sensitivity: 1, Colluders: 2},
	} {
		t.Run(string(nz.Mechanism), func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork(c.names...)
			in := testInputs(c, 200)
			outs := runAll(t, net, testStep(c, "org01"), func(n string) Config {
				cfg := testConfig(c, n)
				cfg.Noise = nz
				return cfg
			}, in)
			want := plainSum(in, c.names)
			res := outs["org01"].res
			if outs["org01"].err != nil {
				t.Fatal(outs["org01"].err)
			}
			rep := res.Noise
			if rep == nil || rep.Mechanism != nz.Mechanism || rep.Epsilon != nz.Epsilon || rep.Delta != nz.Delta || rep.Shares != 5 {
				t.Fatalf("noise report %+v", rep)
			}
			// The noise has the calibrated spread: empirical sd within a
			// factor of the target (the colluder margin inflates it).
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
			if !slices.Equal(outs["org04"].res.Sum, res.Sum) {
				t.Fatal("parties disagree on the noisy sum")
			}
		})
	}
}

func TestRejectsBadSetup(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	ctx := t.Context()
	cfg := testConfig(c, "org01")
	if _, err := Aggregate(ctx, net.Party("org02"), step, cfg, []float64{1}); !errors.Is(err, ErrKeys) {
		t.Fatalf("someone else's share: %v", err)
	}
	short := step
	short.Parties = []string{"org01", "org02"} // t = 2 needs 3
	if _, err := Aggregate(ctx, net.Party("org01"), short, cfg, []float64{1}); !errors.Is(err, ErrTooFewShares) {
		t.Fatalf("too few parties: %v", err)
	}
	if _, err := Aggregate(ctx, net.Party("org01"), step, cfg, nil); err == nil {
		t.Fatal("empty input accepted")
	}
	few := cfg
	few.Decryptors = 2 // t+1 = 3
	if _, err := Aggregate(ctx, net.Party("org01"), step, few, []float64{1}); err == nil {
		t.Fatal("fewer decryptors than t+1 accepted")
	}
	bad := cfg
	bad.Noise = &Noise{Mechanism: Gaussian, Epsilon: 2, Delta: 1e-5, Sensitivity: 1}
	if _, err := Aggregate(ctx, net.Party("org01"), step, bad, []float64{1}); err == nil {
		t.Fatal("gaussian with epsilon >= 1 accepted")
	}
}

func TestOutcomeRoundTrip(t *testing.T) {
	t.Parallel()
	res := &Result{Sum: []float64{1.5, -2}, Included: []string{"a", "b"}, Excluded: map[string]string{"b": "late"},
		Noise: &NoiseReport{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1, Scale: 1, Shares: 2}}
	rootStep := job.Step{Parties: []string{"a", "b"}, Coordinator: "b"} // a is the root
	b, err := EncodeReport("a", rootStep, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeOutcome(b)
	if err != nil || !slices.Equal(got.Sum, res.Sum) || got.Excluded["b"] != "late" || got.Noise.Epsilon != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	b, err = EncodeReport("a", rootStep, nil, fmt.Errorf("wrapped: %w", &MissingError{Parties: []string{"x"}}))
	if err != nil {
		t.Fatal(err)
	}
	var miss *MissingError
	if _, err := DecodeOutcome(b); !errors.As(err, &miss) || miss.Parties[0] != "x" {
		t.Fatalf("missing outcome: %v", err)
	}
	if _, err := EncodeReport("a", rootStep, nil, ErrRange); !errors.Is(err, ErrRange) {
		t.Fatalf("other errors pass through: %v", err)
	}
}
