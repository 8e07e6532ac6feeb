package node

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

func seedCommands(f *testing.F) {
	spec := []byte("kind: sum\nparties: [{name: a}]\nparams: {column: v}\n")
	step := &job.Step{Job: "j", Phase: "sum", Attempt: 1, Parties: []string{"a"}}
	for _, c := range []*command{
		{Entry: runner.Entry{Op: runner.OpSubmit, Job: "j", Spec: spec, Time: time.Unix(1, 0)}},
		{Entry: runner.Entry{Op: runner.OpStart, Job: "j", Step: step}},
		{Entry: runner.Entry{Op: runner.OpDone, Job: "j", Record: &job.Record{Step: *step, Decision: []byte{1}}}},
		{Entry: runner.Entry{Op: runner.OpFinish, Job: "j", Result: []byte("{}")}},
		{Entry: runner.Entry{Op: opAddMember}, Member: &Member{Name: "b", PeerID: "12D3KooWRgNR3xcGzt3Vbkyoj29tQqRSqZXo9UgHad2RGpHussYv", Addrs: []string{"/ip4/127.0.0.1/tcp/1"}}},
		{Entry: runner.Entry{Op: opRemoveMember}, Member: &Member{Name: "b"}},
		{Entry: runner.Entry{Op: opAddMember}},
	} {
		b, err := wire.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzApply feeds arbitrary log entries to the state machine: it must
// refuse them with an error, never panic.
func FuzzApply(f *testing.F) {
	seedCommands(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := newFSM()
		m.Apply(&raft.Log{Type: raft.LogCommand, Index: 1, Data: data})
		_ = m.jobs.Jobs()
	})
}

// FuzzControlRequest decodes arbitrary forwarded control requests and
// checks membership changes in them against a one-member consortium: a
// malformed one is refused with an error, never a panic.
func FuzzControlRequest(f *testing.F) {
	for _, r := range []*controlRequest{
		{Op: "submit", Spec: []byte("kind: sum\n")},
		{Op: opAddMember, Member: &Member{Name: "b", PeerID: "12D3KooWRgNR3xcGzt3Vbkyoj29tQqRSqZXo9UgHad2RGpHussYv"}},
		{Op: opRemoveMember, Member: &Member{Name: "a"}},
		{Op: opStorageFault, Fault: "its Raft log cannot be written: no space left on device"},
	} {
		b, err := wire.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req controlRequest
		if wire.Unmarshal(data, &req) != nil {
			return
		}
		m := newFSM()
		m.setMembers(&Consortium{Members: []Member{{Name: "a", PeerID: "12D3KooWRgNR3xcGzt3Vbkyoj29tQqRSqZXo9UgHad2RGpHussYv"}}})
		m.mu.Lock()
		_ = m.checkMembers(req.Op, req.Member)
		m.mu.Unlock()
		faults := newMemberFaults()
		faults.note("a", req.Fault)
		if why, ok := faults.fresh("a"); !ok || len(why) > maxFaultText {
			t.Fatalf("a noted fault of %d bytes is kept as %d bytes (%v)", len(req.Fault), len(why), ok)
		}
	})
}

// FuzzRestore feeds arbitrary snapshots to the state machine.
func FuzzRestore(f *testing.F) {
	m := newFSM()
	seedCommands(f)
	snap, _ := m.Snapshot()
	var buf bytes.Buffer
	_ = snap.Persist(&discardSink{&buf})
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		m := newFSM()
		_ = m.Restore(io.NopCloser(bytes.NewReader(data)))
		_ = m.jobs.Jobs()
	})
}

// TestFSMSequence checks the state machine's rules on a normal sequence and
// on the entries it must refuse.
func TestFSMSequence(t *testing.T) {
	t.Parallel()
	m := newFSM()
	apply := func(c *command) any {
		b, err := wire.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return m.Apply(&raft.Log{Type: raft.LogCommand, Data: b})
	}
	spec := []byte("kind: sum\nparties: [{name: a}]\n")
	step := &job.Step{Job: "j", Phase: "p", Attempt: 1, Parties: []string{"a"}}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpSubmit, Job: "j", Spec: spec}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpSubmit, Job: "j", Spec: spec}}); err == nil {
		t.Error("duplicate job accepted")
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpStart, Job: "j", Step: step}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpStart, Job: "j", Step: step}}); err == nil {
		t.Error("same attempt started twice")
	}
	old := *step
	step2 := *step
	step2.Attempt = 2
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpStart, Job: "j", Step: &step2}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpDone, Job: "j", Record: &job.Record{Step: old}}}); err == nil {
		t.Error("outputs of a superseded attempt accepted")
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpDone, Job: "j", Record: &job.Record{Step: step2}}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpFinish, Job: "j", Result: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(&command{Entry: runner.Entry{Op: runner.OpFail, Job: "j", Error: "late"}}); err == nil {
		t.Error("finished job failed afterwards")
	}
	// Snapshot and restore give the same state.
	snap, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := snap.Persist(&discardSink{&buf}); err != nil {
		t.Fatal(err)
	}
	m2 := newFSM()
	if err := m2.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	j, ok := m2.jobs.Job("j")
	if !ok || j.Status != StatusDone || len(j.Steps) != 1 || j.Steps[0].Attempt != 2 {
		t.Fatalf("restored job %+v", j)
	}
}

type discardSink struct{ w io.Writer }

func (s *discardSink) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *discardSink) Close() error                { return nil }
func (s *discardSink) ID() string                  { return "test" }
func (s *discardSink) Cancel() error               { return nil }

func TestRestoreRefusesInconsistentSnapshot(t *testing.T) {
	t.Parallel()
	for _, s := range []fsmState{
		{Jobs: map[string]*JobRecord{}, Order: []string{"ghost"}},
		{Jobs: map[string]*JobRecord{"a": nil}, Order: []string{"a"}},
		{Jobs: map[string]*JobRecord{"a": {ID: "a", Steps: []*StepRecord{nil}}}, Order: []string{"a"}},
	} {
		b, err := wire.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		if err := newFSM().Restore(io.NopCloser(bytes.NewReader(b))); err == nil {
			t.Errorf("inconsistent snapshot %+v accepted", s)
		}
	}
}
