package pgen_test

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/internal/adultdata"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// ldQID are the quasi-identifiers of ARX's Adult configuration (adult/arx
// beside adult.data, with ARX's generalisation hierarchies); its ninth
// column, the salary class, is Adult's class, the sensitive attribute.
var ldQID = []string{"sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"}

// TestAdultLD compares PPGEN (ATP, then PGEN) with the paper's LD
// baseline, ℓ-diversity data publishing (Machanavajjhala, Kifer, Gehrke,
// Venkitasubramaniam, "ℓ-Diversity: Privacy Beyond k-Anonymity", ICDE
// 2006), on Adult under recursive (c, 2)-diversity (PGEN_FIGURES=1;
// docs/pgen.md, the paper's Figure 7 is on Nursery): LD is the optimal
// full-domain generalisation of the eight quasi-identifiers
// (anonymize.OptimalFullDomainModel, no suppression) whose every class is
// (c, 2)-diverse in the class column; a tree and naive Bayes are learnt on
// the generalised rows and score adult.test's rows generalised to the
// same levels. PPGEN uses the same eight attributes: each party's tree
// ATP-pruned to (c, 2)-diversity, the global models learnt from PGEN's
// pseudo-rows. BASIS is the union's on the eight attributes. Each LD
// table is checked: its classes are (c, 2)-diverse (checkDiverse).
// PGEN_MULTIWAY=1 grows every tree as C4.5 does (multiway nominal splits,
// tree.GrowParams.Multiway) and ATP merges failing branches with siblings.
func TestAdultLD(t *testing.T) {
	if os.Getenv("PGEN_FIGURES") == "" {
		t.Skip("set PGEN_FIGURES=1")
	}
	root := adultRoot()
	if root == "" {
		t.Skip("no UCI Adult data (set COHORT_ADULT_DIR)")
	}
	s := &pgen.Schema{Numeric: map[string]bool{}, ClassColumn: "income"}
	for _, q := range ldQID {
		s.Numeric[q] = q == "age"
	}
	recs, err := adultdata.Read(root, "adult.data")
	if err != nil {
		t.Fatal(err)
	}
	testRecs, err := adultdata.Read(root, "adult.test")
	if err != nil {
		t.Fatal(err)
	}
	all, test := fromRecords(t, recs, s), fromRecords(t, testRecs, s)
	tax := map[string]*anonymize.Taxonomy{}
	for _, q := range ldQID {
		if tax[q], err = anonymize.LoadARXFile(filepath.Join(root, "arx", "adult_hierarchy_"+q+".csv"), q, q == "age"); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := anonymize.Encode(recordTable(recs), ldQID, tax)
	if err != nil {
		t.Fatal(err)
	}
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true, Multiway: os.Getenv("PGEN_MULTIWAY") != ""}
	pct := func(n int) float64 { return 100 * float64(n) / float64(test.Rows()) }
	t.Logf("BASIS (eight attributes): tree %.2f%%, naive Bayes %.2f%%", pct(tree.Correct(tree.Grow(all, gp, "", ""), test)), pct(pgen.CorrectBayes(pgen.LearnBayes(all), test)))
	for _, c := range []float64{4, 5, 10, 15, 20, 50, 100} {
		start := time.Now()
		line := fmt.Sprintf("| %g |", c)
		sens, err := anonymize.SensitiveModel{RecursiveC: c, RecursiveL: 2}.Code(column(recs, "income"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := anonymize.OptimalFullDomainModel(ds, []anonymize.Requirement{{QID: ldQID, K: 1}}, sens)
		if err != nil {
			line += " none | | | |"
		} else {
			train, ldTest := generalised(t, adultLayout, recs, res.Levels, tax), generalised(t, adultLayout, testRecs, res.Levels, tax)
			checkDiverse(t, train, c, 2, res.Classes)
			line += fmt.Sprintf(" %v | %d | %.2f | %.2f |", res.Levels, res.Classes,
				pct(tree.Correct(tree.Grow(train, gp, "", ""), ldTest)), pct(pgen.CorrectBayes(pgen.LearnBayes(train), ldTest)))
		}
		for _, n := range []int{1, 5, 10} {
			parts := make([][][]string, n)
			for i, r := range recs {
				parts[i%n] = append(parts[i%n], r)
			}
			var trees []*tree.Tree
			for p := range n {
				tr := tree.Grow(fromRecords(t, parts[p], s), gp, fmt.Sprint(p), "t")
				if _, err := tr.PruneTo(tree.Requirement{K: 1, C: c, L: 2}); err != nil {
					t.Fatal(err)
				}
				trees = append(trees, tr)
			}
			global, _ := pgen.Global(trees, s, gp, []byte("figures"))
			line += fmt.Sprintf(" %.2f | %.2f |", pct(tree.Correct(global, test)), pct(pgen.CorrectBayes(pgen.GlobalBayes(trees, s, []byte("figures")), test)))
		}
		t.Logf("%s %.1f |", line, time.Since(start).Seconds())
	}
}

// checkDiverse fails unless d's classes (rows alike on every attribute)
// number classes and each is recursive (c, l)-diverse in the class: its
// class counts, sorted in decreasing order, d1 < c·(d_l + … + d_m).
// Written apart from tree.Requirement and anonymize's checks.
func checkDiverse(t *testing.T, d *tree.Data, c float64, l int, classes int) {
	t.Helper()
	counts := map[string][]uint64{}
	for i := range d.Rows() {
		key := ""
		for _, a := range d.Attrs {
			key += a.Values[a.Code[i]] + "\x00"
		}
		if counts[key] == nil {
			counts[key] = make([]uint64, len(d.Labels))
		}
		counts[key][d.Class[i]]++
	}
	for _, n := range counts {
		sorted := slices.Clone(n)
		slices.SortFunc(sorted, func(a, b uint64) int { return cmp.Compare(b, a) })
		var tail uint64
		for _, x := range sorted[min(l-1, len(sorted)):] {
			tail += x
		}
		if float64(sorted[0]) >= c*float64(tail) {
			t.Fatalf("LD at (c %g, l %d) published a class of counts %v", c, l, n)
		}
	}
	if len(counts) != classes {
		t.Fatalf("LD at (c %g, l %d): %d classes, the search reported %d", c, l, len(counts), classes)
	}
}

// recordTable is Adult records as a table of string columns.
func recordTable(recs [][]string) *table.Table {
	return recordTableOf("adult", adultdata.Names, recs)
}

// recordTableOf is records whose columns are names as a table of string
// columns.
func recordTableOf(name string, names []string, recs [][]string) *table.Table {
	tb := &table.Table{Name: name}
	for _, n := range names {
		tb.Columns = append(tb.Columns, &table.Column{Name: n, Kind: table.Categorical, Str: columnOf(names, recs, n)})
	}
	return tb
}

// column is one column of Adult records.
func column(recs [][]string, name string) []string { return columnOf(adultdata.Names, recs, name) }

// columnOf is one column of records whose columns are names.
func columnOf(names []string, recs [][]string, name string) []string {
	j := slices.Index(names, name)
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r[j]
	}
	return out
}

// layout names the columns of records, the quasi-identifiers LD
// generalises and the class.
type layout struct {
	names, qid []string
	class      string
}

// adultLayout is Adult's records with ARX's quasi-identifiers.
var adultLayout = layout{names: adultdata.Names, qid: ldQID, class: "income"}

// generalised is the records' quasi-identifiers generalised to levels
// (one per quasi-identifier of lay), every one categorical, and their
// class.
func generalised(t *testing.T, lay layout, recs [][]string, levels []int, tax map[string]*anonymize.Taxonomy) *tree.Data {
	d := &tree.Data{}
	d.Labels, d.Class = tree.Encode(columnOf(lay.names, recs, lay.class))
	for a, q := range lay.qid {
		col := columnOf(lay.names, recs, q)
		for i, v := range col {
			g, err := tax[q].Generalise(v, levels[a])
			switch {
			case errors.Is(err, anonymize.ErrNotCovered): // a test value the hierarchy lacks: the root
				g = "*"
			case err != nil:
				t.Fatal(err)
			}
			col[i] = g
		}
		at := &tree.Attr{Name: q}
		at.Values, at.Code = tree.Encode(col)
		d.Attrs = append(d.Attrs, at)
	}
	return d
}
