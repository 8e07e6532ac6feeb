package sjc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// writeRepeatStar writes a star whose fact table repeats its rows: F of n
// rows (a row id, keys d1 and d2 into dimensions of dims rows, a measure
// m of ten values, the class, and a column "secret" the schema leaves
// out), so that many fact rows are alike in every column the job reads.
func writeRepeatStar(t testing.TB, dir string, n, dims int) *job.Spec {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 35))
	num := make([][]int, 2)
	for d := range 2 {
		var b strings.Builder
		b.WriteString("k,x,c\n")
		num[d] = make([]int, dims)
		for k := range dims {
			num[d][k] = rng.IntN(100)
			fmt.Fprintf(&b, "k%d,%d,c%d\n", k, num[d][k], rng.IntN(4))
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("D%d.csv", d+1)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(dir, "F.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "rid,d1,d2,m,class,secret")
	for i := range n {
		a, b, m := rng.IntN(dims), rng.IntN(dims), rng.IntN(10)
		yes := (m > 5 && num[0][a] > 40) || num[1][b] < 30
		if rng.IntN(10) == 0 {
			yes = !yes
		}
		fmt.Fprintf(w, "%d,k%d,k%d,%d,%v,s%d\n", i, a, b, m, yes, rng.IntN(1000))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return &job.Spec{
		Kind: "sjc", Dir: dir, Source: "star.yaml",
		Parties: []job.PartySpec{
			{Name: "facts", Tables: []job.TableSpec{{Name: "F", Path: "F.csv"}}},
			{Name: "dim1", Tables: []job.TableSpec{{Name: "D1", Path: "D1.csv"}}},
			{Name: "dim2", Tables: []job.TableSpec{{Name: "D2", Path: "D2.csv"}}},
		},
		Schema: map[string]map[string]string{
			"F":  {"rid": "id", "d1": "key", "d2": "key", "m": "numeric", "class": "class"},
			"D1": {"k": "key", "x": "numeric", "c": "categorical"},
			"D2": {"k": "key", "x": "numeric", "c": "categorical"},
		},
		Join: []string{"F.d1 = D1.k", "F.d2 = D2.k"},
	}
}

// rowTree is today's load-then-build: every table loaded row by row and
// the tree grown in process over one row per source record; and the test
// join rows it classifies correctly, of all, over the tables themselves
// as the test set (one row per record too).
func rowTree(t testing.TB, spec *job.Spec) (*tree.Tree, [2]uint64) {
	t.Helper()
	g, err := sjc.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]*table.Table{}
	for name, cols := range spec.Schema {
		schema := map[string]table.Kind{}
		for c, k := range cols {
			schema[c] = table.Kind(k)
		}
		if data[name], err = table.Load(filepath.Join(spec.Dir, name+".csv"), name, schema); err != nil {
			t.Fatal(err)
		}
	}
	want, err := sjc.Build(g, data, sjc.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	correct, total, err := sjc.Evaluate(want, g, data)
	if err != nil {
		t.Fatal(err)
	}
	return want, [2]uint64{correct, total}
}

// sameAccuracy fails unless the job's test result is want's.
func sameAccuracy(t testing.TB, what string, run *jobRun, want [2]uint64) {
	t.Helper()
	tr, _ := run.result["test"].(map[string]any)
	if tr == nil || tr["correct"] != float64(want[0]) || tr["rows"] != float64(want[1]) {
		t.Fatalf("%s: test %v, row by row %d of %d", what, run.result["test"], want[0], want[1])
	}
}

// sameTree fails unless got is want byte for byte (as JSON).
func sameTree(t testing.TB, what string, want, got *tree.Tree) {
	t.Helper()
	if d := tree.Diff(want, got); d != "" {
		t.Fatalf("%s: the tree differs from the row-by-row tree: %s", what, d)
	}
	a, err1 := json.Marshal(want)
	b, err2 := json.Marshal(got)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		t.Fatalf("%s: tree JSON differs (%v, %v):\n%s\n%s", what, err1, err2, a, b)
	}
}

// TestJobGroupsAlikeRows: with Kind.GroupRows (node.yaml sjc_group_rows)
// the job loads each table as its distinct rows over the columns it reads,
// with their multiplicities (CSV streamed,
// PostgreSQL grouped by the server), and grows the tree of today's
// load-then-build, over one row per record, byte for byte; its test set,
// loaded the same way, gives the same accuracy. On PostgreSQL
// each table is one GROUP BY in the party's log, selecting and grouping
// only the schema's columns but the id: the column the schema leaves out
// (kept home) and the id are grouped by nowhere.
func TestJobGroupsAlikeRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	spec := writeRepeatStar(t, dir, 6000, 12)
	// The training tables are the test set too: its rows repeat as well.
	spec.Test = map[string]string{"F": "F.csv", "D1": "D1.csv", "D2": "D2.csv"}
	want, acc := rowTree(t, spec)
	if nodes, _ := want.Size(); nodes < 5 {
		t.Fatalf("the row-by-row tree has %d nodes; the case should grow a tree", nodes)
	}
	// The fact table must repeat rows for the grouping to matter.
	d, err := table.OpenDistinct(ctx, table.Source{Path: filepath.Join(dir, "F.csv")}, "F",
		map[string]table.Kind{"rid": table.ID, "d1": table.Key, "d2": table.Key, "m": table.Numeric, "class": table.Class},
		sjc.GroupColumns(map[string]table.Kind{"rid": table.ID, "d1": table.Key, "d2": table.Key, "m": table.Numeric, "class": table.Class}), table.ReadOptions{})
	if err != nil || d.Table.NumRows() > 3000 {
		t.Fatalf("the fact table's distinct rows: %v, want at most half its 6000 rows", err)
	}

	grouped := sjc.Kind{GroupRows: sjc.GroupOn}
	run, err := runJobKind(t, ctx, grouped, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "csv", want, run.tree)
	sameAccuracy(t, "csv", run, acc)

	srv := pgtest.Start(t)
	t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
	pgSpec := *spec
	pgSpec.Parties = nil
	for _, p := range spec.Parties {
		name := p.Tables[0].Name
		all, err := table.Load(filepath.Join(dir, name+".csv"), name, nil) // "secret" too
		if err != nil {
			t.Fatal(err)
		}
		src := table.Source{PostgresEnv: "COHORT_TEST_PG", Table: strings.ToLower(name)}
		if err := table.Write(ctx, src, all); err != nil {
			t.Fatal(err)
		}
		pgSpec.Parties = append(pgSpec.Parties, job.PartySpec{Name: p.Name, Tables: []job.TableSpec{{Name: name, Source: &src}}})
	}
	var log bytes.Buffer
	run, err = runJobKind(t, ctx, grouped, &pgSpec, jobtest.Options{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "postgres", want, run.tree)
	sameAccuracy(t, "postgres", run, acc)

	queries := regexp.MustCompile(`msg="table: query pushed down".* query="([^\n]*)"`).FindAllStringSubmatch(log.String(), -1)
	groups := map[string]string{}
	for _, q := range queries {
		if strings.Contains(q[1], "secret") {
			t.Fatalf("a query names the column the schema leaves out: %s", q[1])
		}
		if m := regexp.MustCompile(`GROUP BY (.*) FROM|FROM \\"(\w+)\\" GROUP BY (.*)`).FindStringSubmatch(q[1]); m != nil {
			groups[m[2]] = m[3]
		}
	}
	want3 := map[string]string{
		"f":  `\"class\", \"class\"::text, \"d1\", \"d1\"::text, \"d2\", \"d2\"::text, \"m\", \"m\"::text`,
		"d1": `\"c\", \"c\"::text, \"k\", \"k\"::text, \"x\", \"x\"::text`,
		"d2": `\"c\", \"c\"::text, \"k\", \"k\"::text, \"x\", \"x\"::text`,
	}
	if fmt.Sprint(groups) != fmt.Sprint(want3) {
		t.Fatalf("the GROUP BY of each table %v, want %v\n%s", groups, want3, log.String())
	}
}

// sentBodies is every message a run sent but the private set
// intersections' (whose blinding is fresh each run; their sizes are
// kept), as from>to type phase/round channel: body, sorted.
func sentBodies(run *jobRun) []string {
	var out []string
	for _, s := range run.rep.Sent {
		m := s.Message
		if strings.HasPrefix(m.Type, "psi/") && m.Type != psi.TypeSize {
			continue
		}
		out = append(out, fmt.Sprintf("%s>%s %s %s/%d %s: %x", s.From, s.To, m.Type, m.Phase, m.Round, m.Channel, m.Body))
	}
	slices.Sort(out)
	return out
}

// TestJobAutoGroups: by default (GroupAuto) a party groups a table whose
// rows repeat and loads the others row by row, from the estimate its own
// log names (the fact table grouped, the dimensions of twelve distinct
// rows not, training and test set alike), grows the row-by-row tree byte
// for byte, and sends exactly what it sends loading every table row by
// row: every message but the intersections' blinded values, to the same
// party in the same step, byte for byte. The choice is kept in the job's
// scratch, so that a restarted session loads as the first did.
func TestJobAutoGroups(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	spec := writeRepeatStar(t, dir, 12000, 6)
	spec.Test = map[string]string{"F": "F.csv", "D1": "D1.csv", "D2": "D2.csv"}
	want, acc := rowTree(t, spec)
	if nodes, _ := want.Size(); nodes < 5 {
		t.Fatalf("the row-by-row tree has %d nodes; the case should grow a tree", nodes)
	}

	var log bytes.Buffer
	auto, err := runJobKind(t, ctx, sjc.Kind{}, spec, jobtest.Options{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "auto", want, auto.tree)
	sameAccuracy(t, "auto", auto, acc)
	chosen := map[string][]string{}
	for _, m := range regexp.MustCompile(`msg="sjc: distinct rows estimated" .*table=(\w+) .*how=sketch grouped=(\w+)`).FindAllStringSubmatch(log.String(), -1) {
		chosen[m[1]] = append(chosen[m[1]], m[2])
	}
	if fmt.Sprint(chosen) != "map[D1:[false false] D2:[false false] F:[true true]]" {
		t.Fatalf("the choices %v, want F grouped and not the dimensions, training and test set\n%s", chosen, log.String())
	}
	// Each party keeps its training tables' choice in the job's scratch
	// (which a node removes once the job has ended).
	for p, want := range map[string]string{"facts": `{"F":true}`, "dim1": `{"D1":false}`, "dim2": `{"D2":false}`} {
		b, err := auto.secrets[p].ReadSecret("jobs/" + auto.rep.JobID + "/sjc-grouped")
		if err != nil || string(b) != want {
			t.Errorf("party %s kept %s (%v), want %s", p, b, err, want)
		}
	}

	rows, err := runJobKind(t, ctx, sjc.Kind{GroupRows: sjc.GroupOff}, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "row by row", want, rows.tree)
	a, r := sentBodies(auto), sentBodies(rows)
	if len(a) != len(r) {
		t.Fatalf("auto sent %d messages, row by row %d", len(a), len(r))
	}
	for i := range a {
		if a[i] != r[i] {
			t.Fatalf("auto sent\n%.300s\nwhere row by row sent\n%.300s", a[i], r[i])
		}
	}
	t.Logf("%d messages alike", len(a))

	// Restarted after the first propagation, every party reopens its
	// session with the kept choice: the fact table is estimated once for
	// training (and once for the test set), and the tree is the same.
	log.Reset()
	var mu sync.Mutex
	restarted := false
	again, err := runJobKind(t, ctx, sjc.Kind{}, spec, jobtest.Options{
		Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnStep: func(ev jobtest.Event) jobtest.Fault {
			mu.Lock()
			defer mu.Unlock()
			if ev.Kind == jobtest.Committed && ev.Step.Phase == "propagate" && !restarted {
				restarted = true
				return jobtest.Fault{Restart: []string{"facts", "dim1", "dim2"}}
			}
			return jobtest.Fault{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "auto, restarted", want, again.tree)
	if n := strings.Count(log.String(), `msg="sjc: distinct rows estimated" member=facts`); !restarted || n != 2 {
		t.Fatalf("restarted %v; the fact table estimated %d times, want once for training and once for the test set", restarted, n)
	}

	// A kept choice wins: a party that finds one (here written before the
	// job, as a restarted session finds the first's) loads as it says
	// and estimates only its test set.
	log.Reset()
	secrets := map[string]job.Secrets{}
	for _, p := range spec.PartyNames() {
		secrets[p] = job.DirSecrets(filepath.Join(t.TempDir(), p))
	}
	if err := secrets["facts"].WriteSecret("jobs/kept-1/sjc-grouped", []byte(`{"F":false}`)); err != nil {
		t.Fatal(err)
	}
	kept, err := runJobKind(t, ctx, sjc.Kind{}, spec, jobtest.Options{JobID: "kept-1", Secrets: secrets,
		Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "auto, kept choice", want, kept.tree)
	if n := strings.Count(log.String(), `msg="sjc: distinct rows estimated" member=facts`); n != 1 {
		t.Fatalf("the fact table estimated %d times with a kept choice, want once (its test set)", n)
	}
}
