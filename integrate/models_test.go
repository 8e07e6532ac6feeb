package integrate

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// diseaseCategories orders withDisease's four values, most sensitive first.
const diseaseCategories = "  categories: [[disease-0], [disease-1], [disease-2, disease-3]]\n"

// privateModels are every sensitive model kind anonymize has, in its
// param names, on a column one party holds (withDisease's), each with a
// naive check of one class's histogram of sensitive values.
var privateModels = []struct {
	name, params string
	ok           func(h map[string]int) bool
}{
	{"p", "  p: 3\n", func(h map[string]int) bool { return len(h) >= 3 }},
	{"p_plus", "  p_plus: 3\n" + diseaseCategories, func(h map[string]int) bool { return naiveCategories(h) >= 3 }},
	{"p_alpha", "  p: 2\n  alpha: 3\n" + diseaseCategories, func(h map[string]int) bool {
		w := 0.0 // Sun Eq. 3.1 with three categories: 0, 1/2, 1
		for v, n := range h {
			w += map[string]float64{"disease-0": 0, "disease-1": 0.5, "disease-2": 1, "disease-3": 1}[v] * float64(n)
		}
		return len(h) >= 2 && w >= 3
	}},
	{"entropy", "  l: 3.5\n  entropy: true\n", func(h map[string]int) bool {
		n, e := 0, 0.0
		for _, c := range h {
			n += c
		}
		for _, c := range h {
			q := float64(c) / float64(n)
			e -= q * math.Log2(q)
		}
		return e >= math.Log2(3.5)-1e-12
	}},
	{"recursive", "  recursive_c: 1\n  recursive_l: 2\n", func(h map[string]int) bool {
		var rs []int
		for _, c := range h {
			rs = append(rs, c)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(rs)))
		tail := 0
		for _, c := range rs[min(1, len(rs)):] {
			tail += c
		}
		return len(rs) >= 2 && float64(rs[0]) < 1*float64(tail)
	}},
}

// naiveCategories counts the categories of diseaseCategories a class holds.
func naiveCategories(h map[string]int) int {
	cats := map[string]bool{}
	for v := range h {
		cats[strings.Replace(strings.Replace(v, "disease-3", "disease-2", 1), "disease-", "c", 1)] = true
	}
	return len(cats)
}

// classHists is the histogram of the last column (the sensitive one) in
// every class of qid, and the class sizes, counted from the publication.
func classHists(pub anonymize.Published, qid []string) (map[string]map[string]int, map[string]int) {
	hists, sizes := map[string]map[string]int{}, map[string]int{}
	for _, row := range pub.Rows {
		var key []string
		for _, q := range qid {
			key = append(key, row.Values[slices.Index(pub.Columns, q)])
		}
		k := strings.Join(key, "|")
		if hists[k] == nil {
			hists[k] = map[string]int{}
		}
		hists[k][row.Values[len(row.Values)-1]] += row.Count
		sizes[k] += row.Count
	}
	return hists, sizes
}

// Every sensitive model of kind anonymize (p, p⁺, (p, α), entropy and
// recursive l) on a column one party holds, under Mondrian: the
// publication satisfies the model in every class of every requirement
// (checked naively), the owner refused some cuts, and what left it is
// still one bit per committed cut, as a score, to the coordinator only;
// every message keeps to the profile and no raw value the publication does
// not show leaves.
func TestPrivateSensitiveModels(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 4}, {QID: []string{"nob", "sob"}, K: 4}}
	for _, m := range privateModels {
		t.Run(m.name, func(t *testing.T) {
			j := withDisease(t, randomJob(t, 5, 260, reqs, "  algorithm: mondrian\n  sensitive: disease\n"+m.params))
			rep, err := j.run(t, jobtest.Options{Leader: "south"})
			if err != nil {
				t.Fatal(err)
			}
			pub := published(t, rep)
			for _, r := range reqs {
				hists, sizes := classHists(pub, r.QID)
				for k, h := range hists {
					if sizes[k] < r.K || !m.ok(h) {
						t.Errorf("%s: class %s has %d records, %v", r, k, sizes[k], h)
					}
				}
			}
			refused, answered := checkOneBitPerCut(t, rep.Records())
			if refused == 0 || answered == refused {
				t.Errorf("%d of %d cuts refused: the test exercises nothing", refused, answered)
			}
			for _, s := range rep.Sent {
				if s.Message.Phase == phaseCheck && (s.From != "west" || s.To != "south" || s.Disclosure != wire.DiscloseScore) {
					t.Errorf("check answer from %s to %s disclosing %q", s.From, s.To, s.Disclosure)
				}
			}
			checkNeedles(t, j, rep, pub)
			t.Logf("%v rounds, %d of %d cuts refused, ncp %.4f", rep.Result["rounds"], refused, answered, rep.Result["ncp"])
		})
	}
}

