package sjc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/tree"
)

// jobRun is one run of the sjc job in memory and what it left.
type jobRun struct {
	rep     *jobtest.Report
	secrets map[string]job.Secrets
	tree    *tree.Tree
	result  map[string]any
}

// runJob runs spec through jobtest with a data dir per party (unless
// opts gives the parties' Secrets) and assembles the tree from the
// parties' kept predicates, as `cohort sim` does.
func runJob(t testing.TB, ctx context.Context, spec *job.Spec, opts jobtest.Options) (*jobRun, error) {
	t.Helper()
	return runJobKind(t, ctx, sjc.Kind{}, spec, opts)
}

// runJobKind is runJob with the parties' Kind (a memory budget).
func runJobKind(t testing.TB, ctx context.Context, kind job.Kind, spec *job.Spec, opts jobtest.Options) (*jobRun, error) {
	t.Helper()
	if opts.Secrets == nil {
		opts.Secrets = map[string]job.Secrets{}
		for _, p := range spec.PartyNames() {
			opts.Secrets[p] = job.DirSecrets(filepath.Join(t.TempDir(), p))
		}
	}
	rep, err := jobtest.Run(ctx, kind, spec, opts)
	if err != nil {
		return &jobRun{rep: rep, secrets: opts.Secrets}, err
	}
	tr, m := assemble(t, ctx, spec, rep, opts.Secrets)
	return &jobRun{rep: rep, secrets: opts.Secrets, tree: tr, result: m}, nil
}

// assemble puts the tree of a finished job together from the parties'
// kept predicates (Kind.Assemble) and returns it with the whole result.
func assemble(t testing.TB, ctx context.Context, spec *job.Spec, rep *jobtest.Report, secrets map[string]job.Secrets) (*tree.Tree, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(rep.Result)
	if err != nil {
		t.Fatal(err)
	}
	full, err := sjc.Kind{}.Assemble(ctx, spec, raw, secrets, t.TempDir())
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	var res struct {
		Tree json.RawMessage `json:"tree"`
	}
	if err := json.Unmarshal(full, &res); err != nil {
		t.Fatal(err)
	}
	var tr tree.Tree
	if err := tr.UnmarshalJSON(res.Tree); err != nil {
		t.Fatalf("assembled tree: %v\n%s", err, res.Tree)
	}
	var m map[string]any
	if err := json.Unmarshal(full, &m); err != nil {
		t.Fatal(err)
	}
	return &tr, m
}

// writeCase writes a random case's tables (and test tables) into a fresh
// directory and returns its spec with params and test set.
func writeCase(t testing.TB, rc *randomCase) *job.Spec {
	t.Helper()
	dir := t.TempDir()
	spec := *rc.spec
	spec.Dir = dir
	spec.Source = "random.yaml"
	spec.Params = map[string]any{"max_depth": rc.p.MaxDepth, "min_split": rc.p.MinSplit, "prune": rc.p.Prune, "join_splits": rc.p.JoinSplits}
	spec.Test = map[string]string{}
	for name, text := range rc.csv {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"_test.csv"), []byte(rc.test[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		spec.Test[name] = name + "_test.csv"
	}
	return &spec
}

func TestJobXuExample(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, g, data := loadSpec(t, filepath.Join("testdata", "xu-example", "spec.yaml"))
	want, err := sjc.Build(g, data, sjc.Params{MaxDepth: 10, MinSplit: 2})
	if err != nil {
		t.Fatal(err)
	}
	run, err := runJob(t, ctx, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(want, run.tree); d != "" {
		t.Fatalf("job tree differs from the in-process tree: %s", d)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "xu-example", "tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gt tree.Tree
	if err := gt.UnmarshalJSON(golden); err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(&gt, run.tree); d != "" {
		t.Fatalf("job tree differs from the golden tree.json: %s", d)
	}
}

// TestJobRandomSchemasEqualReference: the distributed job grows exactly the
// reference's tree (join then build) on random acyclic schemas, and its
// test accuracy is the reference's, join row for join row.
func TestJobRandomSchemasEqualReference(t *testing.T) {
	t.Parallel()
	// 50 random schemas (155 internal nodes); COHORT_LONG_TESTS=1 runs
	// the 200 this test ran before. Beside the suite 200 took 57 s: each
	// case writes every party's secrets to disk, synced.
	want := testkit.Cases(50, 200)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(12, 2026))
	done, splits := 0, 0
	for attempt := 0; done < want; attempt++ {
		rc := newRandomCase(rng)
		g, err := sjc.NewGraph(rc.spec)
		if err != nil {
			t.Fatal(err)
		}
		data := loadTables(t, rc.spec, rc.csv)
		ref, rerr := reftree.Build(g, data, rc.p)
		if rerr != nil {
			continue // an empty join: TestJobBadInput covers its error
		}
		spec := writeCase(t, rc)
		run, err := runJob(t, ctx, spec, jobtest.Options{Seed: []byte(fmt.Sprint(attempt))})
		if err != nil {
			t.Fatalf("case %d (%s, %d tables, %d parties): %v", attempt, rc.shape, len(g.Tables), len(spec.Parties), err)
		}
		if d := tree.Diff(ref, run.tree); d != "" {
			t.Fatalf("case %d (%s, %d tables, params %+v): job tree differs from the reference: %s", attempt, rc.shape, len(g.Tables), rc.p, d)
		}
		test := loadTables(t, rc.spec, rc.test)
		rc1, rt, err := reftree.Accuracy(ref, g, test)
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := run.result["test"].(map[string]any)
		if tr == nil || tr["rows"] != float64(rt) || tr["correct"] != float64(rc1) {
			t.Fatalf("case %d: test %v, reference %d of %d", attempt, run.result["test"], rc1, rt)
		}
		n, _ := run.tree.Size()
		splits += (n - 1) / 2
		done++
	}
	t.Logf("%d random schemas: job tree = reference tree (%d internal nodes), test accuracy equal", done, splits)
}
