package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/policy"
)

// What `node policy show` prints reads back as a policy file, so an
// organisation can start its own from it (the spent budget is a comment).
func TestPolicyShowReadsBack(t *testing.T) {
	out, err := runApp(t, "node", "policy", "show", "--file", "default")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(path)
	if err != nil {
		t.Fatalf("the printed policy does not read back: %v\n%s", err, out)
	}
	if d := policy.Default(); p.Floors != d.Floors || p.Budget.Epsilon != d.Budget.Epsilon {
		t.Errorf("read back %+v %+v, want the default's %+v %+v", p.Floors, p.Budget, d.Floors, d.Budget)
	}
}

// The text form of a node's answer reports what the JSON form does: the
// budget spent and left per column, and per dataset the exact and the
// synthetic releases made and left of the policy's allowances, still as
// comments, so it reads back as a policy file.
func TestPolicyShowReleases(t *testing.T) {
	p := policy.Default()
	show, err := json.Marshal(&policy.Show{Policy: p,
		Spent:     map[string]policy.Amount{"wards.age": {Epsilon: 0.5}},
		Left:      map[string]policy.Amount{"wards.age": {Epsilon: 0.5, Delta: 1e-6}},
		Releases:  map[string]int{"wards": 3, "admissions": 1},
		Synthetic: map[string]int{"wards": 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeNode(t, map[string]string{"/v1/policy": string(show)})
	t.Setenv("COHORT_TOKEN", "test-token")
	out, err := runApp(t, "node", "policy", "show", "--api", srv.URL)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{
		"# spent: EPSILON SPENT EPSILON LEFT DELTA SPENT DELTA LEFT\n# wards.age 0.5 0.5 0 1e-06\n",
		fmt.Sprintf("\n# exact releases: RELEASED LEFT\n# admissions 1 %d\n# wards 3 %d\n", p.ExactReleases-1, p.ExactReleases-3),
		fmt.Sprintf("\n# synthetic releases: RELEASED LEFT\n# wards 2 %d\n", p.SyntheticReleases-2),
	} {
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("policy show does not print\n%s\nbut\n%s", want, out)
		}
	}
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Load(path); err != nil {
		t.Fatalf("the printed policy does not read back: %v\n%s", err, out)
	}
	// --file has no node: nothing made yet, said so.
	out, err = runApp(t, "node", "policy", "show", "--file", "default")
	if err != nil || !strings.Contains(out, "# exact releases: none yet") || !strings.Contains(out, "# synthetic releases: none yet") {
		t.Errorf("policy show --file: %v\n%s", err, out)
	}
}

// squeeze is s with every run of spaces one space, so a test does not
// depend on tabwriter's padding.
func squeeze(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }), " ")
}
