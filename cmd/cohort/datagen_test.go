package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// loadGenerated reads a generated spec and every table (and test table) it
// names, with the spec's schema, and returns the spec.
func loadGenerated(t *testing.T, dir string) *job.Spec {
	t.Helper()
	spec, err := job.LoadSpec(filepath.Join(dir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(name, path string) *table.Table {
		schema, err := spec.TableSchema(name)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := table.Load(filepath.Join(dir, path), name, schema)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	for _, p := range spec.Parties {
		for _, ts := range p.Tables {
			if tb := load(ts.Name, ts.Path); tb.NumRows() == 0 {
				t.Errorf("%s has no rows", ts.Path)
			}
		}
	}
	for name, path := range spec.Test {
		load(name, path)
	}
	return spec
}

// The generators write a spec whose tables load with its schema, repeat
// for a seed, and never write into a directory that has files.
func TestDataGen(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain")
	if out, err := runApp(t, "data", "gen", "sjc", "--tables", "3", "--n", "200", "--v", "40", "--x", "2", "--seed", "3", "--out", chain); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	spec := loadGenerated(t, chain)
	if spec.Kind != "sjc" || len(spec.Parties) != 3 || len(spec.Join) != 2 || len(spec.Test) != 3 {
		t.Fatalf("sjc spec: kind %s, %d parties, joins %v, tests %v", spec.Kind, len(spec.Parties), spec.Join, spec.Test)
	}
	again := filepath.Join(dir, "chain2")
	if out, err := runApp(t, "data", "gen", "sjc", "--tables", "3", "--n", "200", "--v", "40", "--x", "2", "--seed", "3", "--out", again); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, _ := os.ReadFile(filepath.Join(chain, "T2.csv"))
	b, _ := os.ReadFile(filepath.Join(again, "T2.csv"))
	if len(a) == 0 || string(a) != string(b) {
		t.Fatal("the same seed gave different tables")
	}
	if out, err := runApp(t, "data", "gen", "sjc", "--out", chain); err == nil || !strings.Contains(out+err.Error(), "not empty") {
		t.Fatalf("writing into a full directory: %v %s", err, out)
	}

	bc := filepath.Join(dir, "bc")
	if out, err := runApp(t, "data", "gen", "bicluster", "--gen", "paper", "--noise", "0.1", "--parties", "4", "--out", bc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	spec = loadGenerated(t, bc)
	if spec.Kind != "bicluster" || len(spec.Parties) != 4 {
		t.Fatalf("bicluster spec: kind %s, %d parties", spec.Kind, len(spec.Parties))
	}
	var implanted []struct{ Rows, Columns []string }
	raw, err := os.ReadFile(filepath.Join(bc, "implanted.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &implanted); err != nil || len(implanted) != 10 || len(implanted[0].Rows) != 10 || len(implanted[0].Columns) != 10 {
		t.Fatalf("implanted: %v, %d biclusters", err, len(implanted))
	}
	if out, err := runApp(t, "data", "gen", "bicluster", "--gen", "nope", "--out", filepath.Join(dir, "x")); err == nil || !strings.Contains(err.Error(), "paper or shifted") {
		t.Fatalf("unknown generator: %v %s", err, out)
	}
}
