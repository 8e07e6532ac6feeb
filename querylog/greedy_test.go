package querylog

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// handLog is the graph checked by hand below: a–b share s1; b, c, d
// share s2; d–e share s3; f alone on s4. Frequencies a1 b3 c5 d1 e2 f1,
// clicked documents a1 b2 c5 d3 e2 f1.
func handLog() []Record {
	var log []Record
	add := func(q, user string, t int, clicks ...string) {
		if len(clicks) == 0 {
			clicks = []string{""}
		}
		for _, c := range clicks {
			log = append(log, Record{User: user, Query: q, Time: fmt.Sprint(t), Click: c, Results: 100})
		}
	}
	add("a", "u1", 1, "s1.org/x")
	add("b", "u1", 2, "s1.org/x")
	add("b", "u2", 3, "s2.org/y")
	add("b", "u3", 4)
	for i := range 5 {
		add("c", "u5", 20+i, "s2.org/z")
	}
	add("d", "u4", 10, "s2.org/y", "s3.org/a", "s3.org/b")
	add("e", "u6", 30, "s3.org/c")
	add("e", "u6", 31, "s3.org/c")
	add("f", "u7", 40, "s4.org/d")
	return log
}

func TestHandGraph(t *testing.T) {
	g := NewGraph(handLog(), nil)
	if got := fmt.Sprint(g.Queries, g.Freq, g.Clicks); got != "[a b c d e f] [1 3 5 1 2 1] [1 2 5 3 2 1]" {
		t.Fatalf("nodes and weights: %s", got)
	}
	deg := make([]int, len(g.Queries))
	for i := range deg {
		deg[i] = g.Degree(i)
	}
	if fmt.Sprint(deg) != "[1 3 2 3 1 0]" || g.Edges() != 5 {
		t.Fatalf("degrees %v, %d edges", deg, g.Edges())
	}
	if d := Density(g.Edges(), len(g.Queries)); math.Abs(d-1.0/3) > 1e-12 {
		t.Fatalf("density %v, want 10/30", d)
	}
	if c := g.Components(); fmt.Sprint(c) != "[5 1]" {
		t.Fatalf("components %v", c)
	}
}

// Each method's removals, worked by hand from the scores of §6.2.
func TestDisconnectHand(t *testing.T) {
	want := map[Method][]Step{
		// degrees a1 b3 c2 d3 e1: b (first of the tie), then d (c1 d2 e1)
		ByDegree: {{"b", 5, 2, 0.2, 10, 12}, {"d", 4, 0, 0, 9, 9}},
		// deg/freq a1 b1 c.4 d3 e.5: d; then a1 b2/3 c1/5: a; then b
		ByDegreeFreq: {{"d", 5, 2, 0.2, 12, 11}, {"a", 4, 1, 1.0 / 6, 11, 10}, {"b", 3, 0, 0, 8, 8}},
		// deg/clicks a1 b1.5 c.4 d1 e.5: b; then c1/5 d2/3 e1/2: d
		ByDegreeClick: {{"b", 5, 2, 0.2, 10, 12}, {"d", 4, 0, 0, 9, 9}},
	}
	g := NewGraph(handLog(), nil)
	for _, m := range Methods() {
		d, err := Disconnect(context.Background(), g, m)
		if err != nil {
			t.Fatal(err)
		}
		if d.Start != (Step{"", 6, 5, 1.0 / 3, 13, 14}) {
			t.Errorf("%s: start %+v", m, d.Start)
		}
		if len(d.Steps) != len(want[m]) {
			t.Fatalf("%s: steps %+v, want %+v", m, d.Steps, want[m])
		}
		for i, s := range d.Steps {
			w := want[m][i]
			if s.Removed != w.Removed || s.Nodes != w.Nodes || s.Edges != w.Edges || s.Volume != w.Volume ||
				s.Clicks != w.Clicks || math.Abs(s.Density-w.Density) > 1e-12 {
				t.Errorf("%s step %d: %+v, want %+v", m, i, s, w)
			}
		}
	}
	if _, err := Disconnect(context.Background(), g, "degree/age"); err == nil {
		t.Error("an unknown method ran")
	}
}

func TestDisconnectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Disconnect(ctx, NewGraph(handLog(), nil), ByDegree); err == nil {
		t.Error("a cancelled context did not stop the heuristic")
	}
}

func TestNavigational(t *testing.T) {
	for _, c := range []struct {
		q, site string
		want    bool
	}{
		{"amazon", "www.amazon.com", true},
		{"Amazon.com", "www.amazon.com", true},
		{"bank of america", "www.bankofamerica.com", true},
		{"new york times", "www.nytimes.com", false},
		{"amazon books", "www.amazon.com", false},
		{"cheap flights", "www.cheap-flights.co.uk", true},
		{"", "www.amazon.com", false},
	} {
		if got := Navigational(c.q, c.site); got != c.want {
			t.Errorf("Navigational(%q, %q) = %v", c.q, c.site, got)
		}
	}
	if s := Site("HTTP://www.Amazon.com/books?x=1"); s != "www.amazon.com" {
		t.Errorf("Site: %q", s)
	}
}
