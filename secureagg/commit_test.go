package secureagg

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// A root that rewrites its own component after seeing its children's, so
// that it cancels org03's subtree ("own input" = own − org03's product:
// the total would be the root's input and org02's alone), is refused by
// every other party: the component is not the one it committed to before
// the children sent up. Nothing is decrypted.
func TestRootOwnInputCommitted(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	newNet := func() *jobtest.Network {
		net := jobtest.NewNetwork(c.names...)
		net.Intercept("org01", tamperOwnComponent(t, c))
		return net
	}
	wantRootRefused(t, newNet, testStep(c, "org01"), func(n string) Config { return testConfig(c, n) }, testInputs(c, 4), "committed") // the root's own input is not the committed one
}

// tamperOwnComponent makes the root's down message's own component its
// own less org03's cancelling one.
func tamperOwnComponent(t *testing.T, c *consortium) jobtest.Tamper {
	return func(to string, m *wire.Message) *wire.Message {
		if m.Type != TypeDown {
			return m
		}
		var body ciphertextBody
		if err := wire.Unmarshal(m.Body, &body); err != nil || len(body.Components) != 3 {
			t.Errorf("down body: %v", err)
			return m
		}
		own, err1 := c.pk.UnmarshalCiphertexts(body.Components[0])
		cancel, err2 := c.pk.UnmarshalCiphertexts(body.Components[2])
		if err := errors.Join(err1, err2); err != nil {
			t.Error(err)
			return m
		}
		for i := range own {
			own[i] = c.pk.Sub(own[i], cancel[i])
		}
		body.Components[0], _ = c.pk.MarshalCiphertexts(own)
		m.Body, _ = wire.Marshal(body)
		return m
	}
}

// The same on the lattice backend: a root's own component that is not the
// one it committed to is refused.
func TestLatticeRootOwnInputCommitted(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 3)
	newNet := func() *jobtest.Network {
		net := jobtest.NewNetwork(c.names...)
		net.Intercept("org01", rewriteLatticeDown(t, func(comps [][]byte) [][]byte {
			comps[1][len(comps[1])-1] ^= 1 // a coefficient of the root's own mask changed
			return comps
		}))
		return net
	}
	in, _ := exactInputs(c, 4, 23)
	wantRootRefused(t, newNet, testStep(c, "org01"), func(n string) Config { return latticeConfig(keys, n) }, in, "committed") // the root's own input is not the committed one
}

// A child of the root sends its subtree up only after the root committed
// to its own input: when the commitment does not come, the child names the
// root missing and its subtree never leaves it. On both backends.
func TestChildWaitsForRootCommit(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	lc, keys := latticeConsortium(t, 3)
	for _, backend := range []Backend{BackendPaillier, BackendLattice} {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			in := testInputs(c, 4)
			if backend == BackendLattice {
				in, _ = exactInputs(lc, 4, 29)
			}
			testkit.RetryLonger(t, raceSlowdown*time.Second, func(hop time.Duration) error {
				net := jobtest.NewNetwork(c.names...)
				net.Intercept("org01", func(to string, m *wire.Message) *wire.Message {
					if m.Type == TypeCommit && to == "org02" {
						return nil // lost
					}
					return m
				})
				var mu sync.Mutex
				sentUp := false
				net.Intercept("org02", func(to string, m *wire.Message) *wire.Message {
					if m.Type == TypeUp {
						mu.Lock()
						sentUp = true
						mu.Unlock()
					}
					return m
				})
				cfg := func(n string) Config {
					cc := testConfig(c, n)
					if backend == BackendLattice {
						cc = latticeConfig(keys, n)
					}
					cc.Timeout = hop
					return cc
				}
				outs := runAll(t, net, testStep(c, "org01"), cfg, in)
				mu.Lock()
				defer mu.Unlock()
				if sentUp {
					t.Error("org02 sent its subtree up without the root's commitment") // at any hop
				}
				if outs["org01"].res != nil {
					t.Error("the root has a result without org02's subtree")
				}
				var miss *MissingError
				if err := outs["org02"].err; !errors.As(err, &miss) || len(miss.Parties) != 1 || miss.Parties[0] != "org01" {
					return fmt.Errorf("org02: %v, want the root org01 named missing", err)
				}
				return nil
			})
		})
	}
}

// The digest and commit bodies come from other parties: any bytes decode
// to an error or to digests of SHA-256's size, never a panic.
func FuzzDecodeDigest(f *testing.F) {
	good, _ := wire.Marshal(digestBody{D: make([]byte, 32), Root: make([]byte, 32)})
	empty, _ := wire.Marshal(digestBody{})
	short, _ := wire.Marshal(digestBody{D: []byte{1, 2, 3}})
	for _, b := range [][]byte{good, empty, short, nil, {0xc0}} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := decodeDigest(b)
		if err != nil {
			return
		}
		for _, d := range [][]byte{body.D, body.Root} {
			if len(d) != 0 && len(d) != 32 {
				t.Fatalf("accepted a digest of %d bytes", len(d))
			}
		}
	})
}
