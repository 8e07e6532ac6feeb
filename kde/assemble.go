package kde

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// daplPoints is how many draws estimate each party's l1 distance for DAPL:
// the estimate's standard deviation is at most 2/√daplPoints.
const daplPoints = 2000

// Assemble adds, in `cohort sim`, which owns every party, what only the
// parties' real rows give: the paper's disclosure measure, DAPL per class,
// and with a test set the accuracy of a tree grown on the pooled sample
// against one grown on the real rows, and their difference φ. Over real
// nodes no one holds every party's rows, so none of it is computed.
func (Kind) Assemble(ctx context.Context, spec *job.Spec, result []byte, _ map[string]job.Secrets, _ string) ([]byte, error) {
	cfg, err := parse(spec)
	if err != nil {
		return nil, err
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("kde: result: %w", err)
	}
	var sample map[string][][]float64
	if err := json.Unmarshal(res["sample"], &sample); err != nil {
		return nil, fmt.Errorf("kde: result field sample: %w", err)
	}
	var real []map[string][][]float64
	for _, ps := range spec.Parties {
		t, err := open(ctx, spec, ps.Tables[0], cfg)
		if err != nil {
			return nil, err
		}
		byClass, err := rowsByClass(t, cfg)
		if err != nil {
			return nil, fmt.Errorf("kde: %w", err)
		}
		real = append(real, byClass)
	}
	ev := map[string]any{"dapl": DAPL(real, daplPoints, rand.New(rand.NewPCG(1, 2)))}
	if cfg.test != "" {
		t, err := open(ctx, spec, job.TableSpec{Name: "test", Path: cfg.test}, cfg)
		if err != nil {
			return nil, err
		}
		test, err := rowsByClass(t, cfg)
		if err != nil {
			return nil, fmt.Errorf("kde: test set: %w", err)
		}
		acc := Compare(real, sample, test, cfg.attrs, cfg.p.grow())
		ev["test_rows"], ev["accuracy_sample"], ev["accuracy_real"], ev["phi"] = acc.TestRows, acc.Sample, acc.Real, acc.Phi()
	}
	if res["evaluation"], err = json.Marshal(ev); err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// open loads a table of the spec as `cohort sim` resolves it.
func open(ctx context.Context, spec *job.Spec, ts job.TableSpec, cfg *config) (*table.Table, error) {
	src, err := job.ResolveSource(spec.Dir, ts, nil, true)
	if err != nil {
		return nil, fmt.Errorf("kde: %w", err)
	}
	t, err := table.Open(ctx, src, ts.Name, cfg.schema(), table.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("kde: table %s: %w", ts.Name, err)
	}
	return t, nil
}

// Accuracy is the test accuracy of the tree grown on the pooled sample and
// of the one grown on the parties' real rows, as fractions.
type Accuracy struct {
	TestRows     int
	Sample, Real float64
}

// Phi is the paper's deterioration of classification (section 6.2, eq.
// 20): P_rand(err) − P_ori(err), the sample tree's error less the real
// rows' tree's.
func (a Accuracy) Phi() float64 { return (1 - a.Sample) - (1 - a.Real) }

// Compare grows a tree (tree.Grow) on the pooled sample and one on every
// party's real rows, and classifies test with each.
func Compare(real []map[string][][]float64, sample, test map[string][][]float64, attrs []string, gp tree.GrowParams) Accuracy {
	all := map[string][][]float64{}
	for _, p := range real {
		for label, rows := range p {
			all[label] = append(all[label], rows...)
		}
	}
	td := toData(test, attrs)
	acc := func(d map[string][][]float64) float64 {
		return float64(tree.Correct(tree.Grow(toData(d, attrs), gp, "", ""), td)) / float64(td.Rows())
	}
	return Accuracy{TestRows: td.Rows(), Sample: acc(sample), Real: acc(all)}
}

// toData is rows by class as the tree grower reads them.
func toData(byClass map[string][][]float64, attrs []string) *tree.Data {
	d := &tree.Data{Labels: slices.Sorted(maps.Keys(byClass))}
	for i, a := range attrs {
		at := &tree.Attr{Name: a, Numeric: true}
		for _, label := range d.Labels {
			for _, r := range byClass[label] {
				at.Num = append(at.Num, r[i])
			}
		}
		d.Attrs = append(d.Attrs, at)
	}
	for c, label := range d.Labels {
		for range byClass[label] {
			d.Class = append(d.Class, int32(c))
		}
	}
	return d
}

// DAPL is the paper's Distributed Aggregate Privacy Loss (section 6.1,
// eq. 18) per class: half the l1 distance between each party's density
// estimate and the true density, weighted by the party's share of the
// class's rows. The true density is unknown; it is taken to be the
// estimate over every party's rows of the class (Scott's bandwidths at
// their number), the best the rows give. A class is null where an
// estimate has a constant column (no density).
func DAPL(parties []map[string][][]float64, points int, rng *rand.Rand) map[string]*float64 {
	all := map[string][][]float64{}
	for _, p := range parties {
		for label, rows := range p {
			all[label] = append(all[label], rows...)
		}
	}
	out := map[string]*float64{}
	for _, label := range slices.Sorted(maps.Keys(all)) {
		ref := NewEstimate(all[label], Bandwidths(all[label]))
		var sum float64
		ok := ref != nil
		for _, p := range parties {
			rows := p[label]
			if !ok || len(rows) == 0 {
				continue
			}
			e := NewEstimate(rows, Bandwidths(rows))
			if e == nil {
				ok = false
				break
			}
			sum += float64(len(rows)) / float64(len(all[label])) * L1(e, ref, points, rng)
		}
		if ok {
			v := sum / 2
			out[label] = &v
		} else {
			out[label] = nil
		}
	}
	return out
}
