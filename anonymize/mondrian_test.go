package anonymize

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// naiveMondrianNCP recomputes NCP from Mondrian's published labels.
func naiveMondrianNCP(t *testing.T, pub, raw *table.Table, tax map[string]*Taxonomy) float64 {
	total := 0.0
	for _, c := range pub.Columns {
		tx := tax[c.Name]
		rc, _ := raw.Column(c.Name)
		dlo, dhi := math.Inf(1), math.Inf(-1)
		if tx.Numeric {
			for _, v := range rc.Str {
				x, _ := strconv.ParseFloat(v, 64)
				dlo, dhi = math.Min(dlo, x), math.Max(dhi, x)
			}
		}
		s := 0.0
		for _, v := range c.Str {
			if tx.Numeric {
				if strings.HasPrefix(v, "[") {
					f := strings.Split(strings.Trim(v, "[]"), "-")
					lo, _ := strconv.ParseFloat(f[0], 64)
					hi, _ := strconv.ParseFloat(f[1], 64)
					s += (hi - lo) / (dhi - dlo)
				}
				continue
			}
			id, _ := tx.Find(v)
			if len(tx.Nodes[id].Children) > 0 {
				s += float64(tx.Nodes[id].Leaves) / float64(tx.Nodes[0].Leaves)
			}
		}
		total += s / float64(len(c.Str))
	}
	return total / float64(len(pub.Columns))
}

func TestMondrianSeed003(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2, 3, 4, 5, 8, 17, 34} {
		res, err := Mondrian(ds, k)
		if err != nil {
			t.Fatal(err)
		}
		pub := res.Publish(ds)
		if m := naiveMinGroup(pub, qid); m < k || m != res.MinGroup {
			t.Fatalf("k=%d: naive min %d, reported %d", k, m, res.MinGroup)
		}
		if got := naiveMondrianNCP(t, pub, raw, tax); math.Abs(got-res.NCP) > 1e-12 {
			t.Fatalf("k=%d: NCP %v, naive %v", k, res.NCP, got)
		}
		// every record's raw value lies inside its published generalisation
		for i, c := range pub.Columns {
			rc, _ := raw.Column(qid[i])
			for r, v := range c.Str {
				if tax[qid[i]].Numeric {
					continue
				}
				id, _ := tax[qid[i]].Find(v)
				leaf, _ := tax[qid[i]].Leaf(rc.Str[r])
				if !tax[qid[i]].Covers(id, leaf) {
					t.Fatalf("k=%d: %q published as %q", k, rc.Str[r], v)
				}
			}
		}
	}
	if res, _ := Mondrian(ds, 1); res.NCP != 0 || len(res.Classes) != 10 {
		t.Fatalf("k=1: NCP %v, %d classes (want 0 and the 10 distinct rows of Table 1)", res.NCP, len(res.Classes))
	}
	if _, err := Mondrian(ds, 0); !errors.Is(err, ErrRequirement) {
		t.Fatal(err)
	}
}

// Mondrian with l-diversity: every class passes the naive checkers for k
// and for distinct or entropy l-diversity.
func TestMondrianDiverse(t *testing.T) {
	attrs, cols, _ := synthetic(t, 200, 5)
	tab := &table.Table{Name: "syn"}
	tax := map[string]*Taxonomy{}
	var qid []string
	for _, a := range attrs {
		tab.Columns = append(tab.Columns, &table.Column{Name: a.Name, Kind: table.Categorical, Str: cols[a.Name]})
		tax[a.Name] = a.Tax
		qid = append(qid, a.Name)
	}
	ds, err := Encode(tab, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	// a sensitive column with four values, correlated with a0
	sens := make([]string, ds.N)
	for r := range sens {
		sens[r] = string(rune('A' + (r*7+int(ds.Attrs[0].Leaf[r]))%4))
	}
	for _, c := range []struct {
		l       float64
		entropy bool
	}{{2, false}, {3, false}, {2, true}, {3, true}} {
		for _, k := range []int{3, 6} {
			res, err := MondrianDiverse(ds, k, &Diversity{Sensitive: sens, L: c.l, Entropy: c.entropy})
			if err != nil {
				t.Fatal(err)
			}
			pub := res.Publish(ds)
			pub.Columns = append(pub.Columns, &table.Column{Name: "s", Str: sens})
			if m := naiveMinGroup(pub, qid); m < k {
				t.Fatalf("l=%v k=%d: class of %d", c.l, k, m)
			}
			for _, vs := range naiveSensitive(pub, qid, "s") {
				if !c.entropy && float64(naiveDistinct(vs)) < c.l || c.entropy && naiveEntropy(vs) < math.Log2(c.l)-1e-9 {
					t.Fatalf("l=%v entropy=%v k=%d: class %v not diverse", c.l, c.entropy, k, vs)
				}
			}
			if len(res.Classes) < 2 {
				t.Fatalf("l=%v k=%d: no cut at all", c.l, k)
			}
		}
	}
	// the constraint matters here: plain Mondrian leaves a class with < 3 values
	plain, _ := Mondrian(ds, 3)
	pub := plain.Publish(ds)
	pub.Columns = append(pub.Columns, &table.Column{Name: "s", Str: sens})
	violated := false
	for _, vs := range naiveSensitive(pub, qid, "s") {
		violated = violated || naiveDistinct(vs) < 3
	}
	if !violated {
		t.Fatal("plain Mondrian is already 3-diverse: the test data exercise nothing")
	}
	if _, err := MondrianDiverse(ds, 3, &Diversity{Sensitive: sens, L: 5}); !errors.Is(err, ErrRequirement) {
		t.Fatalf("5 distinct of 4 values: %v", err)
	}
}
