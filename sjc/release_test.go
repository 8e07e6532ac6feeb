package sjc_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/tree"
)

// leafRows lists the join rows of every leaf of t.
func leafRows(t *tree.Tree) []uint64 {
	var out []uint64
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		if n.IsLeaf() {
			var r uint64
			for _, c := range n.Counts {
				r += c
			}
			out = append(out, r)
			return
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(t.Root)
	return out
}

// skeletonLeaves lists the join rows of every leaf of result.json's
// skeleton, and the ids of all its nodes.
func skeletonLeaves(t *testing.T, sk any) (rows []uint64, ids []int32) {
	m, ok := sk.(map[string]any)
	if !ok {
		t.Fatalf("skeleton node %v", sk)
	}
	ids = append(ids, int32(m["id"].(float64)))
	if _, leaf := m["leaf"]; leaf {
		var r uint64
		for _, c := range m["counts"].(map[string]any) {
			r += uint64(c.(float64))
		}
		return []uint64{r}, ids
	}
	for _, side := range []string{"left", "right"} {
		r, i := skeletonLeaves(t, m[side])
		rows, ids = append(rows, r...), append(ids, i...)
	}
	return rows, ids
}

// referenceTree is the join-then-build reference's tree for the spec's
// training tables and params.
func referenceTree(t *testing.T, spec *job.Spec) *tree.Tree {
	t.Helper()
	g, err := sjc.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sjc.ParseParams(spec)
	if err != nil {
		t.Fatal(err)
	}
	train := map[string]string{}
	for _, ps := range spec.Parties {
		for _, tb := range ps.Tables {
			train[tb.Name] = readFile(t, filepath.Join(spec.Dir, tb.Path))
		}
	}
	ref, err := reftree.Build(g, loadTables(t, spec, train), p)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestJobReleaseK: with params.release_k the job's public skeleton, its
// result and every party's kept model hold no leaf of fewer join rows than
// K (anonymity-based tree pruning of the finished tree); the tree is the
// in-process tree and the reference's with the same params, and
// result.json measures it. With K above the join's rows the job fails
// naming the param.
func TestJobReleaseK(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, full := chainCase(t, nil)
	sizes := leafRows(full)
	slices.Sort(sizes)
	k := sizes[len(sizes)/3] + 1 // a third of the leaves, or more, are too small
	spec, want := chainCase(t, map[string]any{"release_k": k})
	run, err := runJob(t, ctx, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(want, run.tree); d != "" {
		t.Fatalf("the job's tree differs from the in-process tree: %s", d)
	}
	if d := tree.Diff(referenceTree(t, spec), run.tree); d != "" {
		t.Fatalf("the job's tree differs from the reference: %s", d)
	}
	// Independently of tree.PathK: every leaf of the tree and of the
	// skeleton, and every node any party kept, is a node of the skeleton.
	for _, r := range leafRows(run.tree) {
		if r < k {
			t.Errorf("a leaf of %d join rows, release_k %d", r, k)
		}
	}
	rows, ids := skeletonLeaves(t, run.result["skeleton"])
	for _, r := range rows {
		if r < k {
			t.Errorf("a skeleton leaf of %d join rows, release_k %d", r, k)
		}
	}
	if n, _ := run.tree.Size(); n != len(ids) {
		t.Errorf("tree of %d nodes, skeleton of %d", n, len(ids))
	}
	for _, party := range spec.PartyNames() {
		b, err := run.secrets[party].ReadSecret(sjc.ModelSecret(run.rep.JobID))
		if err != nil {
			t.Fatal(err)
		}
		var mp sjc.ModelPart
		if err := json.Unmarshal(b, &mp); err != nil {
			t.Fatal(err)
		}
		for _, n := range mp.Nodes {
			if !slices.Contains(ids, n.ID) {
				t.Errorf("party %s kept node %d, which the released skeleton does not have", party, n.ID)
			}
		}
		for _, s := range mp.Splits {
			if !slices.ContainsFunc(mp.Nodes, func(n sjc.ModelNode) bool { return n.ID == s.Node && n.Table != "" }) {
				t.Errorf("party %s kept the predicate of node %d, which is not a split of the released tree", party, s.Node)
			}
		}
	}
	an := run.result["anonymity"].(map[string]any)
	rel := run.result["release"].(map[string]any)
	if uint64(an["k"].(float64)) < k || rel["pruned"].(float64) == 0 {
		t.Errorf("anonymity %v, release %v, release_k %d", an, rel, k)
	}
	fullNodes, _ := full.Size()
	if fullNodes <= len(ids) {
		t.Errorf("release pruning left %d nodes of %d", len(ids), fullNodes)
	}
	t.Logf("release_k %d: %d of %d nodes kept, anonymity %v", k, len(ids), fullNodes, an)

	// More than the join's rows: no release.
	spec.Params["release_k"] = full.Root.Counts[0] + full.Root.Counts[1] + 1
	if _, err := runJob(t, ctx, spec, jobtest.Options{}); err == nil || !strings.Contains(err.Error(), "params.release_k") {
		t.Fatalf("release_k above the join's rows: %v", err)
	}
}

// TestJobReleaseDiversity: with params.release_l 2 and release_c 30 every
// leaf of the released tree has its majority class below 30 times the
// other class's rows (checked here apart from tree.Requirement), the
// tree is the reference's with the same params, and the result says
// the requirement; params.release_l without release_c, and release_l 1,
// are refused naming the field.
func TestJobReleaseDiversity(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, full := chainCase(t, nil) // its check that the tree is large enough holds without diversity
	const c = 30.0                  // (the chain's leaves are mostly pure: c 15 leaves only the root)
	spec.Params = map[string]any{"release_l": 2, "release_c": c}
	run, err := runJob(t, ctx, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(referenceTree(t, spec), run.tree); d != "" {
		t.Fatalf("the job's tree differs from the reference: %s", d)
	}
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		if !n.IsLeaf() {
			walk(n.Left)
			walk(n.Right)
			return
		}
		hi, lo := max(n.Counts[0], n.Counts[1]), min(n.Counts[0], n.Counts[1])
		if !(float64(hi) < c*float64(lo)) {
			t.Errorf("a released leaf of counts %v is not (%v, 2)-diverse", n.Counts, c)
		}
	}
	walk(run.tree.Root)
	rel := run.result["release"].(map[string]any)
	if rel["l"].(float64) != 2 || rel["c"].(float64) != c || rel["pruned"].(float64) == 0 {
		t.Errorf("release %v", rel)
	}
	fn, _ := full.Size()
	n, _ := run.tree.Size()
	t.Logf("(%v, 2)-diversity: %d of %d nodes kept", c, n, fn)
	for _, bad := range []map[string]any{{"release_l": 2}, {"release_l": 1, "release_c": 30.0}, {"release_c": 2.0}} {
		field := "params.release_c"
		if bad["release_l"] == 1 {
			field = "params.release_l"
		}
		spec.Params = bad
		if _, err := runJob(t, ctx, spec, jobtest.Options{}); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params %v: %v, want an error naming %s", bad, err, field)
		}
	}
}

// TestReleaseKRealData measures the accuracy anonymity-based release
// pruning costs on the real data (Mondial, breast and, when prepared,
// credit): for each K the in-process tree (the job's, TestJobReleaseK),
// its leaves and smallest leaf, and the test accuracy over test join rows;
// every leaf holds at least K join rows. Figures: docs/sjc.md.
func TestReleaseKRealData(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"mondial/spec.yaml", "breast/spec.yaml", "credit/spec.yaml"} {
		path := filepath.Join("..", "examples", "sjc-real", name)
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "data")); err != nil {
			t.Logf("%s: no data (examples/sjc-real/prepare.py writes it)", name)
			continue
		}
		spec, g, data := loadSpec(t, path)
		test := map[string]string{}
		for tb, f := range spec.Test {
			test[tb] = readFile(t, filepath.Join(spec.Dir, f))
		}
		td := loadTables(t, spec, test)
		for i, k := range []uint64{0, 2, 5, 10, 20, 50, 100, 10, 10} {
			p, err := sjc.ParseParams(spec)
			if err != nil {
				t.Fatal(err)
			}
			p.ReleaseK = k
			if i >= 7 { // with (c, 2)-diversity, c 10 and 4
				p.ReleaseL, p.ReleaseC = 2, []float64{10, 4}[i-7]
			}
			tr, err := sjc.Build(g, data, p)
			if err != nil && !errors.Is(err, tree.ErrAnonymity) {
				t.Fatal(err)
			}
			if errors.Is(err, tree.ErrAnonymity) {
				t.Logf("%s: release_k %d, l %d, c %v: no tree meets it", name, k, p.ReleaseL, p.ReleaseC)
				continue
			}
			if got := tr.PathK(); got < k {
				t.Fatalf("%s, K %d: a leaf of %d join rows", name, k, got)
			}
			c, n, err := sjc.Evaluate(tr, g, td)
			if err != nil {
				t.Fatal(err)
			}
			nodes, leaves := tr.Size()
			if p.ReleaseL >= 2 && !(tr.DiversityC(2) < p.ReleaseC) {
				t.Fatalf("%s: a leaf is not (%v, 2)-diverse", name, p.ReleaseC)
			}
			t.Logf("%s: release_k %3d, release_c %2v: %3d nodes, %3d leaves, smallest leaf %4d join rows, (c, 2)-diversity c %.3g; test %d of %d join rows (%.2f%%)",
				name, k, p.ReleaseC, nodes, leaves, tr.PathK(), tr.DiversityC(2), c, n, 100*float64(c)/float64(n))
		}
	}
}
