package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
)

// A dataset's synthetic samples are bounded over every job: a job counts
// once however often it publishes (its re-runs), any name of the dataset
// counts against it, the count survives the store's reopening (from a
// snapshot and its journal), and the
// refusal names the rule, not the dataset's file.
func TestGuardSyntheticReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	store, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	store.j.every = 2 // a snapshot and a journal both hold releases
	p := Default()
	p.SyntheticReleases = 2
	e, err := NewEnforcer(Options{Self: "a", Policy: p, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	three := []string{"a", "b", "c"}
	st := job.Step{Phase: "publish"}
	for _, c := range []struct {
		job, table string
		ok         bool
	}{
		{"j1", "t", true},
		{"j1", "t", true}, // a re-run: the same release
		{"j2", "alias", true},
		{"j3", "t", false},
		{"j3", "other", true}, // another dataset
	} {
		g := e.Guard(c.job, nil, three, map[string]string{"t": "t.csv", "alias": "t.csv", "other": "o.csv"})
		err := g.Synthetic(st, c.table)
		if c.ok != (err == nil) {
			t.Fatalf("%s's sample of %s: %v, want allowed %v", c.job, c.table, err, c.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "rule synthetic_releases") || strings.Contains(err.Error(), "t.csv")) {
			t.Fatalf("refusal %q: want the rule named and no file", err)
		}
	}
	if show, err := e.Show(); err != nil || show.Synthetic["t.csv"] != 2 || show.Synthetic["o.csv"] != 1 {
		t.Fatalf("policy show: %v, %v; want 2 samples of t.csv and 1 of o.csv", show, err)
	}
	again, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := again.synthetic("j4", "t.csv", 2); ok || err != nil {
		t.Fatalf("after reopening, a third sample of t.csv: %v %v", ok, err)
	}
	if ok, err := again.synthetic("j1", "t.csv", 2); !ok || err != nil {
		t.Fatalf("after reopening, j1's own sample again: %v %v", ok, err)
	}
}

func TestParseSyntheticReleases(t *testing.T) {
	p, err := Parse([]byte("approval: auto\n"), "p.yaml")
	if err != nil || p.SyntheticReleases != DefaultSyntheticReleases {
		t.Fatalf("omitted: %v, %v", p, err)
	}
	if p, err = Parse([]byte("approval: auto\nsynthetic_releases: 0\n"), "p.yaml"); err != nil || p.SyntheticReleases != 0 {
		t.Fatalf("explicit 0: %v, %v", p, err)
	}
	if _, err = Parse([]byte("approval: auto\nsynthetic_releases: -1\n"), "p.yaml"); err == nil || !strings.Contains(err.Error(), "synthetic_releases") {
		t.Fatalf("negative: %v", err)
	}
	if Default().SyntheticReleases != DefaultSyntheticReleases {
		t.Fatalf("the default policy allows %d synthetic releases", Default().SyntheticReleases)
	}
}
