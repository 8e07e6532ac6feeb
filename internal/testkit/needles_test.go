package testkit

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestNeedlesFindsWhatContainsFinds: over random haystacks of a small
// alphabet (so that needles do occur, and their first two bytes often do
// without the rest), Find reports a needle exactly when bytes.Contains
// finds one, and the needle it reports is in the haystack and starts no
// later than any other.
func TestNeedlesFindsWhatContainsFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.IntN(3))
		}
		return b
	}
	found := 0
	for range 2000 {
		var needles [][]byte
		for range 1 + r.IntN(6) {
			needles = append(needles, word(2+r.IntN(5)))
		}
		hay := word(r.IntN(40))
		first := -1
		for _, x := range needles {
			if i := bytes.Index(hay, x); i >= 0 && (first < 0 || i < first) {
				first = i
			}
		}
		got := NewNeedles(needles).Find(hay)
		if (got != nil) != (first >= 0) {
			t.Fatalf("needles %q in %q: found %q, want a match at %d", needles, hay, got, first)
		}
		if got != nil {
			found++
			if bytes.Index(hay, got) != first {
				t.Fatalf("needles %q in %q: found %q at %d, want the first match, at %d", needles, hay, got, bytes.Index(hay, got), first)
			}
		}
	}
	if found < 200 || found > 1800 {
		t.Fatalf("%d of 2000 haystacks held a needle: the cases test too little", found)
	}
	if NewNeedles(nil).Find([]byte("anything")) != nil {
		t.Fatal("no needles found something")
	}
}
