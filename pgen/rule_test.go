package pgen_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/pgen"
)

// TestConjunctiveRule: on the fixture whose class is yes exactly when
// x > 0.5 and cat is a (and), with a tenth of the training labels
// flipped, the rule keeps antecedents on cat and x only and classifies
// 1,000 clean held-out rows at least 95 % right; one seed learns one rule.
func TestConjunctiveRule(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 0))
	d := and(rng, 600)
	for i := range d.Class {
		if rng.IntN(10) == 0 {
			d.Class[i] = 1 - d.Class[i]
		}
	}
	r := pgen.LearnRule(d, rand.New(rand.NewPCG(1, 0)))
	test := and(rand.New(rand.NewPCG(2, 0)), 1000)
	acc := float64(pgen.CorrectRule(r, test)) / float64(test.Rows())
	t.Logf("rule %+v covered %v default %v, held-out %.3f", r.Antecedents, r.Covered, r.Default, acc)
	for _, a := range r.Antecedents {
		if a.Attr == "noise" {
			t.Errorf("an antecedent on the noise attribute: %+v", a)
		}
	}
	if acc < 0.95 {
		t.Errorf("held-out accuracy %.3f, want at least 0.95", acc)
	}
	if again := pgen.LearnRule(d, rand.New(rand.NewPCG(1, 0))); !reflect.DeepEqual(again, r) {
		t.Errorf("one seed, two rules: %+v and %+v", r, again)
	}
}

// checkRule checks a result's conjunctive rule: it is GlobalRule over the
// result's published trees and joint seed (what every member can redo
// from the log, its folds drawn from the joint seed), and on the held-out
// sample the median of five fixed draws of the pseudo-rows is within 10
// points of a rule learnt on the union of the rows (the paper's BASIS).
func checkRule(t *testing.T, res map[string]any, spec *job.Spec) {
	t.Helper()
	s, seed, trees, union := fromResult(t, res, spec)
	want := pgen.GlobalRule(trees, s, seed)
	sameJSON(t, "conjunctive rule", res["conjunctive_rule"], want)
	test := readData(t, filepath.Join(spec.Dir, "data", "test.csv"), s)
	acc := func(r *pgen.Rule) float64 { return float64(pgen.CorrectRule(r, test)) / float64(test.Rows()) }
	global := medianOf(5, func(seed []byte) float64 { return acc(pgen.GlobalRule(trees, s, seed)) })
	central := acc(pgen.LearnRule(concat(union), rand.New(rand.NewPCG(1, 0))))
	t.Logf("conjunctive rule on the held-out sample: the log's draw %.3f (%+v), median of five fixed draws %.3f, union %.3f",
		acc(want), want.Antecedents, global, central)
	if global < central-0.10 {
		t.Errorf("the conjunctive rule from the pseudo-rows %.3f (median of five draws), more than 10 points below the union's %.3f", global, central)
	}
}

// TestJobConjunctiveRule runs the example with params.conjunctive_rule
// over the in-process runtime: the result's rule is GlobalRule over the
// committed trees with the log's joint seed, and classifies the held-out
// sample within 10 points of a rule on the union (checkRule); without the
// param the result has none.
func TestJobConjunctiveRule(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, on := range []bool{true, false} {
		param := "  conjunctive_rule: false"
		if on {
			param = "  conjunctive_rule: true"
		}
		spec := loadSpec(t, exampleWith(t, param))
		rep, err := jobtest.Run(ctx, pgen.Kind{}, spec, options(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		jointSeed(t, rep, spec)
		r, ok := rep.Result["conjunctive_rule"].(*pgen.Rule)
		switch {
		case on && !ok:
			t.Fatalf("result conjunctive_rule %T", rep.Result["conjunctive_rule"])
		case on:
			checkRule(t, rep.Result, spec)
		case rep.Result["conjunctive_rule"] != nil:
			t.Errorf("without the param the result holds a rule: %+v", r)
		}
	}
}
