package pgen_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// mean accumulates accuracies (%) over the folds.
type mean struct {
	sum, lo, hi float64
	n           int
}

func (m *mean) add(x float64) {
	if m.n == 0 || x < m.lo {
		m.lo = x
	}
	if m.n == 0 || x > m.hi {
		m.hi = x
	}
	m.sum += x
	m.n++
}

func (m *mean) String() string {
	if m.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%.2f", m.sum/float64(m.n))
}

// baselines is TestAdultBaselines on one of the paper's UCI datasets
// (PGEN_FIGURES=1 and the file d.env names; docs/pgen.md): the paper's
// protocol, ten-fold cross-validation stratified by class, cvIterations
// times over; each fold's nine training folds dealt at random over n
// parties, each party's tree grown and ATP-pruned to release_k as the
// job does, pseudo-rows by Generate (PGEN) or BaseGen (BASEGEN), without
// and with the dataset's domains; on them a decision tree, naive Bayes
// and a conjunctive rule, scored on the tenth fold; beside them the
// models learnt on the nine folds (BASIS). Every figure is the mean over
// the folds.
func baselines(t *testing.T, d *uciSet) {
	recs := d.records(t)
	s := d.schema()
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true}
	type cell struct{ n, k, m int }
	var basis [3]mean
	var majority mean
	cells := map[cell]*[6]mean{}
	var spent [4][2][2]time.Duration
	for it := range cvIterations {
		folds := d.folds(recs, it)
		for f := range folds {
			trainRecs, testRecs := d.split(recs, folds, f)
			all, test := recordsData(t, d.names, trainRecs, s), recordsData(t, d.names, testRecs, s)
			sd := dataDomains(s, all)
			seed := fmt.Appendf(nil, "figures/%d/%d", it, f)
			score := func(d *tree.Data) [3]float64 {
				pct := func(n int) float64 { return 100 * float64(n) / float64(test.Rows()) }
				grow := gp
				grow.NoSplit = pgen.Other
				return [3]float64{pct(tree.Correct(tree.Grow(d, grow, "", ""), test)), pct(pgen.CorrectBayes(pgen.LearnBayes(d), test)),
					pct(pgen.CorrectRule(pgen.LearnRule(d, job.Rand(seed, "pgen/conjunctive-rule")), test))}
			}
			for i, x := range score(all) {
				basis[i].add(x)
			}
			majority.add(majorityPct(all, test))
			for ni, n := range []int{1, 3, 5, 10} {
				parts := deal(trainRecs, n)
				for ki, k := range []uint64{1, 10} {
					var trees []*tree.Tree
					for p := range n {
						tr := tree.Grow(recordsData(t, d.names, parts[p], s), gp, fmt.Sprint(p), "t")
						if _, err := tr.ReleasePrune(k); err != nil {
							t.Fatal(err)
						}
						trees = append(trees, tr)
					}
					for mi, gen := range []func(*pgen.Schema) *tree.Data{
						func(s *pgen.Schema) *tree.Data { return pgen.Generate(trees, s, job.Rand(seed, "pgen/pseudo-data")) },
						func(s *pgen.Schema) *tree.Data { return pgen.BaseGen(trees, s, job.Rand(seed, "pgen/basegen")) },
					} {
						start := time.Now()
						c := cells[cell{ni, ki, mi}]
						if c == nil {
							c = new([6]mean)
							cells[cell{ni, ki, mi}] = c
						}
						plain, withDom := score(gen(s)), score(gen(sd))
						for i := range 3 {
							c[i].add(plain[i])
							c[3+i].add(withDom[i])
						}
						spent[ni][ki][mi] += time.Since(start)
					}
				}
			}
		}
	}
	t.Logf("%d folds; BASIS: tree %v%%, naive Bayes %v%%, conjunctive rule %v%% (folds %.2f–%.2f, %.2f–%.2f, %.2f–%.2f); majority class %v%%", basis[0].n,
		&basis[0], &basis[1], &basis[2], basis[0].lo, basis[0].hi, basis[1].lo, basis[1].hi, basis[2].lo, basis[2].hi, &majority)
	for ni, n := range []int{1, 3, 5, 10} {
		for ki, k := range []uint64{1, 10} {
			for mi, name := range []string{"PGEN", "BASEGEN"} {
				c := cells[cell{ni, ki, mi}]
				t.Logf("| %d | %d | %s | %v | %v | %v | %v | %v | %v | %.2f–%.2f | %.1f |", n, k, name, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5],
					c[0].lo, c[0].hi, spent[ni][ki][mi].Seconds())
			}
		}
	}
}

// majorityPct is the accuracy (%) on test of the training rows' majority
// class.
func majorityPct(train, test *tree.Data) float64 {
	counts := make([]int, len(train.Labels))
	for _, c := range train.Class {
		counts[c]++
	}
	best := 0
	for c := range counts {
		if counts[c] > counts[best] {
			best = c
		}
	}
	right := 0
	for _, c := range test.Class {
		if test.Labels[c] == train.Labels[best] {
			right++
		}
	}
	return 100 * float64(right) / float64(test.Rows())
}
