package integrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job/jobtest"
)

var seedReqs = []anonymize.Requirement{{QID: []string{"gender", "education"}, K: 4}, {QID: []string{"gender", "age"}, K: 4}}

// Bad input fails the job with an error naming the cause (party, table,
// column), never a private value.
func TestBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		edit   func(j *testJob)
		reqs   []anonymize.Requirement
		extra  string
		want   []string
		absent string
	}{
		{name: "missing id column", edit: func(j *testJob) { j.parties[1].cols[0] = "ssn" },
			want: []string{"beta", "no id column \"id\""}},
		{name: "value not in taxonomy", edit: func(j *testJob) { j.parties[1].rows[5][2] = "Medicine" },
			want: []string{"beta", "column \"education\"", "not cover", "table row 6"}, absent: "Medicine"},
		{name: "unknown QID column", reqs: []anonymize.Requirement{{QID: []string{"gender", "salary"}, K: 2}},
			edit: func(j *testJob) {
				j.taxYAML["salary"] = "column: salary\nroot: {label: any, children: [{label: lo}, {label: hi}]}\n"
			}, want: []string{"unknown QID column \"salary\""}},
		{name: "k larger than the records", reqs: []anonymize.Requirement{{QID: []string{"gender"}, K: 35}},
			want: []string{"k = 35", "34 records"}},
		{name: "repeated id", edit: func(j *testJob) { j.parties[0].rows[3][0] = j.parties[0].rows[2][0] },
			want: []string{"alpha", "repeats values"}},
		{name: "no class column", edit: func(j *testJob) { j.parties[1].cols[1] = "label" },
			want: []string{"beta", "no class column \"class\""}},
		{name: "different class labels", edit: func(j *testJob) { j.parties[1].rows[0][1] = "Y" },
			want: []string{"alpha and beta hold different values of the class column"}},
		{name: "column without taxonomy", edit: func(j *testJob) {
			j.parties[0].cols = append(j.parties[0].cols, "zip")
			for i := range j.parties[0].rows {
				j.parties[0].rows[i] = append(j.parties[0].rows[i], "12345")
			}
		}, want: []string{"alpha", "column \"zip\" has no taxonomy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reqs := seedReqs
			if c.reqs != nil {
				reqs = c.reqs
			}
			j := seed003Job(t, reqs, c.extra)
			if c.edit != nil {
				c.edit(j)
				// rewrite the files with the edit
				j = rewrite(t, j)
			}
			rep, err := j.run(t, jobtest.Options{})
			if err == nil {
				t.Fatalf("no error; result %v", rep.Result)
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if c.absent != "" {
				if strings.Contains(err.Error(), c.absent) {
					t.Errorf("error %q shows the value %q", err, c.absent)
				}
				for _, e := range rep.LogHolding([]byte(c.absent)) {
					t.Errorf("log entry %s holds %q", e.Op, c.absent)
				}
			}
		})
	}
}

// Spec errors are caught by Validate, naming the field.
func TestValidate(t *testing.T) {
	t.Parallel()
	cases := map[string][2]string{
		"qid without taxonomy": {"  requirements: [{qid: [gender, salary], k: 2}]\n", "has no taxonomy"},
		"sensitive not class":  {"  requirements: [{qid: [gender], k: 2}]\n  sensitive: age\n  l: 2\n", "only the shared class"},
		"k zero":               {"  requirements: [{qid: [gender], k: 0}]\n", "at least 1"},
		"no requirement":       {"  l: 0\n", "no requirement"},
		"unknown hub":          {"  requirements: [{qid: [gender], k: 2}]\n  hub: nobody\n", "not a party"},
		"unknown PSI mode":     {"  requirements: [{qid: [gender], k: 2}]\n  psi: fast\n", "params.psi"},
		"unknown param":        {"  requirements: [{qid: [gender], k: 2}]\n  kk: 2\n", "unknown field"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			j := seed003Job(t, seedReqs, "")
			err := Kind{}.Validate(writeJobRaw(t, j, c[0]))
			if err == nil || !strings.Contains(err.Error(), c[1]) {
				t.Fatalf("err = %v, want %q", err, c[1])
			}
		})
	}
}

// Regression (issue 21, finding 1): k = 1 is refused by Validate, naming the
// requirement's field.
func TestRefusesKOne(t *testing.T) {
	t.Parallel()
	j := seed003Job(t, seedReqs, "")
	for i, params := range []string{"  requirements: [{qid: [gender], k: 1}]\n", "  requirements: [{qid: [gender], k: 2}, {qid: [age], k: 1}]\n"} {
		err := Kind{}.Validate(writeJobRaw(t, j, params))
		want := fmt.Sprintf("params.requirements[%d].k", i)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("params %q: err = %v, want one naming %s", params, err, want)
		}
	}
}
