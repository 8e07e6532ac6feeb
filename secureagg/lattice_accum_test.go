package secureagg

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/lattice"
)

// TestLatticeChildAddsIntoOwn checks that a parent adds a child's subtree
// sum into its own contribution as it arrives, with no aggregate of its
// own per child, and that a sum it refuses (another subtree's, or one
// already added) leaves its accumulator as it was.
func TestLatticeChildAddsIntoOwn(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	root := Root(step)
	inputs, _ := exactInputs(c, 10, 7)
	ctx := context.Background()
	bs, own := map[string]*latticeAgg{}, map[string]*lattice.Aggregate{}
	for _, name := range c.names {
		b, _, err := newLatticeRun(StepNetwork(net.Party(name), step), step, latticeConfig(keys, name), 10)
		if err != nil {
			t.Fatal(err)
		}
		if own[name], err = b.contribute(ctx, inputs[name]); err != nil {
			t.Fatal(err)
		}
		bs[name] = b
	}
	kids := bs[root].tree.children(root)
	if len(kids) != 2 {
		t.Fatalf("the root has %d children, want 2", len(kids))
	}
	encoded := func(a *lattice.Aggregate) []byte {
		b, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	up, err := bs[kids[0]].up(own[kids[0]])
	if err != nil {
		t.Fatal(err)
	}
	data, _ := deliver(t, bs[root].reader(TypeUp), up)
	before := encoded(own[root])
	if _, _, err := bs[root].child(data, nil, kids[1]); err == nil {
		t.Fatal("a subtree sum taken as another child's")
	}
	if !bytes.Equal(encoded(own[root]), before) {
		t.Fatal("a refused subtree sum changed the accumulator")
	}
	sum, _, err := bs[root].child(data, nil, kids[0])
	if err != nil || sum != own[root] || len(sum.Inputs) != 2 {
		t.Fatalf("the subtree sum of %s was not added into the root's own: %v", kids[0], err)
	}
	want := bs[root].agg.Allocate()
	if err := want.UnmarshalBinary(before); err != nil {
		t.Fatal(err)
	}
	if err := bs[root].agg.Aggregate(want, own[kids[0]], want); err != nil {
		t.Fatal(err)
	}
	added := encoded(own[root])
	if !bytes.Equal(added, encoded(want)) {
		t.Fatal("the accumulator is not the sum of the root's own and the child's")
	}
	if _, _, err := bs[root].child(data, nil, kids[0]); err == nil || !bytes.Equal(encoded(own[root]), added) {
		t.Fatalf("a subtree sum added twice: %v", err)
	}
}

// TestLatticeRelayOnlyToChildren checks that an inner node passes the
// down message and the result on as splitBlob cuts them, and that a leaf
// cuts nothing (it has no one to pass them to) but still reads the
// result.
func TestLatticeRelayOnlyToChildren(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 6)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	var inner, leaf *latticeAgg
	for _, name := range c.names {
		b, _, err := newLatticeRun(StepNetwork(net.Party(name), step), step, latticeConfig(keys, name), 10)
		if err != nil {
			t.Fatal(err)
		}
		b.partSize = 1000
		switch {
		case name == Root(step):
		case len(b.tree.children(name)) > 0:
			inner = b
		default:
			leaf = b
		}
	}
	if inner == nil || leaf == nil {
		t.Fatal("six parties at fanout 4 give no inner node or no leaf")
	}
	data := bytes.Repeat([]byte("down"), 700)
	want, err := splitBlob(inner.shape, data, 1000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inner.relay(data, nil)
	if err != nil || !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("an inner node relays %d parts, want splitBlob's %d (%v)", len(got), len(want), err)
	}
	if got, err := leaf.relay(data, nil); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a leaf relays %d parts (%v), want none", len(got), err)
	}
	res, err := encodeResult(&latticeResult{Error: "the root failed"})
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := leaf.result(res, nil)
	if f == nil || len(f) != 0 || !errors.Is(err, ErrRoot) {
		t.Fatalf("a leaf's result: %d parts to pass on, %v", len(f), err)
	}
	if f, _, _ := inner.result(res, nil); len(f) != 1 {
		t.Fatalf("an inner node passes the result on in %d parts, want 1", len(f))
	}
}
