package lattice

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// shareFixture is an aggregate of two contributions under a key of three
// members (quorum 2), its verified plan (three quorums) and every member's
// share of each quorum it is in, encoded.
type shareFixture struct {
	keys   []*Keys
	pk     *PublicKey
	l      *Layout
	agg    *Aggregate
	plan   *Plan
	shares map[[2]int][]byte // {party, quorum} → encoding
}

func newShareFixture(tb testing.TB) *shareFixture {
	tb.Helper()
	f := newAddFixture(tb, 3)
	agg := f.decode(tb, 0)
	if err := f.g.AddBinary(agg, f.encoded[1], nil); err != nil {
		tb.Fatal(err)
	}
	pk := f.g.pk
	plan, err := PlanVerified(pk, available(3))
	if err != nil {
		tb.Fatal(err)
	}
	sf := &shareFixture{keys: f.keys, pk: pk, l: f.l, agg: agg, plan: plan, shares: map[[2]int][]byte{}}
	for _, k := range f.keys {
		dec, err := NewDecryptor(k)
		if err != nil {
			tb.Fatal(err)
		}
		t, err := dec.Target(agg.Mask(), Expect{Context: agg.Context, Shape: f.l.Shape(), Committed: agg.Inputs})
		if err != nil {
			tb.Fatal(err)
		}
		for _, q := range plan.QuorumsOf(k.Self) {
			sh, err := dec.GenShare(t, plan, q)
			if err != nil {
				tb.Fatal(err)
			}
			if sf.shares[[2]int{k.Self, q}], err = sh.MarshalBinary(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return sf
}

func (f *shareFixture) opening(tb testing.TB) *Opening {
	tb.Helper()
	o, err := NewOpening(f.pk, f.l, f.plan, f.agg)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// folded is the encodings of an opening's folded shares, per quorum.
func folded(tb testing.TB, o *Opening) [][]byte {
	tb.Helper()
	out := make([][]byte, len(o.acc))
	for q, acc := range o.acc {
		if acc != nil {
			var err error
			if out[q], err = acc.MarshalBinary(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return out
}

func sameFolds(a, b [][]byte) bool {
	return len(a) == len(b) && bytes.Equal(bytes.Join(a, []byte{0}), bytes.Join(b, []byte{0}))
}

// TestShareAddBinaryIsAdd checks that folding encoded shares with
// AddBinary gives, byte for byte, the folds of decoding them and Add, and
// the same opened total.
func TestShareAddBinaryIsAdd(t *testing.T) {
	f := newShareFixture(t)
	byAdd, byBinary := f.opening(t), f.opening(t)
	for key, b := range f.shares {
		sh := byAdd.AllocateShare()
		if err := sh.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if err := byAdd.Add(sh); err != nil {
			t.Fatal(err)
		}
		accept := func(q int, parties []int) error {
			if q != key[1] || len(parties) != 1 || parties[0] != key[0] {
				t.Errorf("accept saw quorum %d of %v for %v", q, parties, key)
			}
			return nil
		}
		if err := byBinary.AddBinary(b, accept); err != nil {
			t.Fatal(err)
		}
	}
	if !sameFolds(folded(t, byAdd), folded(t, byBinary)) {
		t.Fatal("AddBinary's folds differ from Add's")
	}
	want, err := byAdd.Open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := byBinary.Open()
	if err != nil || !slices.Equal(got.Plain, want.Plain) {
		t.Fatalf("AddBinary's opening differs from Add's: %v", err)
	}
}

// TestShareAddBinaryRefusesUnchanged checks that every refusal leaves the
// opening as it was: a share already folded, the caller's refusal, a
// coefficient not reduced at the very end, a cut encoding, and a share of
// another plan.
func TestShareAddBinaryRefusesUnchanged(t *testing.T) {
	f := newShareFixture(t)
	q0 := f.plan.Quorums[0]
	first := f.shares[[2]int{q0[0], 0}]
	second := f.shares[[2]int{q0[1], 0}]
	unreduced := bytes.Clone(second)
	copy(unreduced[len(unreduced)-8:], bytes.Repeat([]byte{0xff}, 8))
	refuse := errors.New("not from this party")
	other := newShareFixture(t) // another key: another target and plan
	for name, c := range map[string]struct {
		b      []byte
		accept func(int, []int) error
		want   error
	}{
		"twice":      {first, nil, ErrMismatch},
		"refused":    {second, func(int, []int) error { return refuse }, refuse},
		"unreduced":  {unreduced, nil, ErrMalformed},
		"cut":        {second[:len(second)-8], nil, ErrMalformed},
		"other plan": {other.shares[[2]int{q0[1], 0}], nil, ErrMismatch},
	} {
		o := f.opening(t)
		if err := o.AddBinary(first, nil); err != nil {
			t.Fatal(err)
		}
		before := folded(t, o)
		if err := o.AddBinary(c.b, c.accept); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		if !sameFolds(folded(t, o), before) {
			t.Errorf("%s: the opening changed", name)
		}
	}
}

// FuzzShareAddBinary folds arbitrary bytes into an opening that holds one
// share: it never panics, a refusal changes nothing, and what it accepts
// is exactly what UnmarshalBinary and Add accept, folded as Add folds.
func FuzzShareAddBinary(f *testing.F) {
	fx := newShareFixture(f)
	q0 := fx.plan.Quorums[0]
	first := fx.shares[[2]int{q0[0], 0}]
	for _, b := range fx.shares {
		f.Add(b)
	}
	f.Add(first[:len(first)/2])
	f.Add([]byte{})
	f.Add([]byte{frameVersion, 1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, want := fx.opening(t), fx.opening(t)
		for _, x := range []*Opening{o, want} {
			if err := x.AddBinary(first, nil); err != nil {
				t.Fatal(err)
			}
		}
		before := folded(t, o)
		err := o.AddBinary(b, nil)
		sh := want.AllocateShare()
		werr := sh.UnmarshalBinary(b)
		if werr == nil {
			werr = want.Add(sh)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("AddBinary: %v; decoding and Add: %v", err, werr)
		}
		if err != nil {
			if !sameFolds(folded(t, o), before) {
				t.Fatal("a refusal changed the opening")
			}
			return
		}
		if !sameFolds(folded(t, o), folded(t, want)) {
			t.Fatal("AddBinary's folds differ from Add's")
		}
	})
}

// TestAppendShareIsGenShare checks that a share made as it is encoded
// (AppendShare) decodes to a share with GenShare's header, and that
// shares made so open the same total as GenShare's; AppendShare appends
// to what is there and refuses what GenShare refuses.
func TestAppendShareIsGenShare(t *testing.T) {
	f := newShareFixture(t)
	byGen, byAppend := f.opening(t), f.opening(t)
	for _, k := range f.keys {
		dec, err := NewDecryptor(k)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := dec.Target(f.agg.Mask(), Expect{Context: f.agg.Context, Shape: f.l.Shape(), Committed: f.agg.Inputs})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range f.plan.QuorumsOf(k.Self) {
			b, err := dec.AppendShare([]byte("head"), tg, f.plan, q)
			if err != nil || string(b[:4]) != "head" {
				t.Fatalf("member %d, quorum %d: %v", k.Self, q, err)
			}
			got, want := byAppend.AllocateShare(), byGen.AllocateShare()
			if err := got.UnmarshalBinary(b[4:]); err != nil {
				t.Fatal(err)
			}
			if err := want.UnmarshalBinary(f.shares[[2]int{k.Self, q}]); err != nil {
				t.Fatal(err)
			}
			if got.Context != want.Context || got.Target != want.Target || got.Plan != want.Plan || got.Quorum != want.Quorum || !slices.Equal(got.Parties, want.Parties) {
				t.Fatalf("member %d, quorum %d: another header than GenShare's", k.Self, q)
			}
			if err := byAppend.Add(got); err != nil {
				t.Fatal(err)
			}
			if err := byGen.Add(want); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := dec.AppendShare(nil, tg, f.plan, len(f.plan.Quorums)); !errors.Is(err, ErrMismatch) {
			t.Fatalf("a share of a quorum outside the plan: %v", err)
		}
	}
	want, err := byGen.Open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := byAppend.Open()
	if err != nil || !slices.Equal(got.Plain, want.Plain) {
		t.Fatalf("AppendShare's shares open another total: %v", err)
	}
}
