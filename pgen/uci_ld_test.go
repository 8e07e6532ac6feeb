package pgen_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// ldParties are the numbers of parties of the paper's Figure 7 ("1
// to 10 with increment of 5").
var ldParties = []int{1, 5, 10}

// ldCell accumulates one (c, ℓ) requirement's figures over the folds: LD's
// tree and naive Bayes, its classes, then PPGEN's with ATP checking the
// exact class counts and with the paper's hit/miss check.
type ldCell struct {
	ldTree, ldBayes, ldClasses mean
	levels                     map[string]int
	exact, paper               ppgenCols
}

// ppgenCols are PPGEN's figures per number of parties: the global tree and
// naive Bayes, how many parties could publish and the leaves of their
// trees.
type ppgenCols struct {
	tree, bayes, published [3]mean
	leaves                 [3]mean // per published tree
}

// ld is TestAdultLD on one of the paper's UCI datasets (PGEN_FIGURES=1
// and the file d.env names; docs/pgen.md; a numeric attribute is
// generalised by intervals, and numeric in PPGEN's trees), over the range of requirements of the paper's Figure 7,
// recursive (c, ℓ)-diversity with ℓ from 2 to 5 and c
// from 5 to 20, by ten-fold cross-validation stratified by class
// (cvIterations times). On each fold's nine training folds LD is
// the optimal full-domain generalisation of the attributes under
// hier (anonymize.OptimalFullDomainModel, no suppression)
// whose every class is (c, ℓ)-diverse in the class column, checked apart
// (checkDiverse); a tree and naive Bayes learnt on the generalised rows
// score the tenth fold generalised to the same levels. PPGEN: the nine
// folds dealt at random over 1, 5 or 10 parties, each party's tree
// ATP-pruned to (c, ℓ)-diversity (tree.Requirement{K: 1, C: c, L: ℓ}); a
// party whose whole table fails the requirement publishes no tree (ATP's
// empty tree), and the global tree and naive Bayes are learnt from the
// pseudo-rows of the trees published, none when no party publishes.
// Every figure is the mean over the folds that produced data.
//
// Every tree (each party's, the global one, LD's) is C4.5's multiway tree,
// as the paper's Java experiments grew them, and ATP merges a failing
// branch with siblings (tree.PruneTo); PGEN_BINARY=1 grows binary trees
// instead, the figures docs/pgen.md gave before the multiway grower.
func ld(t *testing.T, d *uciSet, hier map[string]string) {
	recs := d.records(t)
	s := d.schema()
	tax := taxonomies(t, d, hier)
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true, Multiway: os.Getenv("PGEN_BINARY") == ""}
	type req struct {
		l int
		c float64
	}
	var reqs []req
	for l := 2; l <= 5; l++ {
		for _, c := range []float64{5, 10, 15, 20} {
			reqs = append(reqs, req{l, c})
		}
	}
	cells := make([]ldCell, len(reqs))
	spent := make([]time.Duration, len(reqs))
	folds := 0
	var basis mean // the tree on the nine folds, grown as every tree here
	for it := range cvIterations {
		fs := d.folds(recs, it)
		for f := range fs {
			folds++
			trainRecs, testRecs := d.split(recs, fs, f)
			test := recordsData(t, d.names, testRecs, s)
			ds, err := anonymize.Encode(recordTableOf(d.name, d.names, trainRecs), d.attrs(), tax)
			if err != nil {
				t.Fatal(err)
			}
			seed := fmt.Appendf(nil, "figures/%d/%d", it, f)
			union := tree.Grow(recordsData(t, d.names, trainRecs, s), gp, "0", "t")
			if folds == 1 {
				logRoot(t, union)
			}
			basis.add(100 * float64(tree.Correct(union, test)) / float64(test.Rows()))
			grown := growParties(t, d.names, s, gp, trainRecs)
			for ri, r := range reqs {
				start := time.Now()
				ldFold(t, d, &cells[ri], r.c, r.l, gp, ds, tax, trainRecs, testRecs)
				ppgenFold(t, &cells[ri].exact, tree.Requirement{K: 1, C: r.c, L: r.l}, s, gp, seed, grown, test)
				ppgenFold(t, &cells[ri].paper, tree.Requirement{K: 1, C: r.c, L: r.l, HitMiss: true}, s, gp, seed, grown, test)
				spent[ri] += time.Since(start)
			}
		}
	}
	t.Logf("BASIS: tree %v %% (%.2f–%.2f over the folds), multiway %v", &basis, basis.lo, basis.hi, gp.Multiway)
	for ri, r := range reqs {
		c := &cells[ri]
		t.Logf("| %d | %g | %s | %s | %s | %s | %.1f |", r.l, r.c, c.levelsString(), foldMean(&c.ldClasses, folds), foldMean(&c.ldTree, folds), foldMean(&c.ldBayes, folds), spent[ri].Seconds())
	}
	for _, v := range []struct {
		name string
		cols func(*ldCell) *ppgenCols
	}{{"exact counts", func(c *ldCell) *ppgenCols { return &c.exact }}, {"hit/miss", func(c *ldCell) *ppgenCols { return &c.paper }}} {
		for ri, r := range reqs {
			pc := v.cols(&cells[ri])
			line := fmt.Sprintf("| %d | %g | %s |", r.l, r.c, v.name)
			for p := range ldParties {
				line += fmt.Sprintf(" %s | %s |", foldMean(&pc.tree[p], folds), foldMean(&pc.bayes[p], folds))
			}
			var pub, leaves []string
			for p := range ldParties {
				pub = append(pub, pc.published[p].String())
				leaves = append(leaves, pc.leaves[p].String())
			}
			t.Logf("%s %s | %s |", line, strings.Join(pub, " / "), strings.Join(leaves, " / "))
		}
	}
}

