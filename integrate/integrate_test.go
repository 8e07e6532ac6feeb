package integrate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// sameTable fails the test when two publications differ.
func sameTable(t *testing.T, got, want anonymize.Published) {
	t.Helper()
	b1, err := wire.Marshal(&got)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := wire.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	if string(b1) != string(b2) {
		t.Fatalf("publication differs from the central run:\n got  %v\n want %v", got, want)
	}
}

// checkAgainstCentral runs the job and compares it with plaintext TDS on the
// joined table, and checks the publication with the naive checker.
func checkAgainstCentral(t *testing.T, j *testJob, opts jobtest.Options) *jobtest.Report {
	t.Helper()
	rep, err := j.run(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := published(t, rep)
	want, ncp := j.central(t)
	sameTable(t, got, want)
	if d := math.Abs(rep.Result["ncp"].(float64) - ncp); d > 1e-12 {
		t.Errorf("ncp %v, central %v", rep.Result["ncp"], ncp)
	}
	mg := naiveCheck(t, got, j.reqs, j.l)
	if rep.Result["min_group"].(int) != mg {
		t.Errorf("min_group %v, naive %d", rep.Result["min_group"], mg)
	}
	return rep
}

// Reddy et al.'s Table 1 over three parties with two requirements: the
// same publication as central TDS on the joined table, ids
// held by one party dropped.
func TestSeed003EqualsCentral(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"gender", "education"}, K: 4}, {QID: []string{"gender", "age"}, K: 4}}
	j := seed003Job(t, reqs, "")
	rep := checkAgainstCentral(t, j, jobtest.Options{})
	if rep.Result["records"] != 34 {
		t.Errorf("records %v, want the 34 of Table 1", rep.Result["records"])
	}
	if rep.Result["rounds"].(int) == 0 {
		t.Errorf("no specialisation")
	}
	t.Logf("result: rounds %v ncp %.4f min_group %v", rep.Result["rounds"], rep.Result["ncp"], rep.Result["min_group"])
}

// With distinct 2-diversity of the class (sensitive: class, l: 2).
func TestSeed003Diverse(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"gender", "education", "age"}, K: 3}}
	j := seed003Job(t, reqs, "  sensitive: class\n  l: 2\n")
	j.l = 2
	checkAgainstCentral(t, j, jobtest.Options{})
}

func TestRandomEqualsCentral(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 4; seed++ {
		reqs := []anonymize.Requirement{
			{QID: []string{"noa", "soa", "wea"}, K: 5},
			{QID: []string{"nob", "sob"}, K: 8},
			{QID: []string{"noa", "nob", "wea", "web"}, K: 3},
		}
		j := randomJob(t, seed, 150+int(seed)*40, reqs, "")
		rep := checkAgainstCentral(t, j, jobtest.Options{})
		t.Logf("seed %d: %v records, %v rounds, ncp %.4f", seed, rep.Result["records"], rep.Result["rounds"], rep.Result["ncp"])
	}
}

// algorithm mondrian: the publication equals central Mondrian's on the
// joined table (the same attribute order, public ranges, k the largest
// k_i), on Reddy et al.'s table (with and without 2-diversity of the class)
// and on random tables.
func TestMondrianEqualsCentral(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"gender", "education"}, K: 4}, {QID: []string{"gender", "age"}, K: 4}}
	for _, l := range []int{0, 2} {
		extra := "  algorithm: mondrian\n"
		if l > 0 {
			extra += "  sensitive: class\n  l: 2\n"
		}
		j := seed003Job(t, reqs, extra)
		j.algorithm, j.l = "mondrian", l
		rep := checkAgainstCentral(t, j, jobtest.Options{})
		if rep.Result["algorithm"] != "mondrian" || rep.Result["rounds"].(int) == 0 {
			t.Errorf("l=%d: algorithm %v, rounds %v", l, rep.Result["algorithm"], rep.Result["rounds"])
		}
		t.Logf("l=%d: rounds %v ncp %.4f min_group %v", l, rep.Result["rounds"], rep.Result["ncp"], rep.Result["min_group"])
	}
	for seed := uint64(1); seed <= 3; seed++ {
		reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 5}, {QID: []string{"nob", "sob"}, K: 8}}
		j := randomJob(t, seed, 150+int(seed)*40, reqs, "  algorithm: mondrian\n")
		j.algorithm = "mondrian"
		rep := checkAgainstCentral(t, j, jobtest.Options{})
		t.Logf("seed %d: %v records, %v rounds, ncp %.4f", seed, rep.Result["records"], rep.Result["rounds"], rep.Result["ncp"])
	}
}

