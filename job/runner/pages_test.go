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