// growParties grows, for each number of parties, each party's tree on
// the nine training folds dealt at random (unpruned by ATP).
func growParties(t *testing.T, names []string, s *pgen.Schema, gp tree.GrowParams, trainRecs [][]string) [][]*tree.Tree {
	out := make([][]*tree.Tree, len(ldParties))
	for pi, n := range ldParties {
		for p, part := range deal(trainRecs, n) {
			out[pi] = append(out[pi], tree.Grow(recordsData(t, names, part, s), gp, fmt.Sprint(p), "t"))
		}
	}
	return out
}

// ldFold runs LD at (c, l) on one fold's training records and scores its
// models on the fold's test records.
func ldFold(t *testing.T, d *uciSet, cell *ldCell, c float64, l int, gp tree.GrowParams, ds *anonymize.Dataset, tax map[string]*anonymize.Taxonomy, trainRecs, testRecs [][]string) {
	t.Helper()
	sens, err := anonymize.SensitiveModel{RecursiveC: c, RecursiveL: l}.Code(columnOf(d.names, trainRecs, d.class()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := anonymize.OptimalFullDomainModel(ds, []anonymize.Requirement{{QID: d.attrs(), K: 1}}, sens)
	switch {
	case errors.Is(err, anonymize.ErrRequirement): // no generalisation is (c, l)-diverse: LD publishes nothing
		return
	case err != nil:
		t.Fatal(err)
	}
	lay := layout{names: d.names, qid: d.attrs(), class: d.class()}
	train, ldTest := generalised(t, lay, trainRecs, res.Levels, tax), generalised(t, lay, testRecs, res.Levels, tax)
	checkDiverse(t, train, c, l, res.Classes)
	pct := func(n int) float64 { return 100 * float64(n) / float64(ldTest.Rows()) }
	cell.ldTree.add(pct(tree.Correct(tree.Grow(train, gp, "", ""), ldTest)))
	cell.ldBayes.add(pct(pgen.CorrectBayes(pgen.LearnBayes(train), ldTest)))
	cell.ldClasses.add(float64(res.Classes))
	if cell.levels == nil {
		cell.levels = map[string]int{}
	}
	cell.levels[fmt.Sprint(res.Levels)]++
}

// ppgenFold runs PPGEN at r on one fold for each number of parties, on
// copies of the parties' grown trees; with r.HitMiss (the paper's check)
// each published tree gives its paths' hit and miss alone
// (tree.SpreadMisses).
func ppgenFold(t *testing.T, cell *ppgenCols, r tree.Requirement, s *pgen.Schema, gp tree.GrowParams, seed []byte, grown [][]*tree.Tree, test *tree.Data) {
	t.Helper()
	pct := func(n int) float64 { return 100 * float64(n) / float64(test.Rows()) }
	for pi := range ldParties {
		var trees []*tree.Tree
		for _, g := range grown[pi] {
			tr := cloneTree(g)
			switch _, err := tr.PruneTo(r); {
			case errors.Is(err, tree.ErrAnonymity): // the party's rows as a whole fail r: no tree
				continue
			case err != nil:
				t.Fatal(err)
			}
			if r.HitMiss {
				tr.SpreadMisses()
			}
			trees = append(trees, tr)
		}
		cell.published[pi].add(float64(len(trees)))
		if len(trees) == 0 {
			continue
		}
		leaves := 0
		for _, tr := range trees {
			_, l := tr.Size()
			leaves += l
		}
		cell.leaves[pi].add(float64(leaves) / float64(len(trees)))
		pseudo := pgen.Generate(trees, s, job.Rand(seed, "pgen/pseudo-data"))
		grow := gp
		grow.NoSplit = pgen.Other
		cell.tree[pi].add(pct(tree.Correct(tree.Grow(pseudo, grow, "", ""), test)))
		cell.bayes[pi].add(pct(pgen.CorrectBayes(pgen.LearnBayes(pseudo), test)))
	}
}

// cloneTree is a deep copy of t, which PruneTo and SpreadMisses change.
func cloneTree(t *tree.Tree) *tree.Tree {
	var clone func(*tree.Node) *tree.Node
	clone = func(n *tree.Node) *tree.Node {
		c := &tree.Node{Split: n.Split, Counts: slices.Clone(n.Counts)}
		if n.Left != nil {
			c.Left, c.Right = clone(n.Left), clone(n.Right)
		}
		for _, b := range n.Branches {
			c.Branches = append(c.Branches, tree.Branch{Values: b.Values, Child: clone(b.Child)})
		}
		return c
	}
	return &tree.Tree{Labels: t.Labels, Root: clone(t.Root)}
}

// logRoot logs the split at the root of one party's unpruned tree and
// its children's class counts, which decide what ATP can keep.
func logRoot(t *testing.T, tr *tree.Tree) {
	n, l := tr.Size()
	if tr.Root.IsLeaf() {
		t.Logf("one party's tree (first fold): a single leaf")
		return
	}
	var kids []string
	for i, c := range tr.Root.Children() {
		v := fmt.Sprint(c.Counts)
		if len(tr.Root.Branches) > 0 {
			v = fmt.Sprintf("%v %v", tr.Root.Branches[i].Values, c.Counts)
		}
		kids = append(kids, v)
	}
	t.Logf("one party's tree (first fold): %d nodes, %d leaves; the root splits on %s, its children's class counts (%v) %v",
		n, l, tr.Root.Split, tr.Labels, kids)
}

// foldMean is m's mean, with how many of the folds it is over when some
// folds gave nothing.
func foldMean(m *mean, folds int) string {
	if m.n == 0 || m.n == folds {
		return m.String()
	}
	return fmt.Sprintf("%v (%d of %d folds)", m, m.n, folds)
}

// levelsString lists the LD levels the folds chose, with how many folds
// chose each when they differ.
func (c *ldCell) levelsString() string {
	if len(c.levels) == 0 {
		return "none"
	}
	out := ""
	for _, lv := range slices.Sorted(maps.Keys(c.levels)) {
		if out != "" {
			out += ", "
		}
		out += lv
		if len(c.levels) > 1 {
			out += fmt.Sprintf(" ×%d", c.levels[lv])
		}
	}
	return out
}

// taxonomies reads hier, the generalisation hierarchies LD uses on d's
// attributes (ARX's format: one line per value, from the value to the
// root).
func taxonomies(t testing.TB, d *uciSet, hier map[string]string) map[string]*anonymize.Taxonomy {
	tax := map[string]*anonymize.Taxonomy{}
	for _, q := range d.attrs() {
		_, numeric := d.ranges[q]
		var err error
		if tax[q], err = anonymize.ReadARX(strings.NewReader(hier[q]), q, numeric); err != nil {
			t.Fatal(err)
		}
	}
	return tax
}

// checkHierarchies checks the hierarchies LD uses on d (no data needed):
// each is a valid ARX hierarchy over exactly its attribute's values in
// d's .names file (a numeric one over its range, checkIntervals), with
// the levels docs/pgen.md gives: an attribute of
// two values or a nominal one (flat) goes straight to *, an ordinal one of
// three or more to a group of values adjacent in the .names file's order,
// then to *.
func checkHierarchies(t *testing.T, d *uciSet, hier map[string]string, flat ...string) {
	tax := taxonomies(t, d, hier)
	for _, q := range d.attrs() {
		if r, ok := d.ranges[q]; ok {
			checkIntervals(t, q, tax[q], r)
			continue
		}
		tx, dom := tax[q], d.domains[q]
		want := 2
		if len(dom) >= 3 && !slices.Contains(flat, q) {
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

// checkIntervals checks a numeric attribute's hierarchy: it has a leaf for
// every integer of r and no other, each of a value's ancestors below the
// root is an interval lo-hi holding it, and its root is *.
func checkIntervals(t *testing.T, q string, tx *anonymize.Taxonomy, r [2]int) {
	t.Helper()
	if tx.NumLeaves() != r[1]-r[0]+1 {
		t.Errorf("%s: %d values, want %d", q, tx.NumLeaves(), r[1]-r[0]+1)
	}
	for v := r[0]; v <= r[1]; v++ {
		for level := 1; level <= tx.MaxLevel(); level++ {
			g, err := tx.Generalise(fmt.Sprint(v), level)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			var lo, hi int
			_, err = fmt.Sscanf(g, "%d-%d", &lo, &hi)
			switch {
			case level == tx.MaxLevel() && g != "*":
				t.Errorf("%s: %d's root is %s", q, v, g)
			case level < tx.MaxLevel() && (err != nil || v < lo || v > hi):
				t.Errorf("%s: %d's level %d is %s, not an interval holding it", q, v, level, g)
			}
		}
	}
}
