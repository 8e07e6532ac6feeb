package pgen_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// synthetic is a file that fits d's description: for a factorial design
// every combination of the attributes' values in order, otherwise the
// values cycled through each domain or range; the classes dealt in
// domain order to meet d.classes.
func synthetic(d *uciSet) []string {
	var classes []string
	for _, c := range d.domains[d.class()] {
		for range d.classes[c] {
			classes = append(classes, c)
		}
	}
	lines := make([]string, d.rows)
	for i := range lines {
		rest := i
		var rec []string
		for a, name := range d.attrs() {
			if dom, ok := d.domains[name]; ok {
				idx := (i + a) % len(dom)
				if d.factorial { // mixed radix: attribute a's digit of i
					idx, rest = rest%len(dom), rest/len(dom)
				}
				rec = append(rec, dom[idx])
				continue
			}
			b := d.ranges[name]
			rec = append(rec, fmt.Sprint(b[0]+i%(b[1]-b[0]+1)))
		}
		lines[i] = strings.Join(append(rec, classes[i]), ",")
	}
	return lines
}

// TestUCIParse checks, with no data, that each dataset's check accepts a
// file that fits its .names description (with CRLF line ends and blank
// lines, as some copies have) and refuses each way a copy can differ:
// a header, a field more, a row fewer, a value outside a domain or
// range, a class changed, and in a full factorial design a combination
// twice.
func TestUCIParse(t *testing.T) {
	for _, d := range []*uciSet{nursery, car, cmc} {
		good := synthetic(d)
		recs, err := d.parse(strings.NewReader(strings.Join(good, "\r\n") + "\r\n\r\n"))
		if err != nil || len(recs) != d.rows {
			t.Fatalf("%s: a file that fits the description: %d rows, %v", d.name, len(recs), err)
		}
		change := func(i int, f func([]string)) []string {
			lines := slices.Clone(good)
			rec := strings.Split(lines[i], ",")
			f(rec)
			lines[i] = strings.Join(rec, ",")
			return lines
		}
		last := len(d.names) - 1
		bad := map[string][]string{
			"a header":       append([]string{strings.Join(d.names, ",")}, good...),
			"a field more":   change(7, func(r []string) { r[last] += "," + r[last] }),
			"a row fewer":    good[1:],
			"a value":        change(3, func(r []string) { r[1] = "x" }),
			"a class":        change(0, func(r []string) { r[last] = d.domains[d.class()][1] }),
			"a row repeated": append(good[1:], good[2]),
		}
		if !d.factorial {
			delete(bad, "a row repeated") // CMC's survey rows may coincide
			bad["a number out of range"] = change(5, func(r []string) { r[0] = fmt.Sprint(d.ranges[d.names[0]][1] + 1) })
		}
		for what, lines := range bad {
			if _, err := d.parse(strings.NewReader(strings.Join(lines, "\n"))); !errors.Is(err, errNotUCI) {
				t.Errorf("%s with %s: %v, want refused", d.name, what, err)
			}
		}
	}
}

// FuzzUCIParse feeds arbitrary bytes to a small dataset's check: it must
// not panic, and whatever it accepts fits the description.
func FuzzUCIParse(f *testing.F) {
	d := &uciSet{
		name: "tiny", names: []string{"a", "n", "c"},
		domains: map[string][]string{"a": {"x", "y"}, "c": {"p", "q"}},
		ranges:  map[string][2]int{"n": {0, 1}},
		rows:    2, classes: map[string]int{"p": 1, "q": 1},
	}
	f.Add([]byte("x,0,p\ny,1,q\n"))
	f.Add([]byte("x,0,p\r\n\r\nx,0,q"))
	f.Add([]byte("a,n,c\nx,0,p\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := d.parse(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		counts := map[string]int{}
		for _, r := range recs {
			for i, c := range d.names {
				if !d.valid(c, r[i]) {
					t.Fatalf("accepted a value of %s outside its domain", c)
				}
			}
			counts[r[2]]++
		}
		if len(recs) != d.rows || counts["p"] != 1 || counts["q"] != 1 {
			t.Fatalf("accepted %d rows, classes %v", len(recs), counts)
		}
	})
}
