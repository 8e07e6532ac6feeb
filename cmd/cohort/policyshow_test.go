package main

import (
	"os"
	"path/filepath"
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
