package secureagg

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// party is one party's backend and schedule in a test that runs the
// tree's rounds by hand.
type party[C, T any] struct {
	b backend[C, T]
	s *schedule
}

// deliver hands a message's parts to r, as receiveFrames does.
func deliver(t *testing.T, r reader, f frames) (data []byte, missing []string) {
	t.Helper()
	for i, n := 0, 1; i < n; i++ {
		var err error
		if n, err = r.part(i, f[i]); err != nil {
			t.Fatal(err)
		}
	}
	return r.message()
}

// roundsByHand runs the tree's rounds of a step of three parties (the root
// and two children, fanout 4) on backends alone, carrying every message
// in memory: seeds, contributions, the root's commitment, the subtree
// sums up, the total down and the vouchers. It returns what each party
// decrypts, and the total's components as the children received them.
func roundsByHand[C, T any](t *testing.T, step job.Step, ps map[string]party[C, T], inputs map[string][]float64) (map[string]T, [][]byte) {
	t.Helper()
	ctx := context.Background()
	root := Root(step)
	kids := ps[root].s.tree.children(root) // in tree order, as the components are
	if len(kids) != len(ps)-1 {
		t.Fatalf("the root has %d children, want %d", len(kids), len(ps)-1)
	}
	seeds, own := map[string][]byte{}, map[string]C{}
	for name, p := range ps {
		if name != root {
			seed, err := p.b.seed()
			if err != nil {
				t.Fatal(err)
			}
			if seed != nil {
				if seeds[name], err = wire.Marshal(seed); err != nil {
					t.Fatal(err)
				}
			}
		}
		var err error
		if own[name], err = p.b.contribute(ctx, inputs[name]); err != nil {
			t.Fatal(err)
		}
	}
	comp, err := ps[root].b.component(own[root])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps { // commitOwn at the root, awaitCommit at its children
		p.s.rootCommit = digest(step, root, comp)
	}
	acc, parts := own[root], []C(nil)
	for _, k := range kids {
		up, err := ps[k].b.up(own[k])
		if err != nil {
			t.Fatal(err)
		}
		data, aborted := deliver(t, ps[root].b.reader(TypeUp), up)
		sum, missing, err := ps[root].b.child(data, aborted, k)
		if err != nil || len(missing) > 0 {
			t.Fatalf("the subtree sum of %s: %v %v", k, missing, err)
		}
		if acc, parts, err = ps[root].b.addChild(acc, parts, sum); err != nil {
			t.Fatal(err)
		}
	}
	down, form, err := ps[root].b.total(comp, acc, parts)
	if err != nil {
		t.Fatal(err)
	}
	rootTotal, err := form()
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]T{root: rootTotal}
	var comps [][]byte
	for _, k := range kids {
		data, miss := deliver(t, ps[k].b.reader(TypeDown), down)
		var missing []string
		if comps, missing, err = ps[k].b.components(data, miss); err != nil || len(missing) > 0 {
			t.Fatalf("the total's components at %s: %v %v", k, missing, err)
		}
		vouchers := map[string][]byte{}
		for _, q := range kids {
			if q == k {
				continue
			}
			voucher, err := ps[q].b.vouchers(own[q])
			if err != nil {
				t.Fatal(err)
			}
			body, err := voucher(seeds[k])
			if err != nil {
				t.Fatal(err)
			}
			if vouchers[q], err = wire.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		if totals[k], err = ps[k].b.check(comps, own[k], vouchers); err != nil {
			t.Fatalf("%s refuses the total: %v", k, err)
		}
		// A total that is one party's input alone is refused.
		if _, err := ps[k].b.check(slices.Repeat([][]byte{comps[0]}, len(comps)), own[k], vouchers); !errors.Is(err, ErrTampered) {
			t.Errorf("%s accepts a tampered total: %v", k, err)
		}
	}
	return totals, comps
}

// The tree's rounds need no network: both backends' rounds, run by hand
// with every message carried in memory, give each party a total it
// decrypts to the plain sum, and no party sends a message. The
// decryption's rounds are run by hand too (decrypt_rounds_test.go).
func TestRoundsWithoutMessages(t *testing.T) {
	t.Parallel()
	t.Run("paillier", func(t *testing.T) {
		t.Parallel()
		c := testConsortium(t, 3)
		net := jobtest.NewNetwork(c.names...)
		step := testStep(c, c.names[0])
		inputs := testInputs(c, 70)
		ps := map[string]party[[]*paillier.Ciphertext, []*paillier.Ciphertext]{}
		for _, name := range c.names {
			s, sch, err := newPaillierRun(StepNetwork(net.Party(name), step), step, testConfig(c, name), 70)
			if err != nil {
				t.Fatal(err)
			}
			ps[name] = party[[]*paillier.Ciphertext, []*paillier.Ciphertext]{s, sch}
		}
		totals, _ := roundsByHand(t, step, ps, inputs)
		res, excluded := decryptByHand(t, Root(step), ps, totals, fault{})
		checkSum(t, res.Sum, plainSum(inputs, c.names), 1e-3)
		if len(excluded) > 0 {
			t.Errorf("excluded %v", excluded)
		}
		checkSilent(t, net, c.names)
	})
	t.Run("lattice", func(t *testing.T) {
		t.Parallel()
		c, keys := latticeConsortium(t, 3)
		net := jobtest.NewNetwork(c.names...)
		step := testStep(c, c.names[0])
		inputs, want := exactInputs(c, 50, 7)
		ps := map[string]party[*lattice.Aggregate, latticeTotal]{}
		for _, name := range c.names {
			s, sch, err := newLatticeRun(StepNetwork(net.Party(name), step), step, latticeConfig(keys, name), 50)
			if err != nil {
				t.Fatal(err)
			}
			ps[name] = party[*lattice.Aggregate, latticeTotal]{s, sch}
		}
		totals, _ := roundsByHand(t, step, ps, inputs)
		res, excluded := decryptByHand(t, Root(step), ps, totals, fault{})
		checkSum(t, res.Sum, want, 0)
		if len(excluded) > 0 {
			t.Errorf("excluded %v", excluded)
		}
		checkSilent(t, net, c.names)
	})
}

// checkSilent fails if any party sent a message.
func checkSilent(t *testing.T, net *jobtest.Network, names []string) {
	t.Helper()
	for _, name := range names {
		if n := net.MessagesSent(name); n != 0 {
			t.Errorf("%s sent %d messages", name, n)
		}
	}
}
