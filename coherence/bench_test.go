package coherence

import (
	"context"
	"errors"
	"fmt"
	"github.com/cohortdm/cohort/internal/shareddata"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
)

// The figures of docs/coherence.md: the settings of Xu, ch. 4, §4.5, on the
// FIMI files Retail and Connect (COHORT_FIMI_DIR, by default
// ../shared/data/fimi from the repository root; the benchmarks skip when
// it is absent). Run one
// iteration each (-benchtime 1x): every sub-benchmark averages over the
// seeds the thesis's five random selections of public items stand for,
// verifies every publication with the checker and reports:
//
//	loss%     loss of items;  loss1%  the part of it the size-1 moles cause
//	lossN%    loss of nuggets (when nuggets are set)
//	supp      items suppressed;  minmoles  minimal moles (size 2 and up)
//	mine-s    time to the greedy loop (FindMole, and the borders);  wall-s  whole run
//	cpu-s     CPU time of the run;  check-s  the checker's time
//	left      (k-Anonymizer) minimal moles left, breaches of h: the
//	          k-Anonymizer's publication is checked for k-anonymity instead
//	classes   (k-Anonymizer) its equivalence classes

func fimiDir() string {
	d, err := shareddata.Dir(".", "fimi", "COHORT_FIMI_DIR")
	if err != nil {
		return "" // the benchmarks skip: no file under it
	}
	return d
}

var fimiCache sync.Map

// fimi loads a FIMI file with the thesis's private items.
func fimi(tb testing.TB, name string) *Labelled {
	tb.Helper()
	if l, ok := fimiCache.Load(name); ok {
		return l.(*Labelled)
	}
	f, err := os.Open(filepath.Join(fimiDir(), name+".dat"))
	if err != nil {
		tb.Skipf("FIMI data absent (%v): set COHORT_FIMI_DIR", err)
	}
	defer f.Close()
	db, err := ReadFIMI(f)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := ThesisPrivates(db, FIMI)
	if err != nil {
		tb.Fatal(err)
	}
	fimiCache.Store(name, l)
	return l
}

