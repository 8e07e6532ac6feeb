package sjc_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/wire"
)

// TestMessagesRoundTrip: the round outputs that will travel (summaries to
// a neighbour, offers to the coordinator) survive the system's encoding.
func TestMessagesRoundTrip(t *testing.T) {
	t.Parallel()
	msgs := []any{
		&sjc.ClassSummary{Edge: 1, Values: []string{"1:a", "1:b"}, Counts: []uint64{1, 0, 1 << 63, 2}},
		&sjc.SplitSummary{Edge: 0, Values: []string{"1:x"}, Left: []uint64{2, 2}, Right: []uint64{2, 0}},
		&sjc.Offer{Gains: []float64{0.25, 0.2044}},
	}
	for _, m := range msgs {
		b, err := wire.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(m).Elem()).Interface()
		if err := wire.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m, back) {
			t.Fatalf("round trip %+v -> %+v", m, back)
		}
	}
}

// FuzzApplySummary: summary bytes from a peer are decoded and applied to
// a table of the worked example; whatever they hold, the receiver returns
// a Part or an error and never panics.
func FuzzApplySummary(f *testing.F) {
	_, g, data := loadSpec(f, "testdata/xu-example/spec.yaml")
	labels, _ := sjc.Labels(g, data["T1"])
	locals, err := sjc.Prepare(g, data, labels, sjc.DefaultParams())
	if err != nil {
		f.Fatal(err)
	}
	parts, err := sjc.Propagate(g, locals)
	if err != nil {
		f.Fatal(err)
	}
	shared := make([][]string, len(g.Edges))
	for e, ed := range g.Edges {
		shared[e] = sjc.Intersect(locals[g.Index(ed.Parent)].JoinValues(e), locals[e+1].JoinValues(e))
	}
	for _, m := range []any{
		&sjc.EdgeSummary{Edge: 0, Pos: []byte{0, 0}, Counts: []byte{4, 0, 1, 3}},
		&sjc.EdgeSummary{Edge: 0, Pos: []byte{1}, Counts: []byte{2, 1}, Right: []byte{0, 1}},
		&sjc.EdgeSummary{Edge: 1, Pos: []byte{0x80, 0x80, 0x01}, Counts: []byte{0xff}},
		&sjc.ClassSummary{Edge: 0, Values: []string{"1:a", "1:b"}, Counts: []uint64{4, 0, 1, 3}},
		&sjc.SplitSummary{Edge: 0, Values: []string{"1:a", "1:b"}, Left: []uint64{2, 0, 1, 3}, Right: []uint64{2, 0, 0, 0}},
		&sjc.ClassSummary{Edge: 1, Values: []string{"1:x"}, Counts: []uint64{1 << 63, 3}},
	} {
		b, _ := wire.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var cs sjc.ClassSummary
		if wire.Unmarshal(b, &cs) == nil {
			for i, l := range locals {
				_, _ = l.Forward(parts[i], cs)
				_, _ = l.Backward(parts[i], cs)
			}
		}
		var ss sjc.SplitSummary
		if wire.Unmarshal(b, &ss) == nil {
			for i, l := range locals {
				_, _, _ = l.ApplySplit(parts[i], ss)
			}
		}
		// As it travels: positions in the edge's shared values.
		var es sjc.EdgeSummary
		if wire.Unmarshal(b, &es) == nil && es.Edge >= 0 && es.Edge < len(shared) {
			if cs, err := es.ClassSummary(shared[es.Edge]); err == nil {
				for i, l := range locals {
					_, _ = l.Forward(parts[i], cs)
					_, _ = l.Backward(parts[i], cs)
				}
			}
			if ss, err := es.SplitSummary(shared[es.Edge]); err == nil {
				for i, l := range locals {
					_, _, _ = l.ApplySplit(parts[i], ss)
				}
			}
		}
	})
}

// TestSummaryValueOrder: a summary lists its join values sorted and
// distinct; one that repeats a value, lists them out of order or names a
// value the table does not hold is refused, and one in order is applied
// whether it names every value of the table or skips some.
func TestSummaryValueOrder(t *testing.T) {
	t.Parallel()
	_, g, data := loadSpec(t, "testdata/xu-example/spec.yaml")
	labels, _ := sjc.Labels(g, data["T1"])
	locals, err := sjc.Prepare(g, data, labels, sjc.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	t2 := locals[g.Index("T2")] // on edge 0, values 1:a, 1:b, 1:c
	init := t2.Initial()
	for _, c := range []struct {
		values []string
		ok     bool
	}{
		{[]string{"1:a", "1:b", "1:c"}, true},
		{[]string{"1:a", "1:c"}, true},
		{[]string{"1:c"}, true},
		{[]string{"1:b", "1:a"}, false},
		{[]string{"1:a", "1:a"}, false},
		{[]string{"1:a", "1:d"}, false},
		{[]string{"1:0", "1:a"}, false},
	} {
		cs := sjc.ClassSummary{Edge: 0, Values: c.values, Counts: make([]uint64, len(c.values)*len(labels))}
		for i := range cs.Counts {
			cs.Counts[i] = 1
		}
		p, err := t2.Forward(init, cs)
		if (err == nil) != c.ok {
			t.Fatalf("values %v: error %v, want ok %v", c.values, err, c.ok)
		}
		if err != nil && !errors.Is(err, sjc.ErrSummary) {
			t.Fatalf("values %v: %v is not ErrSummary", c.values, err)
		}
		if c.ok {
			// Every row of T2 whose join value is named is kept.
			want := 0
			for _, v := range []string{"a", "c", "b", "a"} {
				if slices.Contains(c.values, "1:"+v) {
					want++
				}
			}
			if p.Len() != want {
				t.Fatalf("values %v: %d rows kept, want %d", c.values, p.Len(), want)
			}
		}
	}
}
