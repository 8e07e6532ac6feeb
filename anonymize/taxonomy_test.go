package anonymize

import (
	"errors"
	"strings"
	"testing"
)

func TestSeed003TaxonomyStrengthAndInformativeness(t *testing.T) {
	_, tax := seed003(t)
	// Reddy et al.'s listing of P (corrected: Engineering 3, Non-Engineering 4; [23-25]).
	wantP := map[string]map[string]float64{
		"education": {"Any-Education": 7, "Engineering": 3, "Non-Engineering": 4, "Science": 2, "Arts": 2,
			"Computers": 1, "Non-Computers": 2, "Life Sc.": 1, "Civil": 1},
		"age":    {"[1-60]": 60, "[1-25]": 25, "[26-60]": 35, "[1-22]": 22, "[23-25]": 3},
		"gender": {"Any-Gender": 2, "M": 1, "F": 1},
	}
	for col, m := range wantP {
		for label, p := range m {
			id, ok := tax[col].Find(label)
			if !ok {
				t.Fatalf("%s: no node %q", col, label)
			}
			if got := tax[col].PrivacyStrength(id); got != p {
				t.Errorf("P(%s) = %v, want %v", label, got, p)
			}
		}
	}
	wantI := map[string]float64{"Any-Education": 0, "Engineering": 1.0 / 3, "Science": 2.0 / 3, "Computers": 1, "Civil": 1}
	for label, i := range wantI {
		id, _ := tax["education"].Find(label)
		if got := tax["education"].Informativeness(id); got != i {
			t.Errorf("I(%s) = %v, want %v", label, got, i)
		}
	}
}

func TestGeneraliseARX(t *testing.T) {
	needAdult(t)
	tx, err := LoadARXFile(adultDir+"/arx/adult_hierarchy_age.csv", "age", true)
	if err != nil {
		t.Fatal(err)
	}
	// ARX's label quirk: 40 is under "35-39".
	for level, want := range []string{"40", "35-39", "30-39", "20-39", "*", "*"} {
		got, err := tx.Generalise("40", level)
		if err != nil || got != want {
			t.Errorf("Generalise(40, %d) = %q, %v; want %q", level, got, err, want)
		}
	}
	if tx.MaxLevel() != 4 || tx.NumLeaves() != 100 {
		t.Errorf("age: MaxLevel %d, leaves %d", tx.MaxLevel(), tx.NumLeaves())
	}
	id, _ := tx.Find("35-39")
	if n := tx.Nodes[id]; n.Lo != 36 || n.Hi != 40 {
		t.Errorf("range of 35-39 = [%v,%v], want [36,40]", n.Lo, n.Hi)
	}
	ed, err := LoadARXFile(adultDir+"/arx/adult_hierarchy_education.csv", "education", false)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := ed.Generalise("Bachelors", 2); g != "Higher education" {
		t.Errorf("Bachelors@2 = %q", g)
	}
}

func TestTaxonomyErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
		yaml            bool
		numeric         bool
	}{
		{name: "leaf twice", src: "a;X;*\na;X;*\n", want: `leaf "a" listed twice`},
		{name: "two parents", src: "a;X;P;*\nb;X;Q;*\n", want: `label "X" has two parents, "P" and "Q"`},
		{name: "label reused", src: "a;X;*\nb;X;*\nX;Z;*\n", want: `label "X" used by two different nodes`},
		{name: "relabel", src: "a;X;R\nb;Y;S\n", want: `second root "S"`},
		{name: "ragged", src: "a;X;*\nb;*\n", want: "line 2 has 2 levels"},
		{name: "numeric leaf", src: "1;*\nx;*\n", numeric: true, want: `numeric leaf "x"`},
		{name: "interleaved ranges", src: "1;A;*\n3;B;*\n5;A;*\n", numeric: true, want: "overlap"},
		{name: "yaml overlap", yaml: true, want: `intervals "[1-22]" and "[22-25]" overlap`, src: `
column: age
numeric: true
root: {label: "[1-25]", lo: 1, hi: 25, children: [{label: "[1-22]", lo: 1, hi: 22}, {label: "[22-25]", lo: 22, hi: 25}]}`},
		{name: "yaml gap", yaml: true, want: "do not partition", src: `
column: age
numeric: true
root: {label: "[1-25]", lo: 1, hi: 25, children: [{label: "[1-20]", lo: 1, hi: 20}, {label: "[23-25]", lo: 23, hi: 25}]}`},
		{name: "yaml short", yaml: true, want: "end at 24", src: `
column: age
numeric: true
root: {label: "[1-25]", lo: 1, hi: 25, children: [{label: "[1-20]", lo: 1, hi: 20}, {label: "[21-24]", lo: 21, hi: 24}]}`},
		{name: "yaml unknown field", yaml: true, want: "field colour not found", src: "column: c\nroot: {label: x, colour: red}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.yaml {
				_, err = ReadYAML(strings.NewReader(c.src))
			} else {
				_, err = ReadARX(strings.NewReader(c.src), "col", c.numeric)
			}
			if !errors.Is(err, ErrTaxonomy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrTaxonomy containing %q", err, c.want)
			}
		})
	}
}

func TestValueMissingFromTaxonomy(t *testing.T) {
	tab, tax := seed003(t)
	tab.Columns[3].Str[5] = "Medicine"
	_, err := Encode(tab, []string{"gender", "education", "age"}, tax)
	if !errors.Is(err, ErrNotCovered) || !strings.Contains(err.Error(), `"Medicine"`) || !strings.Contains(err.Error(), `"education"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := tax["age"].Leaf("61"); !errors.Is(err, ErrNotCovered) {
		t.Fatalf("age 61: %v", err)
	}
	if id, err := tax["age"].Leaf("24"); err != nil || tax["age"].Nodes[id].Label != "[23-25]" {
		t.Fatalf("age 24 -> %v %v", id, err)
	}
}

// Taxonomy files are hand-written: the readers return ErrTaxonomy (or an I/O
// error) and never panic, and whatever they accept answers Leaf for its leaves.
func FuzzReadTaxonomy(f *testing.F) {
	f.Add([]byte("a;X;*\nb;X;*\nc;Y;*\n"), false)
	f.Add([]byte("1;0-4;*\n2;0-4;*\n7;5-9;*\n"), true)
	f.Add([]byte("column: c\nnumeric: true\nroot: {label: r, lo: 1, hi: 4, children: [{label: a, lo: 1, hi: 2}, {label: b, lo: 3, hi: 4}]}\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, numeric bool) {
		for _, read := range []func() (*Taxonomy, error){
			func() (*Taxonomy, error) { return ReadARX(strings.NewReader(string(b)), "c", numeric) },
			func() (*Taxonomy, error) { return ReadYAML(strings.NewReader(string(b))) },
		} {
			tx, err := read()
			if err != nil {
				if !errors.Is(err, ErrTaxonomy) && !strings.Contains(err.Error(), "taxonomy") {
					t.Fatalf("error outside ErrTaxonomy: %v", err)
				}
				continue
			}
			for label, id := range tx.leaf {
				got, err := tx.Leaf(label)
				if err != nil || got != id {
					t.Fatalf("leaf %q: %d %v, want %d", label, got, err, id)
				}
				if g, err := tx.Generalise(label, tx.MaxLevel()); err != nil || g != tx.Nodes[0].Label {
					t.Fatalf("leaf %q at the top: %q %v", label, g, err)
				}
			}
		}
	})
}
