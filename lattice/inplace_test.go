package lattice

import (
	"bytes"
	"testing"
)

// TestUnmarshalDecodesInPlace checks that aggregates, masks and shares
// decode into the polynomials their Allocate methods made, instead of
// allocating (and zeroing) them a second time, and still decode to what
// was encoded.
func TestUnmarshalDecodesInPlace(t *testing.T) {
	fx := newFixture(t)
	g := NewAggregator(fx.keys[0].PublicKey, fx.layout)
	for name, c := range map[string]struct {
		enc   wireValue
		fresh wireValue
		first func(v wireValue) *uint64
	}{
		"aggregate": {fx.agg, g.Allocate(), func(v wireValue) *uint64 { return &v.(*Aggregate).c1[0].Coeffs[0][0] }},
		"mask":      {fx.mask, g.AllocateMask(), func(v wireValue) *uint64 { return &v.(*Mask).c1[0].Coeffs[0][0] }},
		"share":     {fx.share, fx.open.AllocateShare(), func(v wireValue) *uint64 { return &v.(*DecryptionShare).value[0].Coeffs[0][0] }},
	} {
		b, err := c.enc.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		before := c.first(c.fresh)
		if err := c.fresh.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.first(c.fresh) != before {
			t.Errorf("%s: decoded into new polynomials", name)
		}
		b2, err := c.fresh.MarshalBinary()
		if err != nil || !bytes.Equal(b, b2) {
			t.Errorf("%s: decodes to something else (%v)", name, err)
		}
	}
}
