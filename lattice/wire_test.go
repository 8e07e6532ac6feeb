package lattice

import (
	"bytes"
	"errors"
	"testing"
)

// fixture is one of every encoded object, for round trips and fuzz seeds.
type fixture struct {
	keys     []*Keys
	layout   *Layout
	agg      *Aggregate // two inputs
	mask     *Mask
	share    *DecryptionShare
	open     *Opening
	kg       *KeyGen
	pubShare *PublicKeyShare
	secShare *SecretShare
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	keys := testKeys(tb, 3, 2)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(tb), 20, 0, 16, 3)
	if err != nil {
		tb.Fatal(err)
	}
	f := &fixture{keys: keys, layout: l}
	ctx := testContext(pk, 1)
	g := NewAggregator(pk, l)
	f.agg = g.Allocate()
	var committed []Input
	for _, k := range keys[:2] {
		enc, err := NewEncryptor(pk)
		if err != nil {
			tb.Fatal(err)
		}
		a, err := enc.EncryptInts(ctx, k.Self, l, make([]int64, 20))
		if err != nil {
			tb.Fatal(err)
		}
		committed = append(committed, a.Inputs...)
		if k.Self == 1 {
			f.agg = a
		} else if err := g.Aggregate(f.agg, a, f.agg); err != nil {
			tb.Fatal(err)
		}
	}
	f.mask = f.agg.Mask()
	dec, err := NewDecryptor(keys[0])
	if err != nil {
		tb.Fatal(err)
	}
	target, err := dec.Target(f.mask, Expect{Context: ctx, Shape: l.Shape(), Committed: committed})
	if err != nil {
		tb.Fatal(err)
	}
	plan, err := PlanVerified(pk, available(3))
	if err != nil {
		tb.Fatal(err)
	}
	if f.share, err = dec.GenShare(target, plan, 0); err != nil {
		tb.Fatal(err)
	}
	if f.open, err = NewOpening(pk, l, plan, f.agg); err != nil {
		tb.Fatal(err)
	}
	if f.kg, err = NewKeyGen(params(tb), names(3), 2, []byte("fixture")); err != nil {
		tb.Fatal(err)
	}
	pub, secrets, err := f.kg.GenShares(names(3)[1])
	if err != nil {
		tb.Fatal(err)
	}
	f.pubShare, f.secShare = pub, secrets[0]
	return f
}

// roundTrip encodes v, decodes it into fresh, and checks that fresh encodes
// to the same bytes.
func roundTrip(t *testing.T, name string, v, fresh wireValue) {
	t.Helper()
	b, err := v.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := fresh.UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b2, err := fresh.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("%s: round trip changed the encoding", name)
	}
	// Truncated or extended bytes never decode.
	for _, bad := range [][]byte{b[:len(b)-1], append(append([]byte(nil), b...), 0), b[:len(b)/2]} {
		if err := fresh.UnmarshalBinary(bad); err == nil {
			t.Fatalf("%s: decoded %d of %d bytes", name, len(bad), len(b))
		}
	}
}

// Every share and message type round-trips through its encoding, and
// refuses truncated, extended and unreduced encodings.
func TestWireRoundTrips(t *testing.T) {
	f := newFixture(t)
	g := NewAggregator(f.keys[0].PublicKey, f.layout)
	roundTrip(t, "aggregate", f.agg, g.Allocate())
	roundTrip(t, "mask", f.mask, g.AllocateMask())
	roundTrip(t, "decryption share", f.share, f.open.AllocateShare())
	roundTrip(t, "public-key share", f.pubShare, f.kg.AllocatePublicShare())
	roundTrip(t, "secret share", f.secShare, f.kg.AllocateSecretShare())
	// A coefficient ≥ its prime is refused: set the last coefficient of the
	// last prime (the encoding's final 8 bytes, before nothing) to 2^64−1.
	b, err := f.share.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) - 8; i < len(b); i++ {
		b[i] = 0xff
	}
	if err := f.open.AllocateShare().UnmarshalBinary(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unreduced coefficient: %v", err)
	}
	// Values that were never allocated refuse to decode.
	good, _ := f.agg.MarshalBinary()
	if err := new(Aggregate).UnmarshalBinary(good); err == nil {
		t.Fatal("decoded into an unallocated aggregate")
	}
}

