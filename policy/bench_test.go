package policy

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// BenchmarkAdmit is the policy's cost per job and per step (the runtime
// asks Admit before a session opens and at every step): a job declaring
// 24 uses over three tables, checked against 1,000 earlier aggregates.
func BenchmarkAdmit(b *testing.B) {
	e, err := NewEnforcer(Options{Self: "a"})
	if err != nil {
		b.Fatal(err)
	}
	parties := []string{"a", "b", "c", "d"}
	for i := range 1000 {
		if err := e.store.addAggregate(AggregateRecord{Job: fmt.Sprintf("old%d", i), Table: "t", Column: fmt.Sprintf("c%d", i%50), Parties: parties, Rows: 100}); err != nil {
			b.Fatal(err)
		}
	}
	var uses []job.Use
	for i := range 24 {
		uses = append(uses, job.Use{Table: fmt.Sprintf("t%d", i%3), Column: fmt.Sprintf("c%d", i), Role: job.RoleAttribute,
			Form: wire.DiscloseCiphertext, Parties: parties})
	}
	req := &Request{Job: "j", Kind: "sum", Self: "a", Submitter: "b", Signed: true, SubmittedAt: time.Now(), Parties: parties,
		Uses: uses, Declared: true, Datasets: map[string]string{"t0": "t", "t1": "u", "t2": "w"}}
	for b.Loop() {
		if d := e.Admit(withNonce(req, "nonce")); d.Verdict != Accepted {
			b.Fatal(d)
		}
	}
}

// BenchmarkGuardSend is the policy's cost per message leaving a node.
func BenchmarkGuardSend(b *testing.B) {
	e, err := NewEnforcer(Options{Self: "a"})
	if err != nil {
		b.Fatal(err)
	}
	parties := []string{"a", "b", "c"}
	g := e.Guard("j", []job.Use{{Table: "t", Column: "v", Form: wire.DiscloseCiphertext, Parties: parties}}, parties, map[string]string{"t": "t"})
	m := &wire.Message{Type: "secureagg/share", Job: "j", Phase: "p"}
	for b.Loop() {
		if err := g.Send("b", m, wire.DiscloseDecryptionShare, "a", parties); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreChange times one job's typical changes to the store (a
// decision and an aggregate) on a node with a short history and on one at
// its bounds (10,000 jobs of five aggregates each): with the whole state
// rewritten on every change the second cost half a second (issue 36).
func BenchmarkStoreChange(b *testing.B) {
	for _, n := range []int{100, maxDecisions} {
		b.Run(fmt.Sprint("jobs=", n), func(b *testing.B) {
			s, err := OpenStore(filepath.Join(b.TempDir(), StateFile))
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			for i := range n {
				s.st.Decisions[fmt.Sprint("job", i)] = Decision{Verdict: Accepted, Time: now}
				for c := range 5 {
					s.st.Aggregates = append(s.st.Aggregates, AggregateRecord{Job: fmt.Sprint("job", i), Table: "tables/t.csv",
						Column: fmt.Sprint("c", c), Parties: []string{"a", "b", "c"}, Rows: 100, Time: now})
				}
			}
			s.reindex()
			if err := s.save(); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprint("new", i)
				if _, err := s.setDecision(id, Decision{Verdict: Accepted, Time: now}); err != nil {
					b.Fatal(err)
				}
				if err := s.addAggregate(AggregateRecord{Job: id, Table: "tables/t.csv", Column: "c0", Parties: []string{"a", "b", "c"}, Rows: 100, Time: now}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
