package onetable

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// onedimSpec writes a table of ids and the given numeric column, and a
// spec with the given params (no taxonomy: onedim needs none).
func onedimSpec(t *testing.T, xs []string, params string) *job.Spec {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,x\n")
	for i, x := range xs {
		fmt.Fprintf(&b, "person-%03d,%s\n", i, x)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return spectest.Write(t, filepath.Join(dir, "spec.yaml"), "kind: anonymize\nparties:\n  - name: clinic\n    tables: [{name: people, path: t.csv}]\nparams:\n"+params)
}

// Lodha and Thomas's Example 9 as a job: {1, 12, 4, 7, 3} at k = 2 is
// published as {1, 3, 4} → [1-4] and {7, 12} → [7-12] by both methods,
// k-median cost 8 (|1−3| + |4−3| + |12−7|) and rank difference 3
// (Example 11).
func TestOneDimJob(t *testing.T) {
	for _, m := range []string{"", "  onedim: quantile\n"} {
		rep, err := run(t, onedimSpec(t, []string{"1", "12", "4", "7", "3"}, "  algorithm: onedim\n  requirements: [{qid: [x], k: 2}]\n"+m))
		if err != nil {
			t.Fatal(err)
		}
		p := rep.Result["published"].(anonymize.Published)
		var got []string
		for _, r := range p.Rows {
			got = append(got, fmt.Sprintf("%s×%d", r.Values[0], r.Count))
		}
		r := rep.Result
		if !slices.Equal(got, []string{"[1-4]×3", "[7-12]×2"}) || r["kmedian_cost"] != 8.0 || r["rank_difference"] != 3 || r["min_group"] != 2 {
			t.Errorf("%q: %v, %v", m, got, r)
		}
		if ncp := (3.0*3 + 5*2) / 11 / 5; math.Abs(r["ncp"].(float64)-ncp) > 1e-12 {
			t.Errorf("%q: ncp %v, want %v", m, r["ncp"], ncp)
		}
	}
}

// On random columns with ties the job's publication is k-anonymous by a
// naive count, every published range covers exactly the values mapped to
// it and ranges do not overlap.
func TestOneDimRanges(t *testing.T) {
	seed := uint64(11)
	for trial := range 6 {
		n, k := 30+7*trial, 2+trial
		xs := make([]string, n)
		for i := range xs {
			seed = seed*6364136223846793005 + 1442695040888963407
			xs[i] = strconv.Itoa(int(seed>>59) + 20)
		}
		rep, err := run(t, onedimSpec(t, xs, fmt.Sprintf("  algorithm: onedim\n  requirements: [{qid: [x], k: %d}]\n", k)))
		if err != nil {
			t.Fatal(err)
		}
		p := rep.Result["published"].(anonymize.Published)
		if m := naiveMin(p, []string{"x"}); m < k {
			t.Fatalf("trial %d: class of %d at k = %d", trial, m, k)
		}
		type rng struct{ lo, hi float64 }
		var rs []rng
		total := 0
		for _, r := range p.Rows {
			v := r.Values[0]
			lo, hi := v, v
			if strings.HasPrefix(v, "[") {
				lo, hi, _ = strings.Cut(strings.Trim(v, "[]"), "-")
			}
			a, _ := strconv.ParseFloat(lo, 64)
			b, _ := strconv.ParseFloat(hi, 64)
			rs = append(rs, rng{a, b})
			total += r.Count
		}
		slices.SortFunc(rs, func(x, y rng) int { return int(x.lo - y.lo) })
		for i := 1; i < len(rs); i++ {
			if rs[i].lo < rs[i-1].hi {
				t.Errorf("trial %d: ranges %v and %v overlap", trial, rs[i-1], rs[i])
			}
		}
		if total != n {
			t.Errorf("trial %d: %d records published of %d", trial, total, n)
		}
	}
}

// Bad input names the field or the column, never a value; over real nodes
// the publication is written and no id or unshown raw value leaves the
// party.
func TestOneDimSimAndBadInput(t *testing.T) {
	for p, field := range map[string]string{
		"  algorithm: onedim\n  requirements: [{qid: [x, id], k: 2}]\n":                      "params.requirements",
		"  algorithm: onedim\n  requirements: [{qid: [x], k: 2}]\n  onedim: kmeans\n":        "params.onedim",
		"  algorithm: mdav\n  requirements: [{qid: [x], k: 2}]\n  onedim: quantile\n":        "params.onedim",
		"  algorithm: onedim\n  requirements: [{qid: [x], k: 2}]\n  sensitive: id\n  l: 2\n": "params.sensitive",
	} {
		err := (Kind{}).Validate(onedimSpec(t, []string{"1", "2"}, p))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%q: %v, want %s", p, err, field)
		}
	}
	_, err := run(t, onedimSpec(t, []string{"1", "2", "secret-value", "4"}, "  algorithm: onedim\n  requirements: [{qid: [x], k: 2}]\n"))
	if err == nil || !strings.Contains(err.Error(), `column "x": 1 of 4 rows`) || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("non-numeric: %v", err)
	}
	xs := []string{"23", "25", "31", "38", "38", "41", "47", "52", "55", "58", "61", "64"}
	s := onedimSpec(t, xs, "  algorithm: onedim\n  requirements: [{qid: [x], k: 3}]\n")
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pol := policy.Default()
	pol.Floors.MinK = 3
	if _, err := sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"anonymize": Kind{}}, Out: out, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	tab, err := table.Load(filepath.Join(out, File), "pub", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := anonymize.MinGroup(tab, []string{"x"}); tab.NumRows() != len(xs) || m < 3 {
		t.Fatalf("%d rows, class of %d", tab.NumRows(), m)
	}
	rep, err := run(t, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.SentOutside(wire.DiscloseGeneralised) {
		t.Errorf("message %s discloses %q", m.Message.Type, m.Disclosure)
	}
	shown := ""
	for _, r := range rep.Result["published"].(anonymize.Published).Rows {
		shown += r.Values[0] + " "
	}
	needles := []string{}
	for i := range xs {
		needles = append(needles, fmt.Sprintf("person-%03d", i))
	}
	for _, x := range xs {
		if !strings.Contains(shown, x) { // inner values of a range
			needles = append(needles, "\xa2"+x, `"`+x+`"`)
		}
	}
	for _, nd := range needles {
		if len(rep.SentHolding([]byte(nd))) > 0 || len(rep.LogHolding([]byte(nd))) > 0 {
			t.Errorf("%q left the party", nd)
		}
	}
}

// Algorithm onedim on the age of 5,000 and 30,162 Adult records, both
// methods: k-anonymous by the coordinator's check, the dynamic programme's
// k-median cost never above the quantiles', and the quantiles' rank
// difference never above the programme's (Theorem 5). The figures of
// docs/anonymize.md:
//
//	COHORT_ADULT=1 go test ./anonymize/onetable -run TestAdultOneDim -v -count=1
func TestAdultOneDim(t *testing.T) {
	if os.Getenv("COHORT_ADULT") == "" {
		t.Skip("set COHORT_ADULT=1 to run on UCI Adult")
	}
	for _, n := range []int{5000, 30162} {
		for _, k := range []int{10, 100, 1000} {
			res := map[string]job.Result{}
			for _, m := range []string{"dp", "quantile"} {
				rep, err := run(t, adultSpec(t, n, fmt.Sprintf("  algorithm: onedim\n  onedim: %s\n  requirements: [{qid: [age], k: %d}]\n", m, k)))
				if err != nil {
					t.Fatal(err)
				}
				r := rep.Result
				res[m] = r
				t.Logf("| %d | %d | %s | %d | %.6g | %d | %.3g | %.3f s |", n, k, m, r["classes"], r["kmedian_cost"], r["rank_difference"], r["ncp"], r["seconds"])
			}
			if res["dp"]["kmedian_cost"].(float64) > res["quantile"]["kmedian_cost"].(float64) || res["quantile"]["rank_difference"].(int) > res["dp"]["rank_difference"].(int) {
				t.Errorf("n=%d k=%d: dp %v, quantile %v", n, k, res["dp"], res["quantile"])
			}
		}
	}
}
