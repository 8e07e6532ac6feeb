package pgen_test

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
)

// UCI's Nursery (Olave, Rajkovič, Bohanec, 1989; UCI Machine Learning
// Repository, CC BY 4.0), the dataset of the paper's Figures 5 to 7:
// 12,960 rows, eight categorical attributes and a class of five values.
// It is not in the repository; the figure tests read it from the file
// NURSERY_DATA names (UCI's nursery.data: no header, comma-separated).

// nurseryNames are nursery.data's columns in file order (nursery.names).
var nurseryNames = []string{"parents", "has_nurs", "form", "children", "housing", "finance", "social", "health", "class"}

// nurseryQID are the eight attributes: LD's quasi-identifiers and the
// attributes of every model.
var nurseryQID = nurseryNames[:8]

// nurseryLayout is Nursery's records for LD: every attribute a
// quasi-identifier, the class the sensitive attribute.
var nurseryLayout = layout{names: nurseryNames, qid: nurseryQID, class: "class"}

// nurseryHierarchies are the generalisation hierarchies LD uses on
// Nursery, which ARX's examples lack (docs/pgen.md lists them): an
// ordinal attribute of three or more values (nursery.names orders them)
// goes to its group of adjacent values, then to *; a nominal one (form)
// or one of two values (finance) straight to *. ARX's format: one line
// per value, from the value to the root.
var nurseryHierarchies = map[string]string{
	"parents":  "usual;usual-pretentious;*\npretentious;usual-pretentious;*\ngreat_pret;great_pret;*\n",
	"has_nurs": "proper;proper-less_proper;*\nless_proper;proper-less_proper;*\nimproper;improper-very_crit;*\ncritical;improper-very_crit;*\nvery_crit;improper-very_crit;*\n",
	"form":     "complete;*\ncompleted;*\nincomplete;*\nfoster;*\n",
	"children": "1;1-2;*\n2;1-2;*\n3;3-more;*\nmore;3-more;*\n",
	"housing":  "convenient;convenient-less_conv;*\nless_conv;convenient-less_conv;*\ncritical;critical;*\n",
	"finance":  "convenient;*\ninconv;*\n",
	"social":   "nonprob;nonprob-slightly_prob;*\nslightly_prob;nonprob-slightly_prob;*\nproblematic;problematic;*\n",
	"health":   "recommended;recommended-priority;*\npriority;recommended-priority;*\nnot_recom;not_recom;*\n",
}

// nurseryTaxonomies reads nurseryHierarchies.
func nurseryTaxonomies(t testing.TB) map[string]*anonymize.Taxonomy {
	tax := map[string]*anonymize.Taxonomy{}
	for _, q := range nurseryQID {
		var err error
		if tax[q], err = anonymize.ReadARX(strings.NewReader(nurseryHierarchies[q]), q, false); err != nil {
			t.Fatal(err)
		}
	}
	return tax
}

// nurserySchema is the pgen schema of Nursery: eight categorical
// attributes and the class.
func nurserySchema() *pgen.Schema {
	s := &pgen.Schema{Numeric: map[string]bool{}, ClassColumn: "class"}
	for _, q := range nurseryQID {
		s.Numeric[q] = false
	}
	return s
}

// nurseryRecords reads the file NURSERY_DATA names, skipping the test
// (with PGEN_FIGURES unset too) when it is unset. It fails on a file that
// is not UCI's: a line without nine fields, other than 12,960 rows, or a
// value outside nursery.names's domains (the hierarchies').
func nurseryRecords(t testing.TB) [][]string {
	if os.Getenv("PGEN_FIGURES") == "" {
		t.Skip("set PGEN_FIGURES=1")
	}
	path := os.Getenv("NURSERY_DATA")
	if path == "" {
		t.Skip("no UCI Nursery data: set NURSERY_DATA to the path of nursery.data")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("NURSERY_DATA: %v", err)
	}
	defer f.Close()
	tax := nurseryTaxonomies(t)
	var recs [][]string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		r := strings.Split(s, ",")
		if len(r) != len(nurseryNames) {
			t.Fatalf("NURSERY_DATA: line %d has %d fields, not %d", line, len(r), len(nurseryNames))
		}
		for a, q := range nurseryQID {
			if _, err := tax[q].Leaf(r[a]); err != nil {
				t.Fatalf("NURSERY_DATA: line %d: %v", line, err)
			}
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("NURSERY_DATA: %v", err)
	}
	if len(recs) != 12960 {
		t.Fatalf("NURSERY_DATA: %d rows, UCI's Nursery has 12,960", len(recs))
	}
	return recs
}

