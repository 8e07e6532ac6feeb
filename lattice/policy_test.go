package lattice

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// contributions encrypts n random inputs of length 40 for ctx and returns
// them with the committed inputs.
func contributions(t *testing.T, keys []*Keys, l *Layout, ctx Context) ([]*Aggregate, []Input) {
	t.Helper()
	in := randomInputs(rand.New(rand.NewPCG(12, 13)), len(keys), l.Length, l.ValueBits)
	var out []*Aggregate
	var committed []Input
	for i, k := range keys {
		enc, err := NewEncryptor(k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		a, err := enc.EncryptInts(ctx, k.Self, l, in[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
		committed = append(committed, a.Inputs[0])
	}
	return out, committed
}

// A decryptor refuses to make a share for anything but the committed
// aggregate: a single contribution, a missing, extra or changed input,
// another context, fewer inputs than the floor; TargetFromParts also
// refuses a part whose ciphertext does not match its digest. A target it
// accepts opens only the committed sum.
func TestDecryptOnlyCommittedAggregate(t *testing.T) {
	keys := testKeys(t, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(t), 40, 0, 20, 5)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(pk, 7)
	parts, committed := contributions(t, keys, l, ctx)
	g := NewAggregator(pk, l)
	total, pair := sumParts(t, g, parts), sumParts(t, g, parts[:2])
	dec, err := NewDecryptor(keys[2])
	if err != nil {
		t.Fatal(err)
	}
	expect := Expect{Context: ctx, Shape: l.Shape(), Committed: committed, Own: committed[2].Digest}
	if _, err := dec.Target(total.Mask(), expect); err != nil {
		t.Fatal(err)
	}
	other := expect
	other.Context.Attempt = 1
	changed := expect
	changed.Committed = append([]Input(nil), committed...)
	changed.Committed[3].Digest[0] ^= 1
	floor := expect
	floor.MinInputs = 6
	notMine := expect
	notMine.Own = committed[0].Digest // member 3 claims party 1's contribution as its own
	single := expect
	single.Committed = committed[:1]
	for name, c := range map[string]struct {
		m *Mask
		e Expect
	}{
		"single contribution":   {parts[0].Mask(), single},
		"missing inputs":        {pair.Mask(), expect},
		"extra input":           {total.Mask(), Expect{Context: ctx, Shape: l.Shape(), Committed: committed[:4]}},
		"changed contribution":  {total.Mask(), changed},
		"other attempt":         {total.Mask(), other},
		"fewer than the floor":  {total.Mask(), floor},
		"own input missing":     {total.Mask(), notMine},
		"two of the five asked": {pair.Mask(), Expect{Context: ctx, Shape: l.Shape(), Committed: committed[:2], MinInputs: 3}},
	} {
		if _, err := dec.Target(c.m, c.e); !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: %v, want ErrPolicy", name, err)
		}
	}
	// From the parts: the decryptor sums them itself.
	masks := make([]*Mask, len(parts))
	for i, a := range parts {
		masks[i] = a.Mask()
	}
	target, err := dec.TargetFromParts(masks, expect)
	if err != nil {
		t.Fatal(err)
	}
	if target.Digest != total.TargetDigest() {
		t.Fatal("the target summed from the parts is not the tree's total")
	}
	swapped := append([]*Mask(nil), masks...)
	forged := *masks[1]
	forged.c1 = masks[0].c1 // party 2's slot carries party 1's ciphertext
	swapped[1] = &forged
	if _, err := dec.TargetFromParts(swapped, expect); !errors.Is(err, ErrPolicy) {
		t.Fatalf("forged part: %v, want ErrPolicy", err)
	}
	if _, err := NewOpening(pk, l, mustPlan(t, PlanVerified, pk, available(5)), parts[0]); !errors.Is(err, ErrPolicy) {
		t.Fatalf("opening one contribution: %v, want ErrPolicy", err)
	}
}

// A share made for one aggregate, plan or quorum is refused for another: a
// replay from another attempt, a share under another plan, a share claiming
// a quorum its maker is not in.
func TestSharesBoundToTheirAggregate(t *testing.T) {
	keys := testKeys(t, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(t), 40, 0, 20, 5)
	if err != nil {
		t.Fatal(err)
	}
	total := func(ctx Context) (*Aggregate, Expect) {
		parts, committed := contributions(t, keys, l, ctx)
		return sumParts(t, NewAggregator(pk, l), parts), Expect{Context: ctx, Shape: l.Shape(), Committed: committed}
	}
	ctx := testContext(pk, 8)
	first, e1 := total(ctx)
	ctx.Attempt = 1
	second, _ := total(ctx)
	verified := mustPlan(t, PlanVerified, pk, available(5))
	single := mustPlan(t, PlanSingle, pk, available(5))
	dec, err := NewDecryptor(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	target, err := dec.Target(first.Mask(), e1)
	if err != nil {
		t.Fatal(err)
	}
	share, err := dec.GenShare(target, verified, verified.QuorumsOf(1)[0])
	if err != nil {
		t.Fatal(err)
	}
	replay, err := NewOpening(pk, l, verified, second)
	if err != nil {
		t.Fatal(err)
	}
	if err := replay.Add(share); !errors.Is(err, ErrMismatch) {
		t.Fatalf("share of attempt 0 added to attempt 1: %v", err)
	}
	otherPlan, err := NewOpening(pk, l, single, first)
	if err != nil {
		t.Fatal(err)
	}
	if err := otherPlan.Add(share); !errors.Is(err, ErrMismatch) {
		t.Fatalf("share of another plan: %v", err)
	}
	right, err := NewOpening(pk, l, verified, first)
	if err != nil {
		t.Fatal(err)
	}
	notIn := *share
	for q := range verified.Quorums {
		if len(verified.QuorumsOf(1)) < len(verified.Quorums) && !contains(verified.QuorumsOf(1), q) {
			notIn.Quorum = q
		}
	}
	if err := right.Add(&notIn); !errors.Is(err, ErrMismatch) {
		t.Fatalf("share claiming a quorum its maker is not in: %v", err)
	}
	if _, err := dec.GenShare(target, verified, notIn.Quorum); !errors.Is(err, ErrMismatch) {
		t.Fatalf("GenShare for a quorum without this member: %v", err)
	}
	if err := right.Add(share); err != nil {
		t.Fatal(err)
	}
	if err := right.Add(share); !errors.Is(err, ErrMismatch) {
		t.Fatalf("the same share twice: %v", err)
	}
}

// sumParts folds two or more contributions into a fresh aggregate.
func sumParts(t *testing.T, g *Aggregator, parts []*Aggregate) *Aggregate {
	t.Helper()
	sum := g.Allocate()
	if err := g.Aggregate(parts[0], parts[1], sum); err != nil {
		t.Fatal(err)
	}
	for _, a := range parts[2:] {
		if err := g.Aggregate(sum, a, sum); err != nil {
			t.Fatal(err)
		}
	}
	return sum
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func mustPlan(t *testing.T, mk func(*PublicKey, []int) (*Plan, error), pk *PublicKey, avail []int) *Plan {
	t.Helper()
	p, err := mk(pk, avail)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
