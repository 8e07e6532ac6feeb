package policy

import (
	"fmt"
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
