package lattice

import (
	"bytes"
	"errors"
	"testing"
)

// addFixture is three contributions of random values to one aggregate,
// each encoded, under a key of three members.
type addFixture struct {
	keys    []*Keys
	g       *Aggregator
	l       *Layout
	encoded [][]byte
}

func newAddFixture(tb testing.TB, summands int) *addFixture {
	tb.Helper()
	keys := testKeys(tb, 3, 2)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(tb), 9000, 0, 20, summands) // two ciphertexts
	if err != nil {
		tb.Fatal(err)
	}
	f := &addFixture{keys: keys, g: NewAggregator(pk, l), l: l}
	ctx := testContext(pk, 1)
	for _, k := range keys {
		v := make([]int64, 9000)
		for i := range v {
			v[i] = int64(i*7919+k.Self*104729)%(1<<20) - 1<<19
		}
		enc, err := NewEncryptor(pk)
		if err != nil {
			tb.Fatal(err)
		}
		a, err := enc.EncryptInts(ctx, k.Self, l, v)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := a.MarshalBinary()
		if err != nil {
			tb.Fatal(err)
		}
		f.encoded = append(f.encoded, b)
	}
	return f
}

// decode decodes the i-th contribution afresh.
func (f *addFixture) decode(tb testing.TB, i int) *Aggregate {
	tb.Helper()
	a := f.g.Allocate()
	if err := a.UnmarshalBinary(f.encoded[i]); err != nil {
		tb.Fatal(err)
	}
	return a
}

func mustMarshal(tb testing.TB, a *Aggregate) []byte {
	tb.Helper()
	b, err := a.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestAddBinaryIsAggregate checks that adding encoded aggregates into an
// accumulator gives, byte for byte, what decoding them and Aggregate give,
// and that accept sees each one's inputs.
func TestAddBinaryIsAggregate(t *testing.T) {
	f := newAddFixture(t, 3)
	want := f.decode(t, 0)
	for i := 1; i < 3; i++ {
		if err := f.g.Aggregate(want, f.decode(t, i), want); err != nil {
			t.Fatal(err)
		}
	}
	acc := f.decode(t, 0)
	var seen [][]Input
	accept := func(ctx Context, in []Input) error {
		if ctx != acc.Context {
			t.Error("accept saw another context")
		}
		seen = append(seen, in)
		return nil
	}
	for i := 1; i < 3; i++ {
		if err := f.g.AddBinary(acc, f.encoded[i], accept); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(mustMarshal(t, acc), mustMarshal(t, want)) {
		t.Fatal("AddBinary's sum differs from Aggregate's")
	}
	if len(seen) != 2 || seen[0][0].Party != 2 || seen[1][0].Party != 3 {
		t.Fatalf("accept saw %v, want the inputs of parties 2 and 3", seen)
	}
}

// TestAddBinaryRefusesUnchanged checks that every refusal leaves the
// accumulator as it was: a coefficient not reduced in the last ciphertext
// (found after the others were read), a cut encoding, an input already in
// the accumulator, more inputs than the layout's summands, another
// context, and the caller's own refusal.
func TestAddBinaryRefusesUnchanged(t *testing.T) {
	f := newAddFixture(t, 3)
	unreduced := bytes.Clone(f.encoded[1])
	copy(unreduced[len(unreduced)-8:], bytes.Repeat([]byte{0xff}, 8))
	refuse := errors.New("not this subtree")
	two := newAddFixture(t, 2)
	other := two.decode(t, 0) // same members, another key: another context
	for name, c := range map[string]struct {
		g      *Aggregator
		acc    func() *Aggregate
		b      []byte
		accept func(Context, []Input) error
		want   error
	}{
		"unreduced":     {f.g, func() *Aggregate { return f.decode(t, 0) }, unreduced, nil, ErrMalformed},
		"cut":           {f.g, func() *Aggregate { return f.decode(t, 0) }, f.encoded[1][:len(f.encoded[1])-8], nil, ErrMalformed},
		"twice":         {f.g, func() *Aggregate { return f.decode(t, 0) }, f.encoded[0], nil, ErrMismatch},
		"refused":       {f.g, func() *Aggregate { return f.decode(t, 0) }, f.encoded[1], func(Context, []Input) error { return refuse }, refuse},
		"other context": {f.g, func() *Aggregate { return f.decode(t, 0) }, two.encoded[1], nil, ErrMismatch},
		"other key's":   {two.g, func() *Aggregate { return other }, f.encoded[1], nil, ErrMismatch},
		"summands":      {two.g, func() *Aggregate { a := two.decode(t, 0); _ = two.g.AddBinary(a, two.encoded[1], nil); return a }, two.encoded[2], nil, ErrRange},
	} {
		acc := c.acc()
		before := mustMarshal(t, acc)
		err := c.g.AddBinary(acc, c.b, c.accept)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		if !bytes.Equal(mustMarshal(t, acc), before) {
			t.Errorf("%s: the accumulator changed", name)
		}
	}
}

// FuzzAddBinary adds arbitrary bytes into an accumulator: it never
// panics, a refusal leaves the accumulator as it was, and what it accepts
// is exactly what UnmarshalBinary accepts, summed as Aggregate sums.
func FuzzAddBinary(f *testing.F) {
	fx := newAddFixture(f, 3)
	f.Add(fx.encoded[1])
	f.Add(fx.encoded[1][:len(fx.encoded[1])/3])
	f.Add(fx.encoded[0])
	f.Add([]byte{})
	f.Add([]byte{frameVersion, 1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		acc := fx.decode(t, 0)
		before := mustMarshal(t, acc)
		err := fx.g.AddBinary(acc, b, nil)
		want := fx.decode(t, 0)
		v := fx.g.Allocate()
		werr := v.UnmarshalBinary(b)
		if werr == nil {
			werr = fx.g.Aggregate(want, v, want)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("AddBinary: %v; decoding and Aggregate: %v", err, werr)
		}
		if err != nil {
			if !bytes.Equal(mustMarshal(t, acc), before) {
				t.Fatal("a refusal changed the accumulator")
			}
			return
		}
		if !bytes.Equal(mustMarshal(t, acc), mustMarshal(t, want)) {
			t.Fatal("AddBinary's sum differs from Aggregate's")
		}
	})
}