// nurseryFolds deals the records into ten folds stratified by class, the
// paper's ten-fold cross-validation (§4): each class's rows in an order
// drawn from the seed "nursery" and the iteration, dealt in turn, one
// class after another, to folds 0 to 9 (so every fold holds a tenth of
// each class, to one row). folds[f] are the indices of fold f's rows.
func nurseryFolds(recs [][]string, iteration int) [10][]int {
	rng := job.Rand([]byte("nursery"), fmt.Sprint("folds/", iteration))
	byClass := map[string][]int{}
	var classes []string
	for i, r := range recs {
		c := r[len(r)-1]
		if byClass[c] == nil {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	slices.Sort(classes)
	var folds [10][]int
	next := 0
	for _, c := range classes {
		rows := byClass[c]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for _, i := range rows {
			folds[next%10] = append(folds[next%10], i)
			next++
		}
	}
	return folds
}

// nurserySplit is fold f's test records and the other nine folds' records
// (the training set), the latter shuffled (seed "nursery", "parties/f":
// the same seed for fold f of every iteration, whose folds hold other
// rows), so that dealing them to n parties (row i to party i mod n) is a
// random partition into tables of equal size, as the paper's is.
func nurserySplit(recs [][]string, folds [10][]int, f int) (train, test [][]string) {
	for g, rows := range folds {
		for _, i := range rows {
			if g == f {
				test = append(test, recs[i])
			} else {
				train = append(train, recs[i])
			}
		}
	}
	rng := job.Rand([]byte("nursery"), fmt.Sprint("parties/", f))
	rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
	return train, test
}

// deal splits records over n parties, record i to party i mod n.
func deal(recs [][]string, n int) [][][]string {
	parts := make([][][]string, n)
	for i, r := range recs {
		parts[i%n] = append(parts[i%n], r)
	}
	return parts
}

// TestNurseryHierarchies checks the hierarchies LD uses on Nursery (no
// data needed): each is a valid ARX hierarchy over exactly its
// attribute's values in nursery.names, with the levels docs/pgen.md gives
// (three for the ordinal attributes of three or more values, two for
// form and finance), and an ordinal group holds adjacent values only.
func TestNurseryHierarchies(t *testing.T) {
	domains := map[string][]string{ // nursery.names, in its order
		"parents":  {"usual", "pretentious", "great_pret"},
		"has_nurs": {"proper", "less_proper", "improper", "critical", "very_crit"},
		"form":     {"complete", "completed", "incomplete", "foster"},
		"children": {"1", "2", "3", "more"},
		"housing":  {"convenient", "less_conv", "critical"},
		"finance":  {"convenient", "inconv"},
		"social":   {"nonprob", "slightly_prob", "problematic"},
		"health":   {"recommended", "priority", "not_recom"},
	}
	tax := nurseryTaxonomies(t)
	for _, q := range nurseryQID {
		tx, dom := tax[q], domains[q]
		want := 2
		if len(dom) >= 3 && q != "form" {
			want = 3
		}
		if tx.MaxLevel()+1 != want || tx.NumLeaves() != len(dom) {
			t.Errorf("%s: %d levels, %d values; want %d levels, %d values", q, tx.MaxLevel()+1, tx.NumLeaves(), want, len(dom))
		}
		last := ""
		var seen []string
		for _, v := range dom {
			g, err := tx.Generalise(v, 1)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if g != last && slices.Contains(seen, g) {
				t.Errorf("%s: group %s holds values that are not adjacent", q, g)
			}
			if r, _ := tx.Generalise(v, tx.MaxLevel()); r != "*" {
				t.Errorf("%s: %s's root is %s", q, v, r)
			}
			last, seen = g, append(seen, g)
		}
	}
}
