package publish

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/coherence"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
)

// pairsWithSecret writes the tid,item pairs of a CSV of baskets to an
// SQLite table with a column "secret" beside them, which the job's schema
// (tid and item) leaves home.
func pairsWithSecret(t *testing.T, csvData, db, name string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pairs.csv")
	if err := os.WriteFile(path, []byte(csvData), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := table.Load(path, name, map[string]table.Kind{"tid": table.Categorical, "item": table.Categorical})
	if err != nil {
		t.Fatal(err)
	}
	simtest.WriteWithSecret(t, context.Background(), tb, table.Source{SQLite: db, Table: name})
}

// runNode submits spec to a one-node cluster whose shop maps baskets to
// src, with max_table_rows maxRows, and returns the job's record and the
// node's log at debug level.
func runNode(t *testing.T, dir, spec string, src table.Source, maxRows int64) (*node.JobRecord, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var logged testkit.LockedBuffer
	c := simtest.StartCluster(t, ctx, []string{"shop"}, sim.ClusterOptions{
		Kinds: job.Registry{"coherence": Kind{}}, TablesDir: dir, Tables: map[string]map[string]table.Source{"shop": {"baskets": src}},
		MaxTableRows: maxRows, Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	n := c.Node("shop")
	id, err := n.Submit(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec, logged.String()
}

// TestSimSupportsWhereTheTableLives: over a real node whose shop keeps
// its baskets in SQLite (beside a column the schema leaves home), the
// item supports are counted by the database: its log at debug level holds
// the two queries, naming tid and item and never the secret column; the
// publication is the one the same baskets give from CSV. A job Theorem 3
// rules out (a private item in more than h of the baskets) is refused
// with params.h from those counts, on a node whose max_table_rows is
// below the table: the refusal comes before any load, which that node
// would have refused as too large. The same holds for a CSV and a FIMI
// file, counted by coherence's own parser.
func TestSimSupportsWhereTheTableLives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := basketsCSV(150, 11)
	pairsWithSecret(t, data, filepath.Join(dir, "shop.db"), "vault_baskets")
	if err := os.WriteFile(filepath.Join(dir, "baskets.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "baskets.dat"), []byte(basketsFIMI(150, 11)), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := "kind: coherence\nparties:\n  - name: shop\n    tables: [{name: baskets}]\nparams:\n  h: 0.6\n  k: 5\n  p: 2\n  private: [s0, s1, s2]\n"
	fromCSV, _ := runNode(t, dir, spec, table.Source{Path: "baskets.csv"}, 0)
	fromDB, log := runNode(t, dir, spec, table.Source{SQLite: "shop.db", Table: "vault_baskets"}, 0)
	if fromCSV.Status != node.StatusDone || fromDB.Status != node.StatusDone {
		t.Fatalf("CSV %s %s, SQLite %s %s", fromCSV.Status, fromCSV.Error, fromDB.Status, fromDB.Error)
	}
	var a, b map[string]any
	if err := json.Unmarshal(fromCSV.Result, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromDB.Result, &b); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"published", "suppressed", "moles_before", "transactions", "loss_items"} {
		if x, y := fmtJSON(a[k]), fmtJSON(b[k]); x != y {
			t.Fatalf("%s from SQLite %s, from CSV %s", k, y, x)
		}
	}
	queries := regexp.MustCompile(`msg="table: query pushed down".* query="([^\n]*)"`).FindAllStringSubmatch(log, -1)
	var texts []string
	for _, q := range queries {
		texts = append(texts, q[1])
		if strings.Contains(q[1], "secret") {
			t.Fatalf("a query names the column the schema leaves home: %s", q[1])
		}
	}
	if len(texts) != 2 || !strings.Contains(texts[0], `COUNT(DISTINCT \"tid\")`) ||
		!strings.HasSuffix(texts[1], `COUNT(DISTINCT \"tid\") AS REAL) FROM \"vault_baskets\" GROUP BY \"item\"`) {
		t.Fatalf("the pushed-down queries %q, want the count of transactions and the supports", texts)
	}

	// s0 is in about a sixth of the baskets: h = 0.1 rules the job out.
	ruled := strings.Replace(spec, "h: 0.6", "h: 0.1", 1)
	for _, src := range []table.Source{{SQLite: "shop.db", Table: "vault_baskets"}, {Path: "baskets.csv"}, {Path: "baskets.dat"}} {
		private := ""
		if src.Path == "baskets.dat" {
			private = strings.Replace(ruled, "[s0, s1, s2]", "[100, 101, 102]", 1)
		}
		rec, _ := runNode(t, dir, cmpOr(private, ruled), src, 100)
		if rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "params.h") || strings.Contains(rec.Error, "too large") {
			t.Fatalf("%v: %s %q, want refused by params.h before the load max_table_rows refuses", src, rec.Status, rec.Error)
		}
	}
	// The same node refuses a job the counts allow when it loads.
	rec, _ := runNode(t, dir, spec, table.Source{SQLite: "shop.db", Table: "vault_baskets"}, 100)
	if rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "max_table_rows") {
		t.Fatalf("an eligible job on a node of max_table_rows 100: %s %q", rec.Status, rec.Error)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The counts the node asked for are those of the loaded baskets.
func TestSupportsAreTheLoaded(t *testing.T) {
	dir := t.TempDir()
	data := basketsCSV(150, 11)
	pairsWithSecret(t, data, filepath.Join(dir, "shop.db"), "b")
	db, err := coherence.ReadCSV(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	agg, err := table.NewAggregator(table.Source{SQLite: filepath.Join(dir, "shop.db"), Table: "b"}, pairsSchema, table.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	n, groups, err := agg.DistinctCounts(context.Background(), "tid", "item")
	if err != nil || n != len(db.Trans) {
		t.Fatalf("%d transactions (%v), loaded %d", n, err, len(db.Trans))
	}
	sup := db.Supports()
	for _, g := range groups {
		at := slices.Index(db.Items, g.Values[0])
		if at < 0 || sup[at] != g.Count {
			t.Fatalf("item %q: %d, loaded %v", g.Values[0], g.Count, sup)
		}
	}
}
