package boost

import (
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// reflectedSummary is ComboSummary without its codec: what msgpack's
// reflection writes and reads for it.
type reflectedSummary ComboSummary

// randomSummary is a summary with nil, empty and long strings and slices.
func randomSummary(rng *mrand.Rand) ComboSummary {
	str := func() string {
		switch rng.IntN(5) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("x", 30+rng.IntN(300)) // str8 and str16
		}
		return fmt.Sprintf("v%d|", rng.IntN(1<<20))
	}
	cs := ComboSummary{Edge: rng.IntN(5) - 1}
	n := rng.IntN(6)
	if rng.IntN(4) > 0 {
		cs.Values = make([]string, n)
		for i := range cs.Values {
			cs.Values[i] = str()
		}
	}
	if rng.IntN(4) > 0 {
		cs.Entries = make([][]ComboCount, n)
		for i := range cs.Entries {
			if rng.IntN(4) == 0 {
				continue // nil
			}
			cs.Entries[i] = make([]ComboCount, rng.IntN(4))
			for j := range cs.Entries[i] {
				cs.Entries[i][j] = ComboCount{Combo: str(), Count: rng.Uint64() >> rng.IntN(64)}
			}
		}
	}
	return cs
}

// TestComboSummaryWire: the codec writes reflection's bytes and reads
// them back, as reflection reads them.
func TestComboSummaryWire(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	for i := range 500 {
		cs := randomSummary(rng)
		got, err := wire.Marshal(&cs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.Marshal((*reflectedSummary)(&cs))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("summary %d: the codec writes other bytes than reflection", i)
		}
		var back ComboSummary
		var ref reflectedSummary
		if err := wire.Unmarshal(got, &back); err != nil {
			t.Fatalf("summary %d: %v", i, err)
		}
		if err := wire.Unmarshal(got, &ref); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, cs) || !reflect.DeepEqual(back, ComboSummary(ref)) {
			t.Fatalf("summary %d read back as %+v, want %+v", i, back, cs)
		}
	}
	// Unknown fields are refused, as reflection refuses them.
	for _, v := range []any{
		map[string]any{"edge": 1, "value": []string{"a"}},
		map[string]any{"entries": [][]map[string]any{{{"combo": "x", "counts": 1}}}},
	} {
		b, err := wire.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var cs ComboSummary
		if err := wire.Unmarshal(b, &cs); err == nil {
			t.Errorf("%v accepted", v)
		}
	}
}

// FuzzComboSummary: whatever the codec accepts, reflection accepts and
// reads alike (the codec refuses more: ComboCounts written as arrays).
func FuzzComboSummary(f *testing.F) {
	rng := mrand.New(mrand.NewPCG(5, 6))
	for range 8 {
		cs := randomSummary(rng)
		b, err := wire.Marshal(&cs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var cs ComboSummary
		if wire.Unmarshal(b, &cs) != nil {
			return
		}
		var ref reflectedSummary
		if err := wire.Unmarshal(b, &ref); err != nil {
			t.Fatalf("the codec accepts what reflection refuses: %v", err)
		}
		if !reflect.DeepEqual(cs, ComboSummary(ref)) {
			t.Fatalf("read as %+v, reflection reads %+v", cs, ref)
		}
	})
}

// stringsMsg and reflectedStrings are a message with wireStrings and
// wireStringLists fields and the same message as reflection reads it.
type stringsMsg struct {
	V wireStrings     `msgpack:"v"`
	L wireStringLists `msgpack:"l"`
}

type reflectedStrings struct {
	V []string   `msgpack:"v"`
	L [][]string `msgpack:"l"`
}

// TestWireStrings: wireStrings and wireStringLists write reflection's
// bytes and read them back as reflection does, nil, empty and long
// strings and lists among them.
func TestWireStrings(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(7, 8))
	for i := range 300 {
		cs := randomSummary(rng)
		var ref reflectedStrings
		ref.V = cs.Values
		if cs.Entries != nil {
			ref.L = make([][]string, len(cs.Entries))
			for j, es := range cs.Entries {
				if es != nil {
					ref.L[j] = []string{}
				}
				for _, e := range es {
					ref.L[j] = append(ref.L[j], e.Combo)
				}
			}
		}
		m := stringsMsg{V: ref.V, L: ref.L}
		got, err := wire.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.Marshal(&ref)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("message %d: other bytes than reflection's", i)
		}
		var back stringsMsg
		if err := wire.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual([]string(back.V), ref.V) || !reflect.DeepEqual([][]string(back.L), ref.L) {
			t.Fatalf("message %d read back as %+v, want %+v", i, back, ref)
		}
	}
}

// FuzzWireStrings: whatever wireStrings and wireStringLists accept,
// reflection accepts and reads alike.
func FuzzWireStrings(f *testing.F) {
	for _, m := range []reflectedStrings{{}, {V: []string{"a", ""}, L: [][]string{nil, {}, {"x", "yy"}}}} {
		b, err := wire.Marshal(&m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m stringsMsg
		if wire.Unmarshal(b, &m) != nil {
			return
		}
		var ref reflectedStrings
		if err := wire.Unmarshal(b, &ref); err != nil {
			t.Fatalf("accepted what reflection refuses: %v", err)
		}
		if !reflect.DeepEqual([]string(m.V), ref.V) || !reflect.DeepEqual([][]string(m.L), ref.L) {
			t.Fatalf("read as %+v, reflection reads %+v", m, ref)
		}
	})
}

// BenchmarkComboSummaryWire reads and writes a9a's up message: 32,561
// values of one combo each.
func BenchmarkComboSummaryWire(b *testing.B) {
	cs := ComboSummary{Edge: 0}
	for i := range 32561 {
		cs.Values = append(cs.Values, fmt.Sprint(100000+i))
		cs.Entries = append(cs.Entries, []ComboCount{{Combo: "LRLR|", Count: 1}})
	}
	msg, err := wire.Marshal(&cs)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    func() any
	}{{"codec", func() any { return &ComboSummary{} }}, {"reflection", func() any { return &reflectedSummary{} }}} {
		b.Run("read="+c.name, func(b *testing.B) {
			for b.Loop() {
				if err := wire.Unmarshal(msg, c.v()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("write=codec", func(b *testing.B) {
		for b.Loop() {
			if _, err := wire.Marshal(&cs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write=reflection", func(b *testing.B) {
		for b.Loop() {
			if _, err := wire.Marshal((*reflectedSummary)(&cs)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
