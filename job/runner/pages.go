package runner

import (
	"maps"
	"slices"
)

// finishedIndex lists the finished jobs of each kind and status in
// submission order, so that a page of a long list costs its rows rather
// than a walk over the whole log: a console over 100,000 jobs reads 50 ids
// and a few counts. Kind "" and status "" stand for any.
type finishedIndex struct {
	pos   map[string]int      // job id → its place in State.order
	lists map[listKey][]int   // places of finished jobs, ascending
	kinds map[string]struct{} // every kind in the log
}

type listKey struct{ kind, status string }

func newFinishedIndex() *finishedIndex {
	return &finishedIndex{pos: map[string]int{}, lists: map[listKey][]int{}, kinds: map[string]struct{}{}}
}

// submitted records a new job at place i of the order.
func (x *finishedIndex) submitted(id, kind string, i int) {
	x.pos[id] = i
	x.kinds[kind] = struct{}{}
}

// finished files a job that has ended under each list it belongs to.
// Jobs mostly end in the order they were submitted, so the insertion is
// nearly always an append.
func (x *finishedIndex) finished(id, kind, status string) {
	i := x.pos[id]
	for _, k := range []listKey{{kind, status}, {kind, ""}, {"", status}, {"", ""}} {
		l := x.lists[k]
		at, _ := slices.BinarySearch(l, i)
		x.lists[k] = slices.Insert(l, at, i)
	}
}

// rebuild indexes a restored state.
func (x *finishedIndex) rebuild(jobs map[string]*JobRecord, order []string) {
	*x = *newFinishedIndex()
	for i, id := range order {
		j := jobs[id]
		x.submitted(id, j.Kind, i)
		if j.Status != StatusRunning {
			x.finished(id, j.Kind, j.Status)
		}
	}
}

// Kinds returns every kind in the log, sorted.
func (s *State) Kinds() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.index.kinds))
}

// FinishedCounts returns how many jobs of a kind ("" for any) have
// ended, per status.
func (s *State) FinishedCounts(kind string) map[string]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]int{}
	for _, st := range []string{StatusDone, StatusFailed} {
		if n := len(s.index.lists[listKey{kind, st}]); n > 0 {
			out[st] = n
		}
	}
	return out
}

// Finished returns the ids of at most limit finished jobs of a kind and a
// status ("" for any), newest submission first, skipping the first
// offset of them.
func (s *State) Finished(kind, status string, offset, limit int) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.index.lists[listKey{kind, status}]
	if offset < 0 || limit <= 0 || offset >= len(l) {
		return nil
	}
	hi := len(l) - offset
	lo := max(0, hi-limit)
	out := make([]string, 0, hi-lo)
	for k := hi - 1; k >= lo; k-- {
		out = append(out, s.order[l[k]])
	}
	return out
}

// RunningOf returns the running jobs of a kind ("" for any) in submission
// order.
func (s *State) RunningOf(kind string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if kind == "" {
		return slices.Clone(s.running)
	}
	var out []string
	for _, id := range s.running {
		if s.jobs[id].Kind == kind {
			out = append(out, id)
		}
	}
	return out
}

// Page returns copies of at most limit jobs of a kind and a status (""
// for any; StatusRunning includes the queued and the awaiting), skipping
// the first offset of them: the running jobs first, in submission order,
// then the finished ones, newest submission first. It copies the page
// only, so a list of 100,000 jobs costs what its page holds.
func (s *State) Page(kind, status string, offset, limit int) []*JobRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if offset < 0 || limit <= 0 {
		return nil
	}
	var out []*JobRecord
	if status == "" || status == StatusRunning {
		for _, id := range s.running {
			if j := s.jobs[id]; kind == "" || j.Kind == kind {
				if offset > 0 {
					offset--
				} else if len(out) < limit {
					out = append(out, j.clone())
				}
			}
		}
		if status == StatusRunning {
			return out
		}
	}
	l := s.index.lists[listKey{kind, status}]
	for k := len(l) - 1 - offset; k >= 0 && len(out) < limit; k-- {
		out = append(out, s.jobs[s.order[l[k]]].clone())
	}
	return out
}
