package bicluster_test

import (
	"flag"
	"fmt"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/score"
	"github.com/cohortdm/cohort/bicluster/synth"
)

var report = flag.Bool("report", false, "print the accuracy-vs-noise table of docs/bicluster.md")

// seedN is the seed of repetition n.
func seedN(n int) []byte { return []byte(fmt.Sprintf("bicluster-report-%d", n)) }

// TestAccuracyReport prints the accuracy table of docs/bicluster.md:
//
//	go test ./bicluster/ -run TestAccuracyReport -report -v
func TestAccuracyReport(t *testing.T) {
	t.Parallel()
	if !*report {
		t.Skip("run with -report")
	}
	const reps = 10
	t.Logf("| γ | cHawk match | cHawk consensus | Phoenix-4 match | Phoenix-4 mean-of-means match | k-means match | k-means consensus | cHawk biclusters |")
	t.Logf("|---|---|---|---|---|---|---|---|")
	for _, g := range []float64{0, 0.05, 0.10, 0.15, 0.20, 0.25} {
		var cm, cc, pm, mm, km, kc, nb float64
		for n := range reps {
			m, truth, err := synth.Paper(g).Generate(seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			res, err := bicluster.CHawk(m, seedN(n), bicluster.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			cm += score.Match(truth, res.Biclusters)
			cc += score.Consensus(truth, res.Biclusters)
			nb += float64(len(res.Biclusters))
			ph, err := phoenixInClear(m, 4, seedN(n), bicluster.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			pm += score.Match(truth, ph)
			p := bicluster.DefaultParams()
			p.Mode = bicluster.MeanOfMeans
			if ph, err = phoenixInClear(m, 4, seedN(n), p); err != nil {
				t.Fatal(err)
			}
			mm += score.Match(truth, ph)
			kb, err := score.KMeans(m, 10, 100, seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			km += score.Match(truth, kb)
			kc += score.Consensus(truth, kb)
		}
		t.Logf("| %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f |", g, cm/reps, cc/reps, pm/reps, mm/reps, km/reps, kc/reps, nb/reps)
	}
	t.Logf("")
	t.Logf("| σ | cHawk consensus | cHawk match | k-means (K = 5) consensus | cHawk biclusters |")
	t.Logf("|---|---|---|---|---|")
	for _, sigma := range []float64{0, 1, 2, 5, 10} {
		var cc, cm, kc, nb float64
		for n := range reps {
			m, truth, err := synth.Sklearn(sigma).Generate(seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			res, err := bicluster.CHawk(m, seedN(n), bicluster.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			cc += score.Consensus(truth, res.Biclusters)
			cm += score.Match(truth, res.Biclusters)
			nb += float64(len(res.Biclusters))
			kb, err := score.KMeans(m, 5, 100, seedN(n))
			if err != nil {
				t.Fatal(err)
			}
			kc += score.Consensus(truth, kb)
		}
		t.Logf("| %v | %.3f | %.3f | %.3f | %.1f |", sigma, cc/reps, cm/reps, kc/reps, nb/reps)
	}
}