// checkOneBitPerCut checks that every committed check holds exactly one
// bit per cut of its round, and counts the bits and the refusals.
func checkOneBitPerCut(t *testing.T, recs []*job.Record) (refused, answered int) {
	t.Helper()
	var cuts []int
	checks := 0
	for _, rec := range recs {
		switch rec.Step.Phase {
		case phaseCut:
			d, err := cutRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			cuts = append(cuts, len(d.Cuts))
		case phaseCheck:
			d, err := checkRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			if checks >= len(cuts) || len(d.OK) != cuts[checks] {
				t.Errorf("check %d holds %d bits for the round's cuts %v", checks, len(d.OK), cuts)
			}
			checks++
			for _, ok := range d.OK {
				answered++
				if !ok {
					refused++
				}
			}
		}
	}
	if checks != len(cuts) {
		t.Errorf("%d checks for %d cut rounds", checks, len(cuts))
	}
	return refused, answered
}

// The same models end to end over real nodes (sim.Run: libp2p on
// loopback, Raft, the default policy): integrated.csv, read back, satisfies
// each model in every class of every requirement; every party's audit
// ledger keeps to the profile, and the only check answers are the owner's,
// to the coordinator, as scores (when the owner is not the coordinator
// itself, whose outputs are sent to no one).
func TestSimPrivateSensitiveModels(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real nodes")
	}
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 5}, {QID: []string{"nob", "sob"}, K: 5}} // the default policy's floor
	for _, m := range privateModels {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each model its own job and nodes
			j := withDisease(t, randomJob(t, 5, 260, reqs, "  algorithm: mondrian\n  sensitive: disease\n"+m.params))
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := sim.Run(ctx, filepath.Join(j.dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"integrate": Kind{}}, Out: out}); err != nil {
				t.Fatal(err)
			}
			pub := readCSVPublished(t, filepath.Join(out, IntegratedFile))
			if n := len(pub.Columns); pub.Columns[n-1] != "disease" {
				t.Fatalf("columns %v", pub.Columns)
			}
			for _, r := range reqs {
				hists, sizes := classHists(pub, r.QID)
				for k, h := range hists {
					if sizes[k] < r.K || !m.ok(h) {
						t.Errorf("%s: class %s has %d records, %v", r, k, sizes[k], h)
					}
				}
			}
			checks, westSends := 0, 0
			for _, p := range j.spec.PartyNames() {
				entries, err := audit.ReadFile(filepath.Join(out, "audit", p+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if !slices.Contains(profile, wire.Disclosure(e.Disclosure)) && e.Disclosure != string(wire.DiscloseControl) {
						t.Errorf("%s's ledger: %s in %s to %s discloses %q", p, e.Type, e.Phase, e.Peer, e.Disclosure)
					}
					if p == "west" && e.Phase == string(phasePropose) && e.Disclosure != string(wire.DiscloseControl) {
						westSends++
					}
					if e.Phase == string(phaseCheck) && e.Disclosure != string(wire.DiscloseControl) {
						checks++
						if p != "west" || e.Disclosure != string(wire.DiscloseScore) {
							t.Errorf("%s's ledger: a check answer to %s disclosing %q", p, e.Peer, e.Disclosure)
						}
					}
				}
			}
			// a coordinator's own outputs reach it without a message: when
			// west leads, its proposals and answers are in no ledger
			if westSends > 0 && checks == 0 {
				t.Error("no check answer in any ledger: the test checks nothing")
			}
		})
	}
}

// readCSVPublished reads integrated.csv back as distinct rows with counts.
func readCSVPublished(t *testing.T, path string) anonymize.Published {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	pub := anonymize.Published{Columns: recs[0]}
	for _, r := range recs[1:] {
		pub.Rows = append(pub.Rows, anonymize.Row{Values: r, Count: 1})
	}
	return pub
}

// The bundled sensitive example (examples/integrate/spec-sensitive.yaml)
// over real nodes: every class of ⟨{age, sex, district}, 5⟩ in
// integrated.csv holds at least 5 patients and diagnoses of at least two
// of the three specialties.
func TestSimSensitiveExample(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real nodes")
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sim.Run(ctx, "../examples/integrate/spec-sensitive.yaml", sim.RunOptions{Kinds: job.Registry{"integrate": Kind{}}, Out: out}); err != nil {
		t.Fatal(err)
	}
	pub := readCSVPublished(t, filepath.Join(out, IntegratedFile))
	specialty := map[string]string{"Arrhythmia": "cardio", "Heart failure": "cardio", "Asthma": "resp", "COPD": "resp", "Pneumonia": "resp", "Appendicitis": "dig", "Gallstones": "dig"}
	hists, sizes := classHists(pub, []string{"age", "sex", "district"})
	if len(hists) < 2 || pub.Records() != 44 {
		t.Fatalf("%d classes, %d records", len(hists), pub.Records())
	}
	for k, h := range hists {
		cats := map[string]bool{}
		for v := range h {
			cats[specialty[v]] = true
		}
		if sizes[k] < 5 || len(cats) < 2 || cats[""] {
			t.Errorf("class %s: %d records, diagnoses %v", k, sizes[k], h)
		}
	}
}