// Key files round-trip; a share of another key, a share file given as the
// public file, and a tampered member list are refused.
func TestKeyFiles(t *testing.T) {
	keys := testKeys(t, 3, 2)
	other := testKeys(t, 4, 2)
	pub, err := keys[1].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	share, err := keys[1].MarshalShare()
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKeys(pub, share)
	if err != nil {
		t.Fatal(err)
	}
	if k.ID() != keys[1].ID() || k.Self != 2 || k.Name() != "org02" || k.Quorum != 2 {
		t.Fatalf("parsed %v %d %s %d", k.ID(), k.Self, k.Name(), k.Quorum)
	}
	otherShare, _ := other[1].MarshalShare()
	if _, err := ParseKeys(pub, otherShare); !errors.Is(err, ErrMismatch) {
		t.Fatalf("share of another key: %v", err)
	}
	if _, err := ParsePublicKey(share); !errors.Is(err, ErrMalformed) {
		t.Fatalf("share file as public key: %v", err)
	}
	renamed := bytes.Replace(pub, []byte("org03"), []byte("org09"), 1)
	if k, err := ParsePublicKey(renamed); err != nil || k.ID() == keys[1].ID() {
		t.Fatalf("renamed member kept the key id: %v", err)
	}
}

func fuzzSeeds(f *testing.F, vs ...wireValue) {
	for _, v := range vs {
		b, err := v.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Add([]byte{0x85, 0xa3, 'c', 't', 'x'})
	f.Add([]byte{frameVersion, 1, 0x80})
}

// fuzzDecode checks that decoding arbitrary bytes never panics and that
// whatever decodes re-encodes to something that decodes to the same.
func fuzzDecode(t *testing.T, b []byte, fresh func() wireValue) {
	v := fresh()
	if err := v.UnmarshalBinary(b); err != nil {
		return
	}
	b2, err := v.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	w := fresh()
	if err := w.UnmarshalBinary(b2); err != nil {
		t.Fatalf("re-encoding does not decode: %v", err)
	}
	b3, _ := w.MarshalBinary()
	if !bytes.Equal(b2, b3) {
		t.Fatal("decode/encode is not stable")
	}
}

func FuzzAggregate(f *testing.F) {
	fx := newFixture(f)
	fuzzSeeds(f, fx.agg)
	g := NewAggregator(fx.keys[0].PublicKey, fx.layout)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzDecode(t, b, func() wireValue { return g.Allocate() }) })
}

func FuzzMask(f *testing.F) {
	fx := newFixture(f)
	fuzzSeeds(f, fx.mask)
	g := NewAggregator(fx.keys[0].PublicKey, fx.layout)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzDecode(t, b, func() wireValue { return g.AllocateMask() }) })
}

func FuzzDecryptionShare(f *testing.F) {
	fx := newFixture(f)
	fuzzSeeds(f, fx.share)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzDecode(t, b, func() wireValue { return fx.open.AllocateShare() }) })
}

func FuzzPublicKeyShare(f *testing.F) {
	fx := newFixture(f)
	fuzzSeeds(f, fx.pubShare)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzDecode(t, b, func() wireValue { return fx.kg.AllocatePublicShare() })
	})
}

func FuzzSecretShare(f *testing.F) {
	fx := newFixture(f)
	fuzzSeeds(f, fx.secShare)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzDecode(t, b, func() wireValue { return fx.kg.AllocateSecretShare() })
	})
}

// publicKeyValue adapts ParsePublicKey to the fuzz helper.
type publicKeyValue struct{ pk *PublicKey }

func (v *publicKeyValue) MarshalBinary() ([]byte, error) { return v.pk.MarshalBinary() }
func (v *publicKeyValue) UnmarshalBinary(b []byte) (err error) {
	v.pk, err = ParsePublicKey(b)
	return err
}

func FuzzParsePublicKey(f *testing.F) {
	fx := newFixture(f)
	fuzzSeeds(f, &publicKeyValue{fx.keys[0].PublicKey})
	f.Fuzz(func(t *testing.T, b []byte) { fuzzDecode(t, b, func() wireValue { return &publicKeyValue{} }) })
}

func FuzzParseKeys(f *testing.F) {
	fx := newFixture(f)
	pub, err := fx.keys[0].MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	share, err := fx.keys[0].MarshalShare()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(share)
	f.Add(share[:40])
	f.Add([]byte{0x84})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeys(pub, b)
		if err != nil {
			return
		}
		again, err := k.MarshalShare()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseKeys(pub, again); err != nil {
			t.Fatal(err)
		}
	})
}
