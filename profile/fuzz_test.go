package profile

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

// Untrusted documents: parsing never panics, and whatever parses builds a
// profile that ReadProfile accepts and whose leaves sum to |D|.
func FuzzDocuments(f *testing.F) {
	if b, err := os.ReadFile("testdata/example19.txt"); err == nil {
		f.Add(b, 2, 0.6)
	}
	f.Add([]byte("a,b\na,b\nb,c\n"), 1, 0.0)
	f.Add([]byte("a/b\n"), 1, 1.0)
	f.Fuzz(func(t *testing.T, in []byte, minsup int, delta float64) {
		docs, err := ParseDocuments(bytes.NewReader(in))
		if err != nil {
			return
		}
		root, err := Build(docs, Params{MinSup: minsup, Delta: delta})
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := root.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadProfile(&buf); err != nil {
			t.Fatalf("Build's profile fails ReadProfile: %v", err)
		}
		e, err := Expose(root, 0)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, l := range e.Leaves {
			sum += l.P
		}
		if math.Abs(sum-1) > 1e-9 || math.Abs(e.ExpRatio-1) > 1e-9 && e.H > 0 {
			t.Fatalf("leaves sum to %v, expRatio at 0 is %v", sum, e.ExpRatio)
		}
	})
}

// Untrusted profiles: reading never panics, and a profile that reads
// exposes an expRatio in [0, 1] at any minDetail.
func FuzzProfile(f *testing.F) {
	if b, err := os.ReadFile("testdata/example19.json"); err == nil {
		f.Add(b, 0.3)
	}
	f.Add([]byte(`{"label":"","sup":1,"children":[{"label":"a","sup":1}]}`), 0.0)
	f.Add([]byte(`{"label":"","sup":1e308,"children":[{"label":"a/b","sup":1e-300}]}`), 1.0)
	f.Fuzz(func(t *testing.T, in []byte, minDetail float64) {
		root, err := ReadProfile(bytes.NewReader(in))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		e, err := Expose(root, minDetail)
		if err != nil {
			return
		}
		if !(e.ExpRatio >= 0 && e.ExpRatio <= 1+1e-6) {
			t.Fatalf("expRatio %v", e.ExpRatio)
		}
		for _, w := range e.Terms {
			if math.IsNaN(w.Weight) || w.Weight < -1e-9 {
				t.Fatalf("weight %v", w.Weight)
			}
		}
	})
}

// Untrusted result lists: parsing never panics, and Rerank returns every
// result once with UPRank a permutation.
func FuzzResults(f *testing.F) {
	f.Add([]byte("1,sports,news\n2,research\n"), 0.6)
	f.Add([]byte("3,\n1,a,a\n"), 1.0)
	f.Fuzz(func(t *testing.T, in []byte, alpha float64) {
		res, err := ParseResults(bytes.NewReader(in))
		if err != nil {
			return
		}
		out, err := Rerank([]Weighted{{"a", 1}, {"research/sports", 0.5}}, res, alpha)
		if err != nil {
			return
		}
		if len(out) != len(res) {
			t.Fatalf("%d results in, %d out", len(res), len(out))
		}
		seen := make([]bool, len(out)+1)
		for _, r := range out {
			if r.UPRank < 1 || r.UPRank > len(out) || seen[r.UPRank] {
				t.Fatalf("UPRank %d", r.UPRank)
			}
			seen[r.UPRank] = true
		}
	})
}
