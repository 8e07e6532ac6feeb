package secureagg

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// A party that gets no sketch of a subtree from the root's child that
// holds it cannot check the total, makes no share and names that child;
// the others still decrypt without it, and the sum is exact.
func TestLatticeSketchWithheld(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 5)
	// Fanout 2: org01 (root) has children org02 and org03; org02 has
	// children org04 and org05.
	in, _ := exactInputs(c, 6, 31)
	step := testStep(c, "org01")
	want := plainSum(in, step.Parties)
	testkit.RetryLonger(t, time.Second, func(hop time.Duration) error {
		net := jobtest.NewNetwork(c.names...)
		net.Intercept("org02", func(to string, m *wire.Message) *wire.Message {
			if m.Type == TypeSketch && to == "org04" {
				return nil
			}
			return m
		})
		outs := runAll(t, net, step, func(n string) Config {
			cfg := latticeConfig(keys, n)
			cfg.Fanout, cfg.Timeout = 2, hop
			return cfg
		}, in)
		if err := outs["org04"].err; !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "no sketch of its subtree from org02") {
			return fmt.Errorf("org04: %v, want ErrTampered naming org02's missing sketch", err)
		}
		for _, n := range []string{"org01", "org02", "org03", "org05"} {
			if outs[n].err != nil || !slices.Equal(outs[n].res.Sum, want) {
				return fmt.Errorf("%s: %v, want the exact sum", n, outs[n].err)
			}
		}
		return nil
	})
}

func FuzzDecodeSeed(f *testing.F) {
	ok, _ := wire.Marshal(seedBody{Key: make([]byte, 32)})
	f.Add(ok)
	short, _ := wire.Marshal(seedBody{Key: []byte{1}})
	f.Add(short)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := decodeSeed(b)
		if err != nil {
			return
		}
		again, _ := wire.Marshal(seedBody{Key: k[:]})
		if k2, err := decodeSeed(again); err != nil || k2 != k {
			t.Fatalf("a decoded key does not round-trip: %v", err)
		}
	})
}

func FuzzDecodeSketchBody(f *testing.F) {
	sk, _ := (&lattice.Sketch{Inputs: []lattice.Input{{Party: 1}}, Values: make([]uint64, 2*3)}).MarshalBinary()
	ok, _ := wire.Marshal(sketchBody{Sketch: sk, Root: make([]byte, 32)})
	f.Add(ok)
	bad, _ := wire.Marshal(sketchBody{Sketch: sk, Root: []byte{1, 2}})
	f.Add(bad)
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := decodeSketchBody(b)
		if err != nil {
			return
		}
		if n := len(body.Root); n != 0 && n != 32 {
			t.Fatalf("accepted a commitment of %d bytes", n)
		}
	})
}
