package anonymize

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

func TestWireRoundTrip(t *testing.T) {
	parties, pub, _ := seed003TDS(t, map[string]string{"gender": "A", "education": "B", "age": "B"})
	c, ok := Best(parties[1], pub)
	if !ok {
		t.Fatal("no candidate")
	}
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c2 Candidate
	if err := c2.UnmarshalBinary(b); err != nil || c2 != c {
		t.Fatalf("candidate round trip: %+v %v", c2, err)
	}
	s, err := Split(parties[1], pub, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err = s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var s2 SplitInstruction
	if err := s2.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(s, s2) {
		t.Fatalf("split round trip: %+v %v", s2, err)
	}
	if _, err := pub.Apply(s2); err != nil {
		t.Fatal(err)
	}
	bad := Candidate{Score: math.NaN()}
	b, _ = bad.MarshalBinary()
	if err := c2.UnmarshalBinary(b); !errors.Is(err, wire.ErrMalformed) {
		t.Fatalf("NaN score: %v", err)
	}
	s.Records = s.Records[:1]
	b, _ = s.MarshalBinary()
	if err := s2.UnmarshalBinary(b); !errors.Is(err, wire.ErrMalformed) {
		t.Fatalf("short records: %v", err)
	}
}

func FuzzWire(f *testing.F) {
	c, _ := Candidate{Party: "A", Attr: 1, Node: 2, Score: 0.5}.MarshalBinary()
	s, _ := SplitInstruction{Attr: 1, Node: 0, Children: []int{1, 2}, Records: [][]int32{{0}, {1, 2}}}.MarshalBinary()
	f.Add(c)
	f.Add(s)
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Candidate
		if err := c.UnmarshalBinary(b); err != nil && !errors.Is(err, wire.ErrMalformed) {
			t.Fatalf("candidate: error outside ErrMalformed: %v", err)
		}
		var s SplitInstruction
		if err := s.UnmarshalBinary(b); err != nil && !errors.Is(err, wire.ErrMalformed) {
			t.Fatalf("split: error outside ErrMalformed: %v", err)
		}
	})
}
