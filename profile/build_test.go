package profile

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// example19 builds the profile of Example 19 (Xu, thesis, chapter 5,
// §5.2.1): minsup 2, δ 0.6.
func example19(t *testing.T) *Node {
	t.Helper()
	f, err := os.Open("testdata/example19.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	docs, err := ParseDocuments(f)
	if err != nil {
		t.Fatal(err)
	}
	root, err := Build(docs, Params{MinSup: 2, Delta: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The golden test: the thesis's Example 19, node for node.
func TestExample19(t *testing.T) {
	root := example19(t)
	var got bytes.Buffer
	if err := root.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/example19.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("profile:\n%s\nwant\n%s", got.String(), want)
	}
	// The figures the example's text states.
	sup := map[string]float64{}
	walk(root, func(n *Node) { sup[n.Label] = n.Sup })
	for label, want := range map[string]float64{"": 10, "research": 5, "sports": 3.5, "sex": 1.5, "personalized/search": 3, "AI": 2, "soccer": 2} {
		if sup[label] != want {
			t.Errorf("Sup(%q) = %v, want %v", label, sup[label], want)
		}
	}
}

// The 1/n split: a document shared by siblings counts 1/n in each, and the
// shares compound down the tree.
func TestSupportSplit(t *testing.T) {
	// d1..d3 hold a and b (Sim(a,b) = 3/5, P(a|b) = 3/4, both ≤ 0.8), d4
	// holds a, d5 holds b; so a and b are siblings sharing d1..d3.
	docs := [][]string{{"a", "b", "c"}, {"a", "b", "c"}, {"a", "b"}, {"a"}, {"b"}}
	root, err := Build(docs, Params{MinSup: 2, Delta: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Children) != 2 {
		t.Fatalf("root has %d children, want a and b", len(root.Children))
	}
	for i, c := range root.Children {
		// 3 shared documents at 1/2 and one own document.
		if c.Sup != 2.5 {
			t.Errorf("Sup(%s) = %v, want 2.5", c.Label, c.Sup)
		}
		// Under a, b is frequent in d1..d3 (each worth 1/2) and absorbs c
		// (P(b|c) = 1); under a/b, c holds d1 and d2 at 1/2 each.
		other := root.Children[1-i].Label
		if len(c.Children) != 1 || c.Children[0].Label != other || c.Children[0].Sup != 1.5 {
			t.Fatalf("children of %s: %+v, want %s with Sup 1.5", c.Label, c.Children, other)
		}
		g := c.Children[0].Children
		if len(g) != 1 || g[0].Label != "c" || g[0].Sup != 1 {
			t.Errorf("children of %s/%s: %+v, want c with Sup 1", c.Label, other, g)
		}
	}
}

// Rule 2 absorbs a specific term; Rule 1 merges similar ones, the new term
// first in the label.
func TestRules(t *testing.T) {
	docs := [][]string{{"x", "y"}, {"x", "y"}, {"x", "y", "z"}, {"x", "z"}, {"x"}, {"q"}}
	root, err := Build(docs, Params{MinSup: 2, Delta: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	// x (5 docs) first; y (3): Sim = 3/5 ≤ 0.6, P(x|y) = 1 > 0.6, so y's
	// documents join x; z likewise. q is not frequent.
	if len(root.Children) != 1 || root.Children[0].Label != "x" || root.Children[0].Sup != 5 {
		t.Fatalf("children: %+v, want x alone with Sup 5", root.Children)
	}
	// Under x: y (3) then z (2): Sim(z,y) = 1/4, P(y|z) = 1/2; siblings.
	x := root.Children[0]
	if len(x.Children) != 2 || x.Children[0].Label != "y" || x.Children[1].Label != "z" {
		t.Fatalf("under x: %+v", x.Children)
	}
	if x.Children[0].Sup != 2.5 || x.Children[1].Sup != 1.5 {
		t.Errorf("Sup(y), Sup(z) = %v, %v, want 2.5, 1.5", x.Children[0].Sup, x.Children[1].Sup)
	}
	// Rule 1: b and a hold the same documents, so Sim = 1.
	root, err = Build([][]string{{"a", "b"}, {"a", "b"}, {"c"}}, Params{MinSup: 2, Delta: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Children) != 1 || root.Children[0].Label != "b/a" || root.Children[0].Sup != 2 {
		t.Errorf("children: %+v, want b/a with Sup 2", root.Children)
	}
}

// On generated corpora every profile obeys the thesis's invariants.
func TestGeneratedInvariants(t *testing.T) {
	for seed := range uint64(4) {
		p := DefaultGen()
		p.Docs, p.Seed = 400, seed
		docs, err := Generate(p)
		if err != nil {
			t.Fatal(err)
		}
		root, err := Build(docs, Params{MinSup: 5, Delta: 0.6})
		if err != nil {
			t.Fatal(err)
		}
		if len(root.Children) == 0 {
			t.Fatalf("seed %d: no interests", seed)
		}
		var buf bytes.Buffer
		if err := root.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadProfile(&buf); err != nil {
			t.Errorf("seed %d: Build's profile fails ReadProfile: %v", seed, err)
		}
		// Leaves with "others" sum to |D| (Σ Sup(t) = |D|, §5.2.2).
		e, err := Expose(root, 0)
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, l := range e.Leaves {
			total += l.P
		}
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("seed %d: leaves sum to %v of |D|", seed, total)
		}
		walk(root, func(n *Node) {
			for i := 1; i < len(n.Children); i++ {
				if n.Children[i].Sup > n.Children[i-1].Sup {
					t.Errorf("seed %d: children of %q not by descending Sup", seed, n.Label)
				}
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	docs := [][]string{{"a"}}
	for _, tc := range []struct {
		docs [][]string
		p    Params
		want error
		text string
	}{
		{docs, Params{MinSup: 0, Delta: 0.5}, ErrParams, "minsup"},
		{docs, Params{MinSup: 1, Delta: 1.5}, ErrParams, "delta"},
		{docs, Params{MinSup: 1, Delta: math.NaN()}, ErrParams, "delta"},
		{nil, Params{MinSup: 1, Delta: 0.5}, ErrDocuments, "no documents"},
		{[][]string{{"a/b"}}, Params{MinSup: 1, Delta: 0.5}, ErrDocuments, "document 1"},
		{[][]string{{"a"}, {}}, Params{MinSup: 1, Delta: 0.5}, ErrDocuments, "document 2"},
	} {
		_, err := Build(tc.docs, tc.p)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("Build(%v, %+v) = %v, want %v naming %s", tc.docs, tc.p, err, tc.want, tc.text)
		}
	}
}

func walk(n *Node, f func(*Node)) {
	f(n)
	for _, c := range n.Children {
		walk(c, f)
	}
}
