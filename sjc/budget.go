package sjc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc/internal/spill"
	"github.com/cohortdm/cohort/wire"
)

// A party's memory budget (Kind.MemoryBudget): the bytes of Parts its
// session holds between the nodes it works on. A node's Parts are held
// when they fit beside those already held, and otherwise spilled to the
// state's spill file and read back when the level reaches the node: Xu's
// "a data partition was cached if there is free memory or otherwise
// stored on disk" (thesis §3.4.1). The rounds see the same Parts either
// way, so the tree is the same.

// ErrMemoryBudget: the party's memory budget is negative, cannot hold
// one row of a partition, or has no data dir to spill to.
var ErrMemoryBudget = errors.New("sjc: bad memory budget")

// spillDir is the job's spill directory, under its scratch, which the
// node removes when the job ends (node.JobScratchDir).
func spillDir(id string) string { return "jobs/" + id + "/sjc-spill" }

// rowBytes is what one row of a Part takes in memory with u labels.
func rowBytes(u int) int64 { return 4 + 8*int64(u) }

// partsBytes is what a node's Parts take in memory.
func partsBytes(parts []Part) int64 {
	var n int64
	for _, p := range parts {
		n += 4*int64(len(p.Rows)) + 8*int64(len(p.Cls))
	}
	return n
}

// heldBytes is what the Parts a state holds take in memory.
func heldBytes(st *state) int64 {
	var n int64
	for _, ns := range st.Nodes {
		n += partsBytes(ns.Parts)
	}
	return n
}

// checkBudget refuses a budget that cannot hold one row of a partition.
func (s *session) checkBudget(u int) error {
	if s.budget > 0 && s.budget < rowBytes(u) {
		return fmt.Errorf("%w: party %s: sjc_memory_budget holds no row of a partition (%d labels); raise it, or 0 for no budget", ErrMemoryBudget, s.p.Self(), u)
	}
	return nil
}

// addNode adds node id's Parts to next: held when they fit the budget
// beside what the session holds, else appended to next's spill file
// (created in the job's spill dir on first use; step names it).
func (s *session) addNode(step job.Step, next *state, id int32, parts []Part, counts []uint64) error {
	size := partsBytes(parts)
	if s.budget == 0 || s.held+size <= s.budget {
		next.Nodes = append(next.Nodes, nodeState{ID: id, Parts: parts})
		s.held += size
		return nil
	}
	if s.spillW == nil {
		dir, err := s.spillPath()
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%s-%d-%d", step.Phase, step.Round, step.Attempt)
		if s.spillW, err = spill.Create(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("party %s: spill a partition: %w", s.p.Self(), err)
		}
		next.Spill = name
	}
	b, err := wire.Marshal(parts)
	if err != nil {
		return fmt.Errorf("sjc: encode a partition: %w", err)
	}
	off, err := s.spillW.Append(b)
	if err != nil {
		return fmt.Errorf("party %s: spill a partition: %w", s.p.Self(), err)
	}
	next.Nodes = append(next.Nodes, nodeState{ID: id, Spilled: true, Off: off, Len: int64(len(b)), Counts: counts})
	return nil
}

// heldOrSpilled returns a node's Parts: held, or read back from its
// state's spill file.
func (s *session) heldOrSpilled(st *state, n nodeState) ([]Part, error) {
	if !n.Spilled {
		return n.Parts, nil
	}
	dir, err := s.spillPath()
	if err != nil {
		return nil, err
	}
	if !filepath.IsLocal(st.Spill) || filepath.Base(st.Spill) != st.Spill {
		return nil, fmt.Errorf("sjc: party %s: state of tree node %d names no spill file", s.p.Self(), n.ID)
	}
	b, err := spill.Read(filepath.Join(dir, st.Spill), n.Off, n.Len)
	if err != nil {
		return nil, fmt.Errorf("party %s: read back tree node %d's spilled partition: %w", s.p.Self(), n.ID, err)
	}
	var parts []Part
	if err := wire.Unmarshal(b, &parts); err != nil {
		return nil, &reworded{msg: fmt.Sprintf("party %s: tree node %d's spilled partition is unreadable", s.p.Self(), n.ID), cause: err}
	}
	return parts, nil
}

// release lets the session drop the Parts it holds of st's node id once
// a step is done with them (under a budget only: without one the state
// stays whole for a re-run). A re-run reads st back (reload).
func (s *session) release(st *state, id int32) {
	k := slices.IndexFunc(st.Nodes, func(n nodeState) bool { return n.ID == id })
	if s.budget == 0 || k < 0 || st.Nodes[k].Spilled || st.Nodes[k].Parts == nil {
		return
	}
	s.held -= partsBytes(st.Nodes[k].Parts)
	st.Nodes[k].Parts = nil
	st.partial = true
}

// spillPath is the job's spill directory in the party's data dir.
func (s *session) spillPath() (string, error) {
	sd, ok := s.p.Secrets().(job.ScratchDir)
	if !ok {
		return "", fmt.Errorf("%w: party %s: sjc_memory_budget needs a data dir to spill to", ErrMemoryBudget, s.p.Self())
	}
	return sd.Dir(spillDir(s.p.JobID()))
}

// closeSpill syncs and closes the spill file of the state being made,
// before the kept state names it.
func (s *session) closeSpill() error {
	if s.spillW == nil {
		return nil
	}
	w := s.spillW
	s.spillW = nil
	if err := w.Close(); err != nil {
		return fmt.Errorf("party %s: spill a partition: %w", s.p.Self(), err)
	}
	return nil
}

// discardOnError discards the spill file of the state a step was making
// when the step fails (*err set).
func (s *session) discardOnError(err *error) {
	if *err != nil {
		s.discardSpill()
	}
}

// discardSpill removes the spill file of a state that is not kept (its
// step failed).
func (s *session) discardSpill() {
	if s.spillW != nil {
		s.spillW.Discard()
		s.spillW = nil
	}
}

// removeSpill removes a spill file no kept state names any longer.
func (s *session) removeSpill(name string) {
	if name == "" || !filepath.IsLocal(name) || filepath.Base(name) != name {
		return
	}
	if dir, err := s.spillPath(); err == nil {
		os.Remove(filepath.Join(dir, name))
	}
}

// removeSpillDir removes the job's spill directory once no state needs
// it (the model is kept); the node removes what a failed job leaves.
func (s *session) removeSpillDir() {
	if s.budget == 0 {
		return
	}
	if sd, ok := s.p.Secrets().(job.ScratchDir); ok {
		if dir, err := sd.Dir(spillDir(s.p.JobID())); err == nil {
			os.Remove(dir) // empty by now
		}
	}
}
