package lattice

import (
	"bytes"
	"crypto/rand"
	"errors"
	"slices"
	"testing"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// sketchFixture is five contributions in a tree of the shape secureagg
// uses: the root's own (held by every checker), and two subtree sums
// sketched by their senders.
type sketchFixture struct {
	dec      *Decryptor
	expect   Expect
	total    *Aggregate
	own      *Mask
	subtrees []*Aggregate
	key      SketchKey
}

func newSketchFixture(t *testing.T) *sketchFixture {
	t.Helper()
	keys := testKeys(t, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(t), 40, 0, 20, 5)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(pk, 7)
	parts, committed := contributions(t, keys, l, ctx)
	g := NewAggregator(pk, l)
	dec, err := NewDecryptor(keys[3])
	if err != nil {
		t.Fatal(err)
	}
	key, err := NewSketchKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &sketchFixture{
		dec:      dec,
		expect:   Expect{Context: ctx, Shape: l.Shape(), Committed: committed, Own: committed[3].Digest},
		total:    sumParts(t, g, parts),
		own:      parts[0].Mask(),
		subtrees: []*Aggregate{sumParts(t, g, parts[1:3]), sumParts(t, g, parts[3:])},
		key:      key,
	}
}

func (f *sketchFixture) sketches(k SketchKey) []*Sketch {
	return []*Sketch{f.subtrees[0].Sketch(k), f.subtrees[1].Sketch(k)}
}

// A total that is the sum of the root's own mask and the sketched
// subtrees gives the tree's target; the sketches, encoded and decoded,
// check the same.
func TestTargetFromSketches(t *testing.T) {
	f := newSketchFixture(t)
	sk := f.sketches(f.key)
	for i, s := range sk {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if sk[i], err = ParseSketch(b, f.dec.keys.Params, len(f.dec.keys.Members)); err != nil {
			t.Fatal(err)
		}
	}
	target, err := f.dec.TargetFromSketches(f.total.Mask(), []*Mask{f.own}, sk, f.key, f.expect)
	if err != nil {
		t.Fatal(err)
	}
	if target.Digest != f.total.TargetDigest() {
		t.Fatal("the target checked by sketches is not the tree's total")
	}
}

// A total that is not the sum of its parts is refused whatever its input
// list claims, and so are sketches that do not account for it: one that
// drops a subtree, one coefficient changed in any prime, the sketches of
// another key, a subtree counted twice, or a sketch whose inputs differ
// from the total's.
func TestTargetFromSketchesRefuses(t *testing.T) {
	f := newSketchFixture(t)
	sk := f.sketches(f.key)
	other, err := NewSketchKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// The root keeps one subtree out of the total but lists every input.
	dropped := f.subtrees[0].Mask()
	dropped.Inputs = f.total.Inputs
	cases := map[string]struct {
		total    *Mask
		sketched []*Sketch
	}{
		"a subtree left out":  {dropped, sk},
		"sketches of another": {f.total.Mask(), f.sketches(other)},
		"a subtree twice":     {f.total.Mask(), []*Sketch{sk[0], sk[0], sk[1]}},
		"a sketch missing":    {f.total.Mask(), sk[:1]},
		"other inputs":        {f.total.Mask(), []*Sketch{{Inputs: sk[1].Inputs, Values: sk[0].Values}, sk[1]}},
	}
	for prime := range 3 {
		m := f.total.Mask()
		m.c1 = slices.Clone(m.c1)
		m.c1[0] = *m.c1[0].CopyNew()
		q := f.dec.keys.Params.polyShape().moduli[prime]
		m.c1[0].Coeffs[prime][4095] = (m.c1[0].Coeffs[prime][4095] + 1) % q
		cases["one coefficient changed modulo prime "+string(rune('1'+prime))] = struct {
			total    *Mask
			sketched []*Sketch
		}{m, sk}
	}
	for name, c := range cases {
		_, err := f.dec.TargetFromSketches(c.total, []*Mask{f.own}, c.sketched, f.key, f.expect)
		if !errors.Is(err, ErrPolicy) && !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrPolicy or ErrMismatch", name, err)
		}
	}
	// The policy's checks still apply to a total that adds up.
	floor := f.expect
	floor.MinInputs = 6
	if _, err := f.dec.TargetFromSketches(f.total.Mask(), []*Mask{f.own}, sk, f.key, floor); !errors.Is(err, ErrPolicy) {
		t.Fatalf("below the floor: %v, want ErrPolicy", err)
	}
}

// A sketch is linear in the ciphertexts, deterministic for a key and
// context, and changes with either.
func TestSketchLinear(t *testing.T) {
	f := newSketchFixture(t)
	a, b := f.subtrees[0].Sketch(f.key), f.subtrees[1].Sketch(f.key)
	moduli := f.dec.keys.Params.polyShape().moduli
	sk := sketchPolys(f.key, f.expect.Context, moduli, f.total.c1, f.own.c1)
	for v, whole := range sk[0] {
		q := moduli[v%len(moduli)]
		if ring.CRed(ring.CRed(a.Values[v]+b.Values[v], q)+sk[1][v], q) != whole {
			t.Fatalf("value %d: the sketch of the sum is not the sum of the sketches", v)
		}
	}
	if again := f.subtrees[0].Sketch(f.key); !slices.Equal(again.Values, a.Values) {
		t.Fatal("a sketch is not deterministic")
	}
	ctx := f.expect.Context
	ctx.Attempt++
	if moved := sketchPolys(f.key, ctx, moduli, f.subtrees[0].c1)[0]; slices.Equal(moved, a.Values) {
		t.Fatal("the weights do not depend on the context")
	}
}

func FuzzParseSketch(f *testing.F) {
	fx := newFixture(f)
	key := SketchKey{1}
	b, err := fx.agg.Sketch(key).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{})
	p := fx.keys[0].Params
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSketch(b, p, len(fx.keys))
		if err != nil {
			return
		}
		b2, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := ParseSketch(b2, p, len(fx.keys))
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if b3, _ := s2.MarshalBinary(); !bytes.Equal(b2, b3) {
			t.Fatal("decode/encode is not stable")
		}
	})
}
