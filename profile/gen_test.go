package profile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A seed fixes the corpus, the corpus round-trips through the document
// format, and general topics are more frequent than specific ones.
func TestGenerate(t *testing.T) {
	p := DefaultGen()
	a, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(p)
	p.Seed++
	c, _ := Generate(p)
	var wa, wb, wc bytes.Buffer
	for _, x := range []struct {
		d [][]string
		w *bytes.Buffer
	}{{a, &wa}, {b, &wb}, {c, &wc}} {
		if err := WriteDocuments(x.w, x.d); err != nil {
			t.Fatal(err)
		}
	}
	if wa.String() != wb.String() || wa.String() == wc.String() {
		t.Error("the corpus does not follow the seed")
	}
	back, err := ParseDocuments(strings.NewReader(wa.String()))
	if err != nil || len(back) != p.Docs {
		t.Fatalf("read back %d documents: %v", len(back), err)
	}
	df := map[string]int{}
	for _, d := range a {
		for _, term := range d {
			df[term]++
		}
	}
	if !(df["t1"] > df["t1-1"] && df["t1-1"] > df["t1-1-1"] && df["t1"] > df["t8"]) {
		t.Errorf("frequencies t1 %d, t1-1 %d, t1-1-1 %d, t8 %d", df["t1"], df["t1-1"], df["t1-1-1"], df["t8"])
	}
}

func TestGenerateRejects(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*GenParams)
		want string
	}{
		{func(p *GenParams) { p.Docs = 0 }, "docs"},
		{func(p *GenParams) { p.Fanout = -1 }, "fanout"},
		{func(p *GenParams) { p.Noise = -1 }, "noise"},
		{func(p *GenParams) { p.Docs, p.Noise = 1<<20, 1<<10 }, "docs × (depth + noise)"},
	} {
		p := DefaultGen()
		tc.mod(&p)
		if _, err := Generate(p); !errors.Is(err, ErrParams) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
}