// withPublic makes a fraction delta of the original items public (seeded)
// and keeps the rest; the thesis's copies stay private.
func withPublic(tb testing.TB, data *Labelled, delta float64, seed uint64) *Labelled {
	tb.Helper()
	var orig []string
	for v, r := range data.Roles {
		if r != Private {
			orig = append(orig, data.Items[v])
		}
	}
	var private []string
	for v, r := range data.Roles {
		if r == Private {
			private = append(private, data.Items[v])
		}
	}
	l, err := Label(data.Database, RoleSpec{Private: private, PublicFraction: delta, Seed: seed}, FIMI)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// outcome is one run's figures; add and avg fold them over seeds.
type outcome struct {
	lossItems, lossSize1, lossNuggets, suppressed, minimal float64
	mine, wall, cpu, check                                 float64
	left, classes                                          float64
}

func (o *outcome) add(p outcome) {
	o.lossItems += p.lossItems
	o.lossSize1 += p.lossSize1
	o.lossNuggets += p.lossNuggets
	o.suppressed += p.suppressed
	o.minimal += p.minimal
	o.mine += p.mine
	o.wall += p.wall
	o.cpu += p.cpu
	o.check += p.check
	o.left += p.left
	o.classes += p.classes
}

func (o outcome) report(b *testing.B, n int, nuggets bool) {
	f := 1 / float64(n)
	b.ReportMetric(100*o.lossItems*f, "loss%")
	b.ReportMetric(100*o.lossSize1*f, "loss1%")
	if nuggets {
		b.ReportMetric(100*o.lossNuggets*f, "lossN%")
	}
	b.ReportMetric(o.suppressed*f, "supp")
	b.ReportMetric(o.minimal*f, "minmoles")
	b.ReportMetric(o.mine*f, "mine-s")
	b.ReportMetric(o.wall*f, "wall-s")
	b.ReportMetric(o.cpu*f, "cpu-s")
	b.ReportMetric(o.check*f, "check-s")
	if o.classes > 0 {
		b.ReportMetric(o.left*f, "left")
		b.ReportMetric(o.classes*f, "classes")
	}
	b.ReportMetric(0, "ns/op")
}

// measure runs alg (tree, border, rmall or kanon) once, verifies the publication
// and, with nug, counts the nuggets lost. A run ctx ends is reported as
// unfinished (false).
func measure(ctx context.Context, b *testing.B, db *Labelled, alg string, prm Params, nug *Nuggets) (outcome, bool) {
	b.Helper()
	start, cpu := time.Now(), cputime.Used(b)
	var res *Result
	var br *BorderResult
	var ka *KAnonResult
	var err error
	switch alg {
	case "kanon":
		if ka, err = KAnonymizer(ctx, db, prm.K); err == nil {
			res = &ka.Result
		}
	case "tree":
		res, err = TreeCohesion(ctx, db, prm)
	case "rmall":
		res, err = RmAll(ctx, db, prm)
	case "border":
		if br, err = BorderCohesion(ctx, db, prm, *nug); err == nil {
			res = &br.Result
		}
	}
	if ctx.Err() != nil {
		return outcome{}, false
	}
	if err != nil {
		b.Fatal(err)
	}
	o := outcome{wall: time.Since(start).Seconds(), cpu: (cputime.Used(b) - cpu).Seconds(), mine: res.MineTime.Seconds(),
		suppressed: float64(len(res.Suppressed)), minimal: float64(res.MinimalMoles)}
	pub := res.Publish(db)
	o.lossItems = LossOfItems(db.Database, pub)
	o.lossSize1 = LossOfItems(db.Database, db.Without(res.Suppressed[:res.Size1]))
	check := time.Now()
	if ka != nil {
		if err := checkKAnon(ctx, db, pub, prm, ka, &o); err != nil {
			b.Fatal(err)
		}
	} else if err := Check(ctx, db, pub, prm); err != nil {
		if ctx.Err() != nil {
			return outcome{}, false
		}
		b.Fatalf("%s: the publication fails the checker: %v", alg, err)
	}
	o.check = time.Since(check).Seconds()
	if nug != nil {
		before, after := CountOf(0), CountOf(0)
		if br != nil {
			before, after = br.NuggetsBefore, br.NuggetsAfter
		} else {
			if before, err = CountNuggets(ctx, db, nil, *nug); err == nil {
				after, err = CountNuggets(ctx, db, res.Suppressed, *nug)
			}
			if ctx.Err() != nil {
				return outcome{}, false
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		o.lossNuggets = LossOfNuggets(before, after)
	}
	return o, true
}

// checkKAnon checks a k-Anonymizer publication for k-anonymity and for
// identity moles (none may be left, whatever p), and counts the moles it
// leaves.
func checkKAnon(ctx context.Context, db *Labelled, pub *Database, prm Params, ka *KAnonResult, o *outcome) error {
	if err := CheckKAnonymous(db, pub, prm.K); err != nil {
		return err
	}
	if err := Check(ctx, db, pub, Params{H: 1, K: prm.K}); err != nil {
		return err
	}
	left, err := MolesLeft(ctx, db, ka.Suppressed, prm)
	o.left, o.classes = float64(left), float64(ka.Classes)
	return err
}

// must is measure without a time limit.
func must(b *testing.B, db *Labelled, alg string, prm Params, nug *Nuggets) outcome {
	o, _ := measure(context.Background(), b, db, alg, prm, nug)
	return o
}

// seeds are the random selections of public items averaged over (the
// thesis averages five).
var seeds = []uint64{1, 2, 3, 4, 5}

// setting is one dataset's defaults (§4.5.2): Connect δ = 40 %, k = 100,
// p = 5; Retail δ = 20 %, k = 20, p = 4; h = 50 % (the thesis's 40 % fails
// Theorem 3 with its own private items, see the package doc).
type setting struct {
	data  string
	delta float64
	prm   Params
	sweep []float64
}

var settings = []setting{
	{"connect", 0.4, Params{H: 0.5, K: 100, P: 5}, []float64{0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1}},
	{"retail", 0.2, Params{H: 0.5, K: 20, P: 4}, []float64{0.2, 0.4, 0.6, 0.8, 1}},
}

// Loss of items and time against δ, Tree-Cohesion and RmAll (Figures 20,
// 22 and 24 of the thesis).
func BenchmarkTreeCohesion(b *testing.B) {
	for _, s := range settings {
		for _, delta := range s.sweep {
			for _, alg := range []string{"tree", "rmall"} {
				b.Run(fmt.Sprintf("%s/delta=%v/%s", s.data, delta, alg), func(b *testing.B) {
					data := fimi(b, s.data)
					for b.Loop() {
						var sum outcome
						for _, seed := range seeds {
							sum.add(must(b, withPublic(b, data, delta, seed), alg, s.prm, nil))
						}
						sum.report(b, len(seeds), false)
					}
				})
			}
		}
	}
}

// The effect of h at the defaults: h = 1 leaves identity attacks only. The
// k-Anonymizer's publication does not depend on h; the moles it leaves do.
func BenchmarkTreeCohesionH(b *testing.B) {
	for _, s := range settings {
		for _, h := range []float64{0.5, 0.7, 1} {
			for _, alg := range []string{"tree", "rmall", "kanon"} {
				b.Run(fmt.Sprintf("%s/h=%v/%s", s.data, h, alg), func(b *testing.B) {
					data := fimi(b, s.data)
					prm := s.prm
					prm.H = h
					for b.Loop() {
						var sum outcome
						for _, seed := range seeds {
							sum.add(must(b, withPublic(b, data, s.delta, seed), alg, prm, nil))
						}
						sum.report(b, len(seeds), false)
					}
				})
			}
		}
	}
}

// Loss of nuggets against k, Border-Cohesion and RmAll, at the thesis's
// settings of Figures 21 and 23 (h = 100 %, p = ∞) but δ where the
// minimal moles and the mole border can be handled: Connect δ = 30 %,
// k' = 40, 50, 60 %; Retail δ = 20 %, k' = 1, 3, 5 %. One seed.
func BenchmarkBorderCohesion(b *testing.B) {
	cases := []struct {
		data  string
		delta float64
		kNugs []float64
		ks    []int
		seed  uint64
	}{
		{"connect", 0.3, []float64{0.4, 0.5, 0.6}, []int{10, 30, 50}, 1},
		{"retail", 0.2, []float64{0.01, 0.03, 0.05}, []int{10, 30, 50}, 1},
	}
	for _, c := range cases {
		for _, kn := range c.kNugs {
			for _, k := range c.ks {
				for _, alg := range []string{"border", "rmall"} {
					b.Run(fmt.Sprintf("%s/delta=%v/k'=%v/k=%d/%s", c.data, c.delta, kn, k, alg), func(b *testing.B) {
						data := fimi(b, c.data)
						db := withPublic(b, data, c.delta, c.seed)
						nug := Nuggets{K: int(kn*float64(len(db.Trans)) + 0.999999)}
						for b.Loop() {
							must(b, db, alg, Params{H: 1, K: k, P: 0}, &nug).report(b, 1, true)
						}
					})
				}
			}
		}
	}
}

// Loss of nuggets against k at the thesis's own settings of Figures 21
// and 23 (h = 100 %, p = ∞; Connect k' = 40, 50, 60 %, Retail k' = 1, 3,
// 5 %; k = 10, 30, 50; one seed) at δ = 100 % as the thesis, and at the δ
// between BenchmarkBorderCohesion's and 100 %, to find how far
// Border-Cohesion goes. Each run is cut after COHERENCE_BENCH_LIMIT (a Go
// duration, 5m by default) and then reported as unfinished (unfinished-s,
// the limit) rather than measured: select a few points with -bench.
func BenchmarkBorderThesis(b *testing.B) {
	limit := 5 * time.Minute
	if v := os.Getenv("COHERENCE_BENCH_LIMIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("COHERENCE_BENCH_LIMIT: %v", err)
		}
		limit = d
	}
	type point struct {
		data  string
		delta float64
		kNugs []float64
	}
	var points []point
	for _, d := range []float64{0.4, 0.5, 0.7, 1} {
		points = append(points, point{"connect", d, []float64{0.4, 0.5, 0.6}})
	}
	for _, d := range []float64{0.4, 0.6, 1} {
		points = append(points, point{"retail", d, []float64{0.01, 0.03, 0.05}})
	}
	for _, pt := range points {
		for _, kn := range pt.kNugs {
			for _, k := range []int{10, 30, 50} {
				for _, alg := range []string{"border", "rmall"} {
					b.Run(fmt.Sprintf("%s/delta=%v/k'=%v/k=%d/%s", pt.data, pt.delta, kn, k, alg), func(b *testing.B) {
						db := withPublic(b, fimi(b, pt.data), pt.delta, 1)
						nug := Nuggets{K: int(kn*float64(len(db.Trans)) + 0.999999)}
						for b.Loop() {
							ctx, cancel := context.WithTimeout(context.Background(), limit)
							o, done := measure(ctx, b, db, alg, Params{H: 1, K: k, P: 0}, &nug)
							cancel()
							if !done {
								b.ReportMetric(limit.Seconds(), "unfinished-s")
								b.ReportMetric(0, "ns/op")
								continue
							}
							o.report(b, 1, true)
						}
					})
				}
			}
		}
	}
}

// Border-Cohesion at the defaults of Tree-Cohesion (h = 50 %, finite p),
// with Tree-Cohesion and RmAll for comparison: loss of items and of
// nuggets. Five seeds.
func BenchmarkBorderDefaults(b *testing.B) {
	kn := map[string]float64{"connect": 0.4, "retail": 0.01}
	for _, s := range settings {
		for _, alg := range []string{"border", "tree", "rmall"} {
			b.Run(fmt.Sprintf("%s/delta=%v/k'=%v/%s", s.data, s.delta, kn[s.data], alg), func(b *testing.B) {
				data := fimi(b, s.data)
				for b.Loop() {
					var sum outcome
					for _, seed := range seeds {
						db := withPublic(b, data, s.delta, seed)
						nug := Nuggets{K: int(kn[s.data]*float64(len(db.Trans)) + 0.999999)}
						sum.add(must(b, db, alg, s.prm, &nug))
					}
					sum.report(b, len(seeds), true)
				}
			})
		}
	}
}

// The k-Anonymizer at the settings of BenchmarkTreeCohesion (the thesis's
// Figures 20 and 22: loss of items against δ, five selections).
func BenchmarkKAnonymizer(b *testing.B) {
	for _, s := range settings {
		for _, delta := range s.sweep {
			b.Run(fmt.Sprintf("%s/delta=%v/kanon", s.data, delta), func(b *testing.B) {
				data := fimi(b, s.data)
				for b.Loop() {
					var sum outcome
					for _, seed := range seeds {
						sum.add(must(b, withPublic(b, data, delta, seed), "kanon", s.prm, nil))
					}
					sum.report(b, len(seeds), false)
				}
			})
		}
	}
}

// Identity attacks only (h = 1), where the k-Anonymizer's publication is a
// cohesion too (k-anonymity leaves no identity mole), on Retail at the
// defaults k = 20, p = 4 against δ: Tree-Cohesion, RmAll and the
// k-Anonymizer then protect alike and their losses compare.
func BenchmarkIdentityRetail(b *testing.B) {
	for _, delta := range []float64{0.2, 0.4, 0.6, 0.8, 1} {
		for _, alg := range []string{"tree", "rmall", "kanon"} {
			b.Run(fmt.Sprintf("retail/delta=%v/%s", delta, alg), func(b *testing.B) {
				data := fimi(b, "retail")
				for b.Loop() {
					var sum outcome
					for _, seed := range seeds {
						sum.add(must(b, withPublic(b, data, delta, seed), alg, Params{H: 1, K: 20, P: 4}, nil))
					}
					sum.report(b, len(seeds), false)
				}
			})
		}
	}
}

// The k-Anonymizer's loss of nuggets against k (the thesis's Figures 21
// and 23: h = 100 %, p = ∞; Connect k' = 40, 50, 60 %, Retail k' = 1, 3,
// 5 %; k = 10, 30, 50; one selection) at the δ of BenchmarkBorderCohesion
// (Connect 30 %, Retail 20 %) and at the thesis's δ = 100 %.
func BenchmarkKAnonymizerNuggets(b *testing.B) {
	kNugs := map[string][]float64{"connect": {0.4, 0.5, 0.6}, "retail": {0.01, 0.03, 0.05}}
	for _, c := range []struct {
		data  string
		delta float64
	}{{"connect", 0.3}, {"connect", 1}, {"retail", 0.2}, {"retail", 1}} {
		for _, kn := range kNugs[c.data] {
			for _, k := range []int{10, 30, 50} {
				b.Run(fmt.Sprintf("%s/delta=%v/k'=%v/k=%d/kanon", c.data, c.delta, kn, k), func(b *testing.B) {
					db := withPublic(b, fimi(b, c.data), c.delta, 1)
					nug := Nuggets{K: int(kn*float64(len(db.Trans)) + 0.999999)}
					for b.Loop() {
						must(b, db, "kanon", Params{H: 1, K: k, P: 0}, &nug).report(b, 1, true)
					}
				})
			}
		}
	}
}

// The thesis's h = 40 % (§4.5.2) admits no cohesion of its own datasets
// with its own private items (Theorem 3): the most frequent private copy
// is in more than 40 % of the transactions (Connect: item 40's copy,
// 47.4 %; Retail: item 48's, 47.8 %), so the figures use h = 50 %. The
// private items do not depend on δ, so this holds at every δ.
func TestThesisHIneligible(t *testing.T) {
	for _, name := range []string{"connect", "retail"} {
		data := fimi(t, name)
		top := 0
		for v, sup := range data.Supports() {
			if data.Roles[v] == Private {
				top = max(top, sup)
			}
		}
		freq := float64(top) / float64(len(data.Trans))
		if freq <= 0.4 || freq > 0.5 {
			t.Errorf("%s: the most frequent private item is in %.1f %% of the transactions, want in (40 %%, 50 %%]", name, 100*freq)
		}
		db := withPublic(t, data, 0.2, 1)
		if _, err := RmAll(context.Background(), db, Params{H: 0.4, K: 20, P: 4}); !errors.Is(err, ErrBreachEmpty) {
			t.Errorf("%s at h = 40 %%: err = %v, want %v", name, err, ErrBreachEmpty)
		}
		t.Logf("%s: the most frequent private item is in %.2f %% of the transactions", name, 100*freq)
	}
}
