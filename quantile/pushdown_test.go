package quantile

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/table"
)

// toSQLite copies each party's CSV of a consortium into an SQLite database
// beside it and points the spec at it.
func toSQLite(t *testing.T, path string, names []string) *job.Spec {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Dir(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := string(raw)
	for _, n := range names {
		tb, err := table.Open(ctx, table.Source{Path: filepath.Join(dir, n+".csv")}, "t", map[string]table.Kind{"id": table.ID, "v": table.Numeric}, table.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := table.Write(ctx, table.Source{SQLite: filepath.Join(dir, n+".db"), Table: "t"}, tb); err != nil {
			t.Fatal(err)
		}
		spec = strings.ReplaceAll(spec, "path: "+n+".csv", "source: {sqlite: "+n+".db, table: t}")
	}
	dbPath := filepath.Join(dir, "spec-sqlite.yaml")
	if err := os.WriteFile(dbPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := job.LoadSpec(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// Counted by SQLite each round, the search takes the same rounds to the
// same quantiles as from the CSV files; a table that changes while the job
// runs withdraws its party, named with why, instead of counting another
// table than the one the session opened with.
func TestCountsPushedDown(t *testing.T) {
	t.Parallel()
	path, names := consortium(t, mixed(), ", quantiles: [0.5, 0.9], precision: 0.01")
	fromCSV, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	fromDB := toSQLite(t, path, names)
	secrets := dealt(t, names)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := jobtest.Options{Secrets: secrets, Seed: make([]byte, job.SeedSize), Policy: lax()}
	want, err := jobtest.Run(ctx, Kind{}, fromCSV, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := jobtest.Run(ctx, Kind{}, fromDB, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want.Result)
	b, _ := json.Marshal(got.Result)
	if string(a) != string(b) {
		t.Fatalf("from SQLite %s, from CSV %s", b, a)
	}

	changed := names[2]
	opts.OnStep = func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind == jobtest.Committed && ev.Step.Round == 0 {
			db, err := sql.Open("sqlite", filepath.Join(filepath.Dir(path), changed+".db"))
			if err == nil {
				_, err = db.Exec(`INSERT INTO t VALUES ('new', 1)`)
				db.Close()
			}
			if err != nil {
				t.Error(err)
			}
		}
		return jobtest.Fault{}
	}
	if rep, err := jobtest.Run(ctx, Kind{}, fromDB, opts); err == nil {
		t.Fatalf("the job succeeded over a table that changed: %v", rep.Result)
	} else if !strings.Contains(err.Error(), "party "+changed+": table t changed while the job ran") {
		t.Fatalf("%v: want %s named with its changed table", err, changed)
	}
}

// gatedKind is the quantile job with one party's database counts held at
// a gate: the first round's count waits there until its context ends.
type gatedKind struct {
	Kind
	party string
	gate  *countGate
}

func (k gatedKind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	sess, err := k.Kind.Open(ctx, p)
	if s, ok := sess.(*session); ok && p.Self() == k.party {
		for i := range s.tables {
			if s.tables[i].agg != nil {
				s.tables[i].agg = gatedAgg{Aggregator: s.tables[i].agg, gate: k.gate}
			}
		}
	}
	return sess, err
}

// countGate holds the first count at thresholds until its context ends,
// as a long query is still running when the step is re-run.
type countGate struct {
	held    sync.Once
	entered chan struct{} // closed once a count waits at the gate
	ended   error         // the context's error the held count saw (read after Run)
}

type gatedAgg struct {
	table.Aggregator
	gate *countGate
}

func (a gatedAgg) CountsAtMost(ctx context.Context, col string, thresholds []float64) (int, []int, error) {
	if len(thresholds) > 0 {
		a.gate.held.Do(func() {
			close(a.gate.entered)
			<-ctx.Done()
			a.gate.ended = ctx.Err()
		})
	}
	return a.Aggregator.CountsAtMost(ctx, col, thresholds)
}

// A round re-run while a party's database is still counting (here a
// leader change; on a busy machine also a party found unreachable) ends
// that party's attempt, and its query fails with "context canceled". That
// is the attempt's failure, not the table's: the party counts again in the
// round's next attempt and the job gives the answer of a run without the
// fault. (It used to withdraw from every later attempt at once, and the
// job failed with "context canceled" in a count round.)
func TestCountCancelledByAReRunCountsAgain(t *testing.T) {
	t.Parallel()
	path, names := consortium(t, mixed(), ", quantiles: [0.5], precision: 0.5")
	spec := toSQLite(t, path, names)
	secrets := dealt(t, names)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := jobtest.Options{Secrets: secrets, Seed: make([]byte, job.SeedSize), Policy: lax()}
	want, err := jobtest.Run(ctx, Kind{}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}

	held, leader := names[2], names[0]
	gate := &countGate{entered: make(chan struct{})}
	faulted := false
	opts.OnSend = func(s jobtest.Sent) jobtest.Fault {
		// Once another party aggregates in the held party's round, wait
		// until the held party's count is at the gate, then re-elect the
		// leader: its Coordinate re-runs the round as a new attempt.
		if faulted || s.From == held || s.Message.Phase != "count" {
			return jobtest.Fault{}
		}
		select {
		case <-gate.entered:
		case <-ctx.Done():
			return jobtest.Fault{}
		}
		faulted = true
		return jobtest.Fault{Leader: leader}
	}
	got, err := jobtest.Run(ctx, gatedKind{party: held, gate: gate}, spec, opts)
	if err != nil {
		t.Fatalf("the job failed after a re-run cancelled a count: %v", err)
	}
	if !faulted || !errors.Is(gate.ended, context.Canceled) {
		t.Fatalf("the count was not cancelled by a re-run (faulted %v, count's context ended with %v)", faulted, gate.ended)
	}
	a, _ := json.Marshal(want.Result["quantiles"])
	b, _ := json.Marshal(got.Result["quantiles"])
	if string(a) != string(b) {
		t.Fatalf("after the re-run %s, without it %s", b, a)
	}
	if len(got.Leaders) < 2 {
		t.Fatalf("leaders %v: the round was not re-run by a new Coordinate", got.Leaders)
	}
}
