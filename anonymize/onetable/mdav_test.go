package onetable

import (
	"fmt"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
)

// mdavSpec writes a numeric table (the CSV body) and a spec of algorithm
// mdav on its columns after id with k and the extra params.
func mdavSpec(t *testing.T, body string, k int, params string) *job.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	qid := strings.Split(strings.SplitN(body, "\n", 2)[0], ",")[1:]
	spec := "kind: anonymize\nparties:\n  - name: clinic\n    tables: [{name: people, path: t.csv}]\nparams:\n  algorithm: mdav\n" +
		fmt.Sprintf("  requirements: [{qid: [%s], k: %d}]\n", strings.Join(qid, ", "), k) + params
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec)
	return s
}

// algorithm mdav on a numeric table (no taxonomies): every variant
// publishes centroids in groups of at least k (counted naively), with
// SSE/SST in (0, 1) and the key attributes named.
func TestMDAV(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,age,hours,income,weight\n")
	for i := range 90 {
		fmt.Fprintf(&b, "p%d,%d,%d,%d,%d\n", i, 20+i%47, 10+(i*7)%50, 1000+(i*37)%900, 50+(i*13)%40)
	}
	for _, params := range []string{"  mdav: standard\n", "  mdav: thesis\n", "  approximate: true\n"} {
		rep, err := run(t, mdavSpec(t, b.String(), 4, params))
		if err != nil {
			t.Fatalf("%q: %v", params, err)
		}
		p := rep.Result["published"].(anonymize.Published)
		if m := naiveMin(p, []string{"age", "hours", "income", "weight"}); m < 4 {
			t.Errorf("%q: class of %d", params, m)
		}
		loss := rep.Result["information_loss"].(float64)
		if loss <= 0 || loss >= 1 || len(rep.Result["key_attributes"].([]string)) == 0 {
			t.Errorf("%q: SSE/SST %v, keys %v", params, loss, rep.Result["key_attributes"])
		}
		t.Logf("%q: SSE/SST %.4f keys %v classes %v", params, loss, rep.Result["key_attributes"], rep.Result["classes"])
	}
}

// Issue 32, item 1: a table with many tied records (three distinct rows,
// each ten times) publishes under every variant; MDAV used to put a
// record in two groups, and the publication had a class of k − 1.
func TestMDAVTiedRecords(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,age,hours,income\n")
	for i := range 30 {
		fmt.Fprintf(&b, "p%d,%d,%d,%d\n", i, 20+i%3, 40-i%3, 1000+100*(i%3))
	}
	for _, params := range []string{"  mdav: standard\n", "  mdav: thesis\n", "  approximate: true\n", "  approximate: true\n  mdav: thesis\n"} {
		rep, err := run(t, mdavSpec(t, b.String(), 3, params))
		if err != nil {
			t.Fatalf("%q: %v", params, err)
		}
		p := rep.Result["published"].(anonymize.Published)
		if m := naiveMin(p, []string{"age", "hours", "income"}); m < 3 {
			t.Errorf("%q: class of %d", params, m)
		}
		// groups of identical records publish identical centroids: the
		// classes are the published table's distinct rows (item 4)
		if c := rep.Result["classes"].(int); c != len(p.Rows) {
			t.Errorf("%q: %d classes reported, %d published", params, c, len(p.Rows))
		}
	}
}

// Issue 32, item 3: MDAV's information loss is SSE/SST on standardised
// attributes (Sun Eq. 5.1 on z-scores), the raw-unit figure second. Both
// are recomputed here from the publication alone: SSE/SST = 1 − SSB/SST,
// SSB from the published centroids and their counts. A column in the
// hundreds of thousands (as Adult's fnlwgt) makes the two figures differ.
func TestMDAVLossStandardised(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,age,hours,fnlwgt\n")
	var x [][]float64
	for i := range 120 {
		row := []float64{float64(20 + i%47), float64(10 + (i*7)%50), float64(100000 + (i*7919)%300000)}
		x = append(x, row)
		fmt.Fprintf(&b, "p%d,%g,%g,%g\n", i, row[0], row[1], row[2])
	}
	mean, sd := make([]float64, 3), make([]float64, 3)
	for _, r := range x {
		for j := range r {
			mean[j] += r[j] / float64(len(x))
		}
	}
	for _, r := range x {
		for j := range r {
			sd[j] += (r[j] - mean[j]) * (r[j] - mean[j]) / float64(len(x))
		}
	}
	sstRaw := 0.0
	for j := range sd {
		sstRaw += sd[j] * float64(len(x))
		sd[j] = math.Sqrt(sd[j])
	}
	for _, params := range []string{"  mdav: standard\n", "  approximate: true\n"} {
		rep, err := run(t, mdavSpec(t, b.String(), 5, params))
		if err != nil {
			t.Fatalf("%q: %v", params, err)
		}
		p := rep.Result["published"].(anonymize.Published)
		ssbStd, ssbRaw := 0.0, 0.0
		for _, r := range p.Rows {
			for j, q := range []string{"age", "hours", "fnlwgt"} {
				c, err := strconv.ParseFloat(r.Values[slices.Index(p.Columns, q)], 64)
				if err != nil {
					t.Fatal(err)
				}
				ssbRaw += float64(r.Count) * (c - mean[j]) * (c - mean[j])
				ssbStd += float64(r.Count) * (c - mean[j]) * (c - mean[j]) / (sd[j] * sd[j])
			}
		}
		wantStd, wantRaw := 1-ssbStd/float64(3*len(x)), 1-ssbRaw/sstRaw
		std, raw := rep.Result["information_loss"].(float64), rep.Result["information_loss_raw"]
		if math.Abs(std-wantStd) > 1e-4 || raw == nil || math.Abs(raw.(float64)-wantRaw) > 1e-4 {
			t.Errorf("%q: information_loss %v, raw %v; from the publication %.6f and %.6f", params, std, raw, wantStd, wantRaw)
		}
		if math.Abs(wantStd-wantRaw) < 10*1e-4 {
			t.Errorf("%q: standardised %.4f and raw %.4f too close to tell apart", params, wantStd, wantRaw)
		}
	}
}
