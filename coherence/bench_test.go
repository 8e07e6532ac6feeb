package coherence

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The figures of docs/coherence.md: the settings of Xu, ch. 4, §4.5, on the
// FIMI files Retail and Connect (COHORT_FIMI_DIR, by default
// /work/shared/data/fimi; the benchmarks skip when it is absent). Each
// benchmark runs once per iteration and reports the figures as metrics.

func fimiDir() string {
	if d := os.Getenv("COHORT_FIMI_DIR"); d != "" {
		return d
	}
	return "/work/shared/data/fimi"
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

// withPublic returns data with a fraction delta of the original items
// public (seeded), the rest kept, the thesis's copies private.
func withPublic(tb testing.TB, data *Labelled, delta float64, seed uint64) *Labelled {
	tb.Helper()
	l, err := Label(data.Database, RoleSpec{PublicFraction: delta, Seed: seed}, FIMI)
	if err != nil {
		tb.Fatal(err)
	}
	// Label sees every item as a candidate: put the copies back to private.
	for v, r := range data.Roles {
		if r == Private {
			l.Roles[v] = Private
		}
	}
	return l
}

type figure struct {
	alg        string
	suppressed int
	lossItems  float64
	seconds    float64
	mine       float64
	moles      int
}

func runTree(tb testing.TB, db *Labelled, prm Params, alg string) figure {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	var res *Result
	var err error
	if alg == "rmall" {
		res, err = RmAll(ctx, db, prm)
	} else {
		res, err = TreeCohesion(ctx, db, prm)
	}
	if err != nil {
		tb.Fatal(err)
	}
	pub := res.Publish(db)
	return figure{alg: alg, suppressed: len(res.Suppressed), lossItems: LossOfItems(db.Database, pub),
		seconds: time.Since(start).Seconds(), mine: res.MineTime.Seconds(), moles: res.MinimalMoles}
}

func BenchmarkTreeConnect(b *testing.B) {
	data := fimi(b, "connect")
	for _, delta := range []float64{0.4} {
		db := withPublic(b, data, delta, 1)
		prm := Params{H: 0.5, K: 100, P: 5}
		b.Run(fmt.Sprintf("delta=%v", delta), func(b *testing.B) {
			for b.Loop() {
				f := runTree(b, db, prm, "tree")
				b.ReportMetric(f.lossItems*100, "loss%")
				b.ReportMetric(float64(f.moles), "minmoles")
				b.ReportMetric(f.mine, "mine-s")
			}
		})
	}
}
