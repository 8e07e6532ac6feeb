package psi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// commonSet is the plain intersection of every party's set, in the first
// party's order (with its repeats).
func commonSet(parties []string, sets map[string][][]byte) [][]byte {
	common := sets[parties[0]]
	for _, q := range parties[1:] {
		var next [][]byte
		for _, i := range plain(common, sets[q]) {
			next = append(next, common[i])
		}
		common = next
	}
	return common
}

// alignAll runs Align at every party and returns their results.
func alignAll(t *testing.T, net *jobtest.Network, hub string, parties []string, sets map[string][][]byte, cfg Config) (map[string]*Result, map[string]error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	step := testStep(parties...)
	res, errs := map[string]*Result{}, map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, q := range parties {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Align(ctx, net.Party(q), step, hub, parties, cfg, sets[q])
			mu.Lock()
			res[q], errs[q] = r, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return res, errs
}

// TestAlign: every party learns the positions of its elements that every
// party holds, whichever party is the hub, with repeats and empty sets.
func TestAlign(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	parties := []string{"p1", "p2", "p3", "p4"}
	for _, c := range []struct {
		n, pool int
		empty   string
	}{{30, 40, ""}, {60, 200, ""}, {25, 30, "p3"}, {1, 1, ""}} {
		for _, hub := range []string{"p1", "p3"} {
			sets := map[string][][]byte{} // drawn in case order, before the cases run in parallel
			for _, q := range parties {
				a, _ := randomSets(r, c.n, 0, c.pool, q == "p2") // p2 has repeats
				if q == c.empty {
					a = nil
				}
				sets[q] = a
			}
			t.Run(fmt.Sprintf("n%d/pool%d/empty%s/hub%s", c.n, c.pool, c.empty, hub), func(t *testing.T) {
				t.Parallel()
				common := commonSet(parties, sets)
				net := jobtest.NewNetwork(parties...)
				for _, q := range parties {
					net.Capture(q)
				}
				res, errs := alignAll(t, net, hub, parties, sets, Config{Edge: "ids", ChunkSize: 8})
				for _, q := range parties {
					if errs[q] != nil {
						t.Fatalf("%s: %v", q, errs[q])
					}
					if want := plain(sets[q], common); !slices.Equal(res[q].Indices, want) {
						t.Errorf("%s: %v, want %v", q, res[q].Indices, want)
					}
					if res[q].Size != distinctCount(common) {
						t.Errorf("%s: size %d, want %d", q, res[q].Size, distinctCount(common))
					}
					// Leakage: spokes send only to the hub, the hub sends
					// no doubles (spokes learn nothing from the exchange
					// itself), everything is psi-blinded.
					for _, s := range net.Captured(q) {
						if s.Disclosure != wire.DisclosePSIBlinded {
							t.Errorf("%s sends %s with %q", q, s.Message.Type, s.Disclosure)
						}
						if q != hub && s.To != hub {
							t.Errorf("spoke %s sends %s to %s", q, s.Message.Type, s.To)
						}
						if q == hub && s.Message.Type == TypeDouble {
							t.Errorf("the hub sends %s to %s: the spoke would learn the pairwise intersection", s.Message.Type, s.To)
						}
						if q != hub && s.Message.Type == TypeFilter {
							t.Errorf("spoke %s sends a filter", q)
						}
					}
				}
			})
		}
	}
}

func TestAlignFilterTampering(t *testing.T) {
	t.Parallel()
	parties := []string{"h", "s"}
	sets := map[string][][]byte{"h": {[]byte("a"), []byte("b")}, "s": {[]byte("b"), []byte("c"), []byte("d")}}
	net := jobtest.NewNetwork(parties...)
	net.Intercept("h", func(to string, m *wire.Message) *wire.Message {
		if m.Type == TypeFilter {
			var body filterBody
			_ = wire.Unmarshal(m.Body, &body)
			body.Bits = []byte{0xff} // bits beyond the third
			m.Body, _ = wire.Marshal(&body)
		}
		return m
	})
	_, errs := alignAll(t, net, "h", parties, sets, Config{})
	if !errors.Is(errs["s"], ErrPeer) {
		t.Errorf("spoke: %v, want ErrPeer", errs["s"])
	}
}

func TestAlignBadArguments(t *testing.T) {
	t.Parallel()
	net := jobtest.NewNetwork("a", "b")
	ctx := context.Background()
	for name, c := range map[string]struct {
		hub     string
		parties []string
	}{
		"hub not a party":  {"c", []string{"a", "b"}},
		"self not a party": {"b", []string{"b", "c"}},
		"repeated party":   {"a", []string{"a", "b", "a"}},
	} {
		if _, err := Align(ctx, net.Party("a"), testStep("a", "b"), c.hub, c.parties, Config{}, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	// A hub alone holds the whole intersection.
	r, err := Align(ctx, net.Party("a"), testStep("a"), "a", []string{"a"}, Config{}, [][]byte{{1}, {2}, {1}})
	if err != nil || !slices.Equal(r.Indices, []int{0, 1, 2}) || r.Size != 2 {
		t.Errorf("hub alone: %+v, %v", r, err)
	}
}

// TestAlignSpokeFails: a spoke that crashes makes the hub fail naming it,
// and the other spokes end with their context, not with a result.
func TestAlignSpokeFails(t *testing.T) {
	t.Parallel()
	parties := []string{"h", "s1", "s2"}
	sets := map[string][][]byte{"h": {[]byte("a")}, "s1": {[]byte("a")}, "s2": {[]byte("a")}}
	net := jobtest.NewNetwork(parties...)
	net.Drop("s2", jobtest.DropFail)
	// A guard against a hang, not a deadline the test waits out: the hub
	// names s2 on the drop, and s1, which waits for the hub until its
	// context ends, is stopped once the hub has returned.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spoke, stopSpoke := context.WithCancel(ctx)
	defer stopSpoke()
	step := testStep(parties...)
	errs := make(chan error, 2)
	go func() {
		_, err := Align(spoke, net.Party("s1"), step, "h", parties, Config{}, sets["s1"])
		errs <- err
	}()
	_, err := Align(ctx, net.Party("h"), step, "h", parties, Config{}, sets["h"])
	if !errors.Is(err, jobtest.ErrDropped) || !strings.Contains(err.Error(), "s2") {
		t.Errorf("hub: %v, want an error naming s2", err)
	}
	stopSpoke()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("spoke s1: %v, want its context's end", err)
	}
}
