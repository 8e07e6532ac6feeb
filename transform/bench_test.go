package transform_test

import (
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/transform/internal/dtree"
	"github.com/cohortdm/cohort/transform/internal/realdata"
)

// cpuPerOp reports the process CPU time per iteration of loop, which on a
// shared machine depends much less on other load than the wall time.
func cpuPerOp(b *testing.B, loop func()) {
	t0 := cputime.Used(b)
	n := 0
	for b.Loop() {
		loop()
		n++
	}
	b.ReportMetric(float64(cputime.Used(b)-t0)/float64(n)/float64(time.Millisecond), "cpu-ms/op")
}

func benchAdult(b *testing.B) *table.Table {
	t, err := realdata.Adult(realData(b), false)
	if err != nil {
		b.Skip(err)
	}
	return t
}

// BenchmarkEncodeColumn: one Adult column's key (ChooseMaxMP, every
// family): Bu et al. report 1-2 s per covertype attribute for ChooseMaxMP
// alone (MATLAB, 581,012 rows).
func BenchmarkEncodeColumn(b *testing.B) {
	t := benchAdult(b)
	cl, _ := t.Column("income")
	_, cls := transform.Labels(cl.Str)
	for _, name := range realdata.AdultNumeric {
		c, _ := t.Column(name)
		b.Run(name, func(b *testing.B) {
			opt := transform.Options{Rand: seeded(1)}
			cpuPerOp(b, func() {
				if _, err := transform.EncodeColumn(name, c.Num, cls, opt); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkTransform: the whole Adult table (30,162 rows, six numeric
// columns recoded, eight categorical kept), with the class-string check.
func BenchmarkTransform(b *testing.B) {
	t := benchAdult(b)
	opt := transform.Options{Rand: seeded(1)}
	cpuPerOp(b, func() {
		if _, _, err := transform.Transform(t, "income", opt); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkDecodeTree: decoding the gini tree (depth 10) grown on the
// recoded Adult table, with the key alone and with the table.
func BenchmarkDecodeTree(b *testing.B) {
	t := benchAdult(b)
	rec, key, err := transform.Transform(t, "income", transform.Options{Rand: seeded(1)})
	if err != nil {
		b.Fatal(err)
	}
	mined, err := dtree.Build(rec, "income", dtree.Params{Criterion: dtree.Gini})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("key", func(b *testing.B) {
		cpuPerOp(b, func() {
			if _, err := transform.DecodeTree(mined, key); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("table", func(b *testing.B) {
		cpuPerOp(b, func() {
			if _, err := transform.DecodeTreeWithTable(mined, key, t); err != nil {
				b.Fatal(err)
			}
		})
	})
}