// A sensitive column one party holds (west's disease, not a quasi-
// identifier, not the class) with algorithm mondrian and l = 3: the
// attribute owners cut for k, west answers one bit per cut from home, and
// the publication (disease published as it is) is 3-diverse on disease in
// every class of every requirement, checked naively; some cuts were refused;
// messages keep to the profile (west's answers are one bit per candidate
// cut, declared as scores, to the coordinator only) and no raw value the
// publication does not show leaves.
func TestMondrianPrivateSensitive(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 4}, {QID: []string{"nob", "sob"}, K: 4}}
	j := withDisease(t, randomJob(t, 5, 260, reqs, "  algorithm: mondrian\n  sensitive: disease\n  l: 3\n"))
	rep, err := j.run(t, jobtest.Options{Leader: "south"})
	if err != nil {
		t.Fatal(err)
	}
	pub := published(t, rep)
	if n := len(pub.Columns); n < 2 || pub.Columns[n-2] != "class" || pub.Columns[n-1] != "disease" {
		t.Fatalf("columns %v", pub.Columns)
	}
	for _, r := range reqs {
		diseases := map[string]map[string]bool{}
		size := map[string]int{}
		for _, row := range pub.Rows {
			var key []string
			for _, q := range r.QID {
				key = append(key, row.Values[slices.Index(pub.Columns, q)])
			}
			k := strings.Join(key, "|")
			if diseases[k] == nil {
				diseases[k] = map[string]bool{}
			}
			diseases[k][row.Values[len(row.Values)-1]] = true
			size[k] += row.Count
		}
		for k, ds := range diseases {
			if len(ds) < 3 || size[k] < r.K {
				t.Errorf("%s: class %s has %d records, %d diseases", r, k, size[k], len(ds))
			}
		}
	}
	refused, answered := 0, 0
	for _, rec := range rep.Records() {
		if rec.Step.Phase == phaseCheck {
			d, err := checkRound.Decision(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, ok := range d.OK {
				answered++
				if !ok {
					refused++
				}
			}
		}
	}
	if refused == 0 || answered == refused {
		t.Errorf("%d of %d cuts refused: the test exercises nothing", refused, answered)
	}
	for _, s := range rep.SentOutside(profile...) {
		t.Errorf("message %s from %s discloses %q", s.Message.Type, s.From, s.Disclosure)
	}
	for _, s := range rep.Sent {
		if s.Message.Phase == phaseCheck && (s.From != "west" || s.To != "south" || s.Disclosure != wire.DiscloseScore) {
			t.Errorf("check answer from %s to %s disclosing %q", s.From, s.To, s.Disclosure)
		}
	}
	checkNeedles(t, j, rep, pub)
	t.Logf("%v rounds, %d of %d cuts refused, ncp %.4f", rep.Result["rounds"], refused, answered, rep.Result["ncp"])
}

// withDisease gives west a sensitive column, disease, that no other party
// holds, and writes the job again.
func withDisease(t *testing.T, j *testJob) *testJob {
	west := &j.parties[2]
	west.cols = append(west.cols, "disease")
	for i, r := range west.rows {
		west.rows[i] = append(r, fmt.Sprintf("disease-%d", (len(r[2])+i)%4))
	}
	return rewrite(t, j)
}

// params.model: any of Sun's models on the sensitive column under both
// algorithms; here recursive (3, 2)-diversity of the class: in every class
// of every requirement the larger label count is under 3 × the smaller
// (counted naively); a bad model names its field.
func TestModelParam(t *testing.T) {
	t.Parallel()
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 4}, {QID: []string{"nob", "sob"}, K: 4}}
	for _, alg := range []string{"tds", "mondrian"} {
		j := randomJob(t, 7, 240, reqs, "  algorithm: "+alg+"\n  sensitive: class\n  model: {recursive_c: 3, recursive_l: 2}\n")
		rep, err := j.run(t, jobtest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		pub := published(t, rep)
		for _, r := range reqs {
			counts := map[string]map[string]int{}
			for _, row := range pub.Rows {
				var key []string
				for _, q := range r.QID {
					key = append(key, row.Values[slices.Index(pub.Columns, q)])
				}
				k := strings.Join(key, "|")
				if counts[k] == nil {
					counts[k] = map[string]int{}
				}
				counts[k][row.Values[len(row.Values)-1]] += row.Count
			}
			for k, c := range counts {
				if max(c["yes"], c["no"]) >= 3*min(c["yes"], c["no"]) {
					t.Errorf("%s %s: class %s has %v", alg, r, k, c)
				}
			}
		}
		t.Logf("%s: %v rounds, ncp %.4f", alg, rep.Result["rounds"], rep.Result["ncp"])
	}
	j := seed003Job(t, seedReqs, "")
	for params, field := range map[string]string{
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  model: {p_plus: 2}\n":                         "params.model.categories",
		"  requirements: [{qid: [gender], k: 2}]\n  model: {recursive_c: 2, recursive_l: 2}\n":                        "params.model",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  model: {recursive_c: 2}\n":                    "params.model.recursive_c",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  model: {alpha: -1, categories: [[Y], [N]]}\n": "params.model.alpha",
		// the top-level names, as kind anonymize has them
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  p_plus: 2\n":                                          "params.categories",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  p: -1\n":                                              "params.p",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  l: 2.5\n":                                             "params.l",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  alpha: -1\n  categories: [[Y], [N]]\n":                "params.alpha",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  p_plus: 3\n  categories: [[Y], [N]]\n":                "params.p_plus",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  recursive_l: 2\n":                                     "params.recursive_c",
		"  requirements: [{qid: [gender], k: 2}]\n  p: 2\n":                                                                   "params.sensitive",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n":                                                       "params.sensitive",
		"  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n  p: 2\n  model: {p_plus: 2, categories: [[Y], [N]]}\n": "params.model",
	} {
		if err := (Kind{}).Validate(writeJobRaw(t, j, params)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params %q: err = %v, want one naming %s", params, err, field)
		}
	}
}
