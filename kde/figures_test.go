package kde_test

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/shareddata"
	"github.com/cohortdm/cohort/kde"
	"github.com/cohortdm/cohort/tree"
)

// split deals rows by class over l parties at random (seeded), N/l each
// as in the paper's section 7.1.
func split(byClass map[string][][]float64, l int, rng *rand.Rand) []map[string][][]float64 {
	out := make([]map[string][][]float64, l)
	for i := range out {
		out[i] = map[string][][]float64{}
	}
	n := 0
	for _, label := range []string{"<=50K", ">50K", "0", "1"} { // a fixed order, whatever the labels
		rows := byClass[label]
		for _, j := range rng.Perm(len(rows)) {
			out[n%l][label] = append(out[n%l][label], rows[j])
			n++
		}
	}
	return out
}

// figures runs the paper's experiment over parties 1..4: each party
// sanitises its share (Sanitise, M_l = N_l), the samples are pooled, and
// a tree grown on the pool is compared with one grown on the real rows
// (φ) over runs draws of the split and the samples; DAPL per class from
// the first. It returns the mean φ per number of parties.
func figures(t *testing.T, train, test map[string][][]float64, attrs []string, runs int, resplit func(seed int) (map[string][][]float64, map[string][][]float64)) []float64 {
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true}
	var phis []float64
	t.Logf("%-3s %-10s %-10s %-8s %s", "L", "acc real", "acc pool", "φ", "DAPL per class")
	for l := 1; l <= 4; l++ {
		var real, pool, phi float64
		var dapl map[string]*float64
		for run := range runs {
			tr, te := train, test
			if resplit != nil {
				tr, te = resplit(run)
			}
			parties := split(tr, l, rand.New(rand.NewPCG(uint64(run), uint64(l))))
			sample := map[string][][]float64{}
			for p, rows := range parties {
				s, err := kde.Sanitise(rows, 1, 10, []byte(fmt.Sprintf("figures %d %d %d", run, l, p)))
				if err != nil {
					t.Fatal(err)
				}
				for label, r := range s {
					sample[label] = append(sample[label], r...)
				}
			}
			acc := kde.Compare(parties, sample, te, attrs, gp)
			real, pool, phi = real+acc.Real/float64(runs), pool+acc.Sample/float64(runs), phi+acc.Phi()/float64(runs)
			if run == 0 {
				dapl = kde.DAPL(parties, 2000, rand.New(rand.NewPCG(1, uint64(l))))
			}
		}
		var ds []string
		for _, label := range []string{"<=50K", ">50K", "0", "1"} {
			if v, ok := dapl[label]; ok && v != nil {
				ds = append(ds, fmt.Sprintf("%s %.3f", label, *v))
			}
		}
		t.Logf("%-3d %-10.4f %-10.4f %-8.4f %s", l, real, pool, phi, strings.Join(ds, ", "))
		phis = append(phis, phi)
	}
	return phis
}

// breast reads the Wisconsin diagnostic breast cancer data (FATE's
// vertical split, guest and host joined on id): 569 rows, 30 features, the
// nearest the shared data holds to the paper's Breast-Cancer.
func breast(t testing.TB) ([]string, [][]float64, []string) {
	dir, err := shareddata.Dir(".", "fate", "")
	if err != nil {
		t.Skip("no FATE breast data")
	}
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Skip("no FATE breast data")
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	guest, host := read("breast_hetero_guest.csv"), read("breast_hetero_host.csv")
	hostRows := map[string][]string{}
	for _, r := range host[1:] {
		hostRows[r[0]] = r[1:]
	}
	var attrs []string
	for _, c := range guest[0][2:] {
		attrs = append(attrs, "g"+c)
	}
	for _, c := range host[0][1:] {
		attrs = append(attrs, "h"+c)
	}
	var rows [][]float64
	var labels []string
	for _, r := range guest[1:] {
		var x []float64
		for _, v := range append(append([]string{}, r[2:]...), hostRows[r[0]]...) {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			x = append(x, f)
		}
		rows, labels = append(rows, x), append(labels, r[1])
	}
	return attrs, rows, labels
}

// TestFiguresBreast is the paper's protocol on the breast cancer data:
// a random 75 %/25 % split per draw, 20 draws per number of parties. The
// paper finds φ within 3 points on its Breast-Cancer (10 dimensions);
// here, with 30 dimensions and about 100 rows per party and class at
// L = 4, the test holds it to 5.
func TestFiguresBreast(t *testing.T) {
	attrs, rows, labels := breast(t)
	resplit := func(seed int) (map[string][][]float64, map[string][][]float64) {
		train, test := map[string][][]float64{}, map[string][][]float64{}
		for i, j := range rand.New(rand.NewPCG(uint64(seed), 99)).Perm(len(rows)) {
			if i < len(rows)*3/4 {
				train[labels[j]] = append(train[labels[j]], rows[j])
			} else {
				test[labels[j]] = append(test[labels[j]], rows[j])
			}
		}
		return train, test
	}
	for l, phi := range figures(t, nil, nil, attrs, 20, resplit) {
		if phi > 0.05 {
			t.Errorf("L = %d: φ %.4f above 5 points", l+1, phi)
		}
	}
}
