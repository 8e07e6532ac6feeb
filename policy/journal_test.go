package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// journalOps makes n jobs' worth of changes: a decision, an aggregate and
// a spend of ε 0.001 on one column.
func journalOps(t *testing.T, s *Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		id := "job" + string(rune('a'+i%26)) + time.Unix(int64(i), 0).UTC().Format("150405")
		if _, err := s.setDecision(id, Decision{Verdict: Accepted, Time: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
		if err := s.addAggregate(AggregateRecord{Job: id, Table: "d", Column: "v", Parties: []string{"a", "b", "c"}, Rows: i}); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.spend(id, "d", "v", Amount{Epsilon: 0.001}, Amount{Epsilon: 100, Delta: 1}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
}

func spentOf(s *Store) float64 { return s.HistoryFor("").Spent["d.v"].Epsilon }

// TestJournalReplays: a store reopened after changes in its journal only,
// and after a compaction with changes since, holds exactly what was
// acknowledged.
func TestJournalReplays(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	s.j.every = 16 // three changes a job
	journalOps(t, s, 0, 4)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a snapshot after 4 jobs: %v", err)
	}
	for _, n := range []int{4, 4 + 16} { // journal only; compacted and more
		again, err := OpenStore(path)
		if err != nil {
			t.Fatal(err)
		}
		aggs, _ := again.history()
		if len(aggs) != n || len(again.st.Decisions) != n || !near(spentOf(again), 0.001*float64(n)) {
			t.Fatalf("reopened after %d jobs: %d aggregates, %d decisions, ε %v", n, len(aggs), len(again.st.Decisions), spentOf(again))
		}
		journalOps(t, s, n, 16)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no snapshot after %d changes: %v", 3*16, err)
	}
}

// TestJournalCrashes: a last line cut short by a crash is dropped (it was
// never acknowledged) and cut off the file, so later changes replay; a
// crash between a snapshot and the journal's truncation replays nothing
// twice (no spending counted twice); a damaged line elsewhere refuses.
func TestJournalCrashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	journalOps(t, s, 0, 5)
	jp := journalPath(path)
	f, err := os.OpenFile(jp, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":16,"op":"spend","job":"x","dataset":"d","column":"v","amou`)
	f.Close()
	s, err = OpenStore(path)
	if err != nil {
		t.Fatalf("a torn last line: %v", err)
	}
	journalOps(t, s, 5, 1)
	if s, err = OpenStore(path); err != nil || !near(spentOf(s), 0.006) {
		t.Fatalf("after a torn line and one more job: ε %v, %v", spentOf(s), err)
	}

	// Crash between snapshot and truncation: the old journal comes back.
	before, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	err = s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, before, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err = OpenStore(path); err != nil || !near(spentOf(s), 0.006) {
		t.Fatalf("after a crash between snapshot and truncation: ε %v, %v", spentOf(s), err)
	}

	// A damaged line before the last.
	damaged := bytes.Replace(before, []byte(`"op":"decision"`), []byte(`"op":"decisi`), 1)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(path); err == nil {
		t.Fatal("a damaged journal opened")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
