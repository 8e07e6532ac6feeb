package secureagg

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// latticeKeys caches one lattice key per consortium size for the test
// binary (17 members take about a second).
var latticeKeys = struct {
	sync.Mutex
	m map[int]map[string]*lattice.Keys
}{m: map[int]map[string]*lattice.Keys{}}

func testLattice(tb testing.TB, c *consortium) map[string]*lattice.Keys {
	tb.Helper()
	latticeKeys.Lock()
	defer latticeKeys.Unlock()
	if k, ok := latticeKeys.m[len(c.names)]; ok {
		return k
	}
	k, err := keyring.DealLattice(c.names, 0)
	if err != nil {
		tb.Fatal(err)
	}
	latticeKeys.m[len(c.names)] = k
	return k
}

// latticeConsortium is a consortium of n named parties with lattice keys
// only (no Paillier key is dealt).
func latticeConsortium(tb testing.TB, n int) (*consortium, map[string]*lattice.Keys) {
	tb.Helper()
	c := &consortium{names: names(n)}
	return c, testLattice(tb, c)
}

func latticeConfig(keys map[string]*lattice.Keys, name string) Config {
	return Config{Backend: BackendLattice, Lattice: keys[name], FracBits: 16, ValueBits: 40, Timeout: time.Minute}
}

// exactInputs returns distinct random vectors per party whose values are
// exact at 16 fractional bits (so the plaintext sum in float64 is exact),
// with the edge values ±(2^40−1)·2^-16 and zero among them, and their exact
// sum.
func exactInputs(c *consortium, n int, seed uint64) (map[string][]float64, []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	out := map[string][]float64{}
	sum := make([]int64, n)
	for i, name := range c.names {
		v := make([]float64, n)
		for j := range v {
			x := r.Int64N(1<<41-1) - (1<<40 - 1) // in (−2^40, 2^40)
			switch (i + j) % 17 {
			case 0:
				x = 1<<40 - 1
			case 1:
				x = -(1<<40 - 1)
			case 2:
				x = 0
			}
			v[j] = math.Ldexp(float64(x), -16)
			sum[j] += x
		}
		out[name] = v
	}
	want := make([]float64, n)
	for j, s := range sum {
		want[j] = math.Ldexp(float64(s), -16) // |s| < 2^46: exact
	}
	return out, want
}

// rewriteLatticeDown rewrites the root's lattice down message (the total's
// mask and the root's own) with forge.
func rewriteLatticeDown(t *testing.T, forge func(comps [][]byte) [][]byte) jobtest.Tamper {
	return func(to string, m *wire.Message) *wire.Message {
		if m.Type != TypeDown {
			return m
		}
		var h blobHeader
		data, err := unframeRaw(m.Body, &h)
		if err != nil {
			t.Error(err)
			return m
		}
		comps, err := decodeList(data, 2)
		if err != nil {
			t.Error(err)
			return m
		}
		forged := encodeList(forge(comps))
		h.Size = len(forged)
		if m.Body, err = frameRaw(h, forged); err != nil {
			t.Error(err)
		}
		return m
	}
}
