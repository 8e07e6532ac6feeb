package runner

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestPagesMatchAWalkOverTheLog checks the finished-job index against
// what a walk over every record gives, after applying and after a
// restore, jobs ending out of submission order.
func TestPagesMatchAWalkOverTheLog(t *testing.T) {
	s := NewState()
	kinds := []string{"sum", "quantile", "sjc"}
	for i := range 40 {
		spec := fmt.Sprintf("kind: %s\nparties: [{name: a}]\n", kinds[i%3])
		if err := s.Apply(&Entry{Op: OpSubmit, Job: fmt.Sprintf("j%02d", i), Spec: []byte(spec)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{5, 1, 2, 30, 7, 11, 0, 39, 20, 21, 22, 3, 17} { // out of order
		op := OpFinish
		if i%4 == 0 {
			op = OpFail
		}
		if err := s.Apply(&Entry{Op: op, Job: fmt.Sprintf("j%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, s *State) {
		t.Helper()
		if got := s.Kinds(); !slices.Equal(got, []string{"quantile", "sjc", "sum"}) {
			t.Errorf("kinds %v", got)
		}
		for _, kind := range append([]string{""}, kinds...) {
			want := map[string][]string{}
			var running []string
			for _, j := range s.Jobs() {
				if kind != "" && j.Kind != kind {
					continue
				}
				if j.Status == StatusRunning {
					running = append(running, j.ID)
					continue
				}
				want[j.Status] = append([]string{j.ID}, want[j.Status]...) // newest first
				want[""] = append([]string{j.ID}, want[""]...)
			}
			counts := s.FinishedCounts(kind)
			for _, st := range []string{StatusDone, StatusFailed} {
				if counts[st] != len(want[st]) {
					t.Errorf("kind %q: %d %s, want %d", kind, counts[st], st, len(want[st]))
				}
			}
			for st, ids := range want {
				for _, pg := range []struct{ off, lim int }{{0, 3}, {3, 3}, {0, 100}, {len(ids) - 1, 5}} {
					lo, hi := min(len(ids), pg.off), min(len(ids), pg.off+pg.lim)
					if got := s.Finished(kind, st, pg.off, pg.lim); !slices.Equal(got, ids[lo:hi]) {
						t.Errorf("kind %q status %q page %v: %v, want %v", kind, st, pg, got, ids[lo:hi])
					}
				}
				if got := s.Finished(kind, st, len(ids), 5); got != nil {
					t.Errorf("kind %q status %q past the end: %v", kind, st, got)
				}
			}
			if got := s.RunningOf(kind); !slices.Equal(got, running) {
				t.Errorf("kind %q running %v, want %v", kind, got, running)
			}
			checkPages(t, s, kind, map[string][]string{"": append(slices.Clone(running), want[""]...),
				StatusRunning: running, StatusDone: want[StatusDone], StatusFailed: want[StatusFailed]})
		}
	}
	t.Run("applied", func(t *testing.T) { check(t, s) })
	t.Run("restored", func(t *testing.T) {
		jobs, order := s.Snapshot()
		r := NewState()
		if err := r.Restore(maps.Clone(jobs), order); err != nil {
			t.Fatal(err)
		}
		check(t, r)
	})
}

// checkPages checks State.Page against lists, by status, of a kind's job
// ids as a walk gives them: the running first, then the finished newest
// first.
func checkPages(t *testing.T, s *State, kind string, lists map[string][]string) {
	t.Helper()
	for st, ids := range lists {
		for _, pg := range []struct{ off, lim int }{{0, 4}, {2, 4}, {0, 100}, {len(ids) - 1, 5}, {len(ids), 5}, {len(ids) + 3, 5}} {
			lo, hi := min(len(ids), max(0, pg.off)), min(len(ids), max(0, pg.off+pg.lim))
			var got []string
			for _, j := range s.Page(kind, st, pg.off, pg.lim) {
				got = append(got, j.ID)
			}
			if !slices.Equal(got, ids[lo:hi]) {
				t.Errorf("kind %q status %q page %v: %v, want %v", kind, st, pg, got, ids[lo:hi])
			}
		}
	}
	if got := s.Page(kind, "", -1, 5); got != nil {
		t.Errorf("kind %q: a negative offset gave %d jobs", kind, len(got))
	}
}

// BenchmarkFinishedPage reads what the console's jobs page reads (the
// kinds, the counts of one kind, the running jobs and one page of 50
// finished ids) from a state of n finished jobs: its cost must not grow
// with n.
//
//	go test ./job/runner -run '^$' -bench FinishedPage -benchtime 2000x
func BenchmarkFinishedPage(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		s := NewState()
		kinds := []string{"sum", "quantile", "sjc", "bicluster"}
		specs := make([][]byte, len(kinds))
		for k, kind := range kinds {
			specs[k] = []byte("kind: " + kind + "\nparties: [{name: a}]\n")
		}
		for i := range n {
			id := fmt.Sprintf("job-%07d", i)
			if err := s.Apply(&Entry{Op: OpSubmit, Job: id, Spec: specs[i%len(kinds)]}); err != nil {
				b.Fatal(err)
			}
			op := OpFinish
			if i%10 == 0 {
				op = OpFail
			}
			if err := s.Apply(&Entry{Op: op, Job: id}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			last := n / len(kinds) / 50
			for b.Loop() {
				_ = s.Kinds()
				_ = s.FinishedCounts("quantile")
				_ = s.RunningOf("quantile")
				if ids := s.Finished("quantile", StatusDone, last*50-50, 50); len(ids) != 50 {
					b.Fatalf("a page of %d ids", len(ids))
				}
			}
		})
	}
}
