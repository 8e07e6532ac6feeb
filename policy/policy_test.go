package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

func TestDefaultParsesAndIsConservative(t *testing.T) {
	p := Default()
	if p.Approval != ApprovalAuto || p.Floors.MinParties != 3 || p.Floors.MinK < 5 || p.Floors.MinL < 2 {
		t.Fatalf("default %+v", p)
	}
	for _, role := range roles {
		for _, never := range []wire.Disclosure{wire.DiscloseRaw, wire.DiscloseAggregate} {
			if _, ok := p.Columns[role][never]; ok {
				t.Errorf("default grants %s to role %s", never, role)
			}
		}
	}
}

func TestParseRefusesNamingTheField(t *testing.T) {
	for field, doc := range map[string]string{
		"approval":                       "approval: sometimes\n",
		"floors.min_k":                   "approval: auto\nfloors: {min_k: -1}\n",
		"columns.secret":                 "approval: auto\ncolumns: {secret: [raw]}\n",
		"tables.t.columns.c":             "approval: auto\ntables: {t: {columns: {c: [leaked]}}}\n",
		"budget":                         "approval: auto\nbudget: {epsilon: -1}\n",
		"tables.t.columns.c.generalised": "approval: auto\ntables: {t: {columns: {c: {generalised: []}}}}\n",
	} {
		_, err := Parse([]byte(doc), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := Parse([]byte("approval: auto\nunknown: 1\n"), "p.yaml"); err == nil {
		t.Error("an unknown field was accepted")
	}
}

// req asks about a signed job whose tables t, patients and x resolve to
// datasets of the same names.
func req(uses ...job.Use) *Request {
	return &Request{Job: "j2", Kind: "sum", Self: "a", Submitter: "b", Signed: true, SubmittedAt: time.Now(),
		Parties: []string{"a", "b", "c"}, Uses: uses, Declared: true,
		Datasets: map[string]string{"t": "t", "patients": "patients", "x": "x"}}
}

// withNonce sets a request's submission nonce.
func withNonce(r *Request, nonce string) *Request {
	r.Nonce = []byte(nonce)
	return r
}

// history is a History of earlier aggregates only.
func history(earlier []AggregateRecord) History {
	return History{Earlier: Records(earlier), Spent: map[string]Amount{}, Releases: map[string]int{}}
}

func agg(table, col string, parties ...string) job.Use {
	return job.Use{Table: table, Column: col, Role: job.RoleAttribute, Form: wire.DiscloseCiphertext, Parties: parties}
}

func TestCheckRules(t *testing.T) {
	p := Default()
	p.Tables = map[string]TableRules{"patients": {Columns: map[string]Grant{
		"name":      {},
		"diagnosis": {wire.DiscloseGeneralised: {Any}, wire.DiscloseSplitSummary: {"b"}},
	}}}
	p.Kinds["sjc"] = []string{"b"}
	earlier := []AggregateRecord{{Job: "j1", Table: "t", Column: "v", Parties: []string{"a", "b", "c", "d"}}}
	for _, tc := range []struct {
		name string
		req  *Request
		rule string // "" admits
	}{
		{"an aggregate of three", req(agg("t", "x", "a", "b", "c")), ""},
		{"an aggregate of two", req(agg("t", "x", "a", "b")), "floors.min_parties"},
		{"sums over two of an aggregate of four", req(func() job.Use {
			u := agg("t", "x", "a", "b", "c", "d")
			u.LeastParties, u.LeastField = 2, "params.min_group_parties"
			return u
		}()), "floors.min_parties"},
		{"sums over three of an aggregate of four", req(func() job.Use { u := agg("t", "x", "a", "b", "c", "d"); u.LeastParties = 3; return u }()), ""},
		{"one party less than an earlier one", req(agg("t", "v", "a", "b", "c")), "floors.differencing"},
		{"the same parties again", req(agg("t", "v", "a", "b", "c", "d")), ""},
		{"one party less, noised", req(func() job.Use { u := agg("t", "v", "a", "b", "c"); u.Epsilon = 0.1; return u }()), ""},
		{"k below the floor", req(job.Use{Table: "t", Column: "age", Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: 1}), "floors.min_k"},
		{"a synthetic sample of few rows", req(job.Use{Table: "t", Column: "age", Role: job.RoleAttribute, Form: wire.DiscloseSynthetic, K: 4}), "floors.min_k"},
		{"a synthetic sample", req(job.Use{Table: "t", Column: "age", Role: job.RoleAttribute, Form: wire.DiscloseSynthetic, K: 50}), ""},
		{"a synthetic sample of a sensitive column", req(job.Use{Table: "t", Column: "dx", Role: job.RoleSensitive, Form: wire.DiscloseSynthetic, K: 50}), "columns.sensitive"},
		{"sensitive without l", req(job.Use{Table: "t", Column: "dx", Role: job.RoleSensitive, Form: wire.DiscloseGeneralised, K: 10, L: 1}), "floors.min_l"},
		{"a raw column", req(job.Use{Table: "t", Column: "dx", Role: job.RoleSensitive, Form: wire.DiscloseRaw}), "columns.sensitive"},
		{"a column kept home", req(job.Use{Table: "patients", Column: "name", Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: 10}), "tables"},
		{"a column granted to one peer", req(job.Use{Table: "patients", Column: "diagnosis", Role: job.RoleAttribute, Form: wire.DiscloseSplitSummary, To: []string{"b"}}), ""},
		{"the same to everyone", req(job.Use{Table: "patients", Column: "diagnosis", Role: job.RoleAttribute, Form: wire.DiscloseSplitSummary}), "tables"},
		{"every column of a table", req(job.Use{Table: "patients", Role: job.RoleAttribute, Form: wire.DiscloseCiphertext, Parties: []string{"a", "b", "c"}}), "tables"},
		{"undeclared", &Request{Job: "j", Kind: "sum", Self: "a", Parties: []string{"a"}}, "kinds"},
		{"a kind not taken", &Request{Job: "j", Kind: "boosting", Self: "a", Parties: []string{"a"}, Declared: true}, "kinds"},
		{"a peer not allowed in a kind", &Request{Job: "j", Kind: "sjc", Self: "a", Parties: []string{"a", "b", "c"}, Declared: true}, "kinds.sjc"},
		{"over budget", req(func() job.Use { u := agg("t", "y", "a", "b", "c"); u.Epsilon = 2; return u }()), "budget"},
	} {
		r := p.Check(tc.req, history(earlier))
		switch {
		case tc.rule == "" && r != nil:
			t.Errorf("%s: refused by %v", tc.name, r)
		case tc.rule != "" && (r == nil || r.Rule != tc.rule):
			t.Errorf("%s: %v, want rule %s", tc.name, r, tc.rule)
		}
		// A refusal never tells this node's numbers.
		if r != nil && (strings.Contains(r.Reason, "floor of") || strings.Contains(r.Reason, " 5") && tc.rule == "floors.min_k") {
			t.Errorf("%s: reason %q tells the floor", tc.name, r.Reason)
		}
	}
	p.Submitters = []string{"c"}
	if r := p.Check(req(), history(nil)); r == nil || r.Rule != "submitters" {
		t.Errorf("submitter b: %v", r)
	}
	p.Submitters, p.Peers = []string{Any}, []string{"b"}
	if r := p.Check(req(), history(nil)); r == nil || r.Rule != "peers" || !strings.Contains(r.Reason, "c") {
		t.Errorf("peer c: %v", r)
	}
}

func TestStoreSurvivesReopening(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.spend("j1", "t", "v", Amount{Epsilon: 0.4}, Amount{Epsilon: 1, Delta: 1}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := s.addAggregate(AggregateRecord{Job: "j1", Table: "t", Column: "v", Parties: []string{"a", "b", "c"}, Rows: 10}); err != nil {
		t.Fatal(err)
	}
	if err := s.setApproval("j2", Decision{Verdict: Accepted, Approval: "approved"}); err != nil {
		t.Fatal(err)
	}
	again, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	aggs, spent := again.history()
	if spent["t.v"].Epsilon != 0.4 || len(aggs) != 1 || aggs[0].Rows != 10 {
		t.Fatalf("reopened: %+v %+v", aggs, spent)
	}
	if a, ok := again.approval("j2"); !ok || a.Approval != "approved" {
		t.Fatalf("approval lost: %+v", a)
	}
	if ok, _ := again.spend("j2", "t", "v", Amount{Epsilon: 0.7}, Amount{Epsilon: 1, Delta: 1}); ok {
		t.Fatal("a spend beyond the budget was taken")
	}
	if fi, err := os.Stat(journalPath(path)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state journal %v, %v", fi, err)
	}
}

func TestManualApproval(t *testing.T) {
	p := Default()
	p.Approval = ApprovalManual
	var recorded []string
	e, err := NewEnforcer(Options{Self: "a", Policy: p, Record: func(job string, d Decision) { recorded = append(recorded, job+":"+d.Verdict) }})
	if err != nil {
		t.Fatal(err)
	}
	r := req(agg("t", "x", "a", "b", "c"))
	if d := e.Admit(withNonce(r, "n1")); d.Verdict != Awaiting || d.Rule != "approval" {
		t.Fatalf("manual: %+v", d)
	}
	done := make(chan Decision)
	go func() {
		d, err := e.WaitApproval(context.Background(), r)
		if err != nil {
			t.Error(err)
		}
		done <- d
	}()
	time.Sleep(20 * time.Millisecond)
	if err := e.Approve("j2"); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Verdict != Accepted || d.Approval != "approved" {
		t.Fatalf("after approval: %+v", d)
	}
	r2 := req(agg("t", "x", "a", "b", "c"))
	r2.Job = "j3"
	e.Admit(withNonce(r2, "n2"))
	if err := e.Reject("j3", "not this quarter"); err != nil {
		t.Fatal(err)
	}
	if d := e.Admit(withNonce(r2, "n2")); d.Verdict != Refused || !strings.Contains(d.Reason, "not this quarter") {
		t.Fatalf("after rejection: %+v", d)
	}
	if strings.Join(recorded, " ") != "j2:awaiting-approval j2:accepted j3:awaiting-approval j3:refused" {
		t.Fatalf("recorded %v", recorded)
	}
	// A submission replayed as another job is refused.
	r4 := req()
	r4.Job = "j4"
	if d := e.Admit(withNonce(r4, "n2")); d.Verdict != Refused || d.Rule != "submission" {
		t.Fatalf("replayed submission: %+v", d)
	}
}

func TestReloadTakesEffect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, DefaultYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := NewEnforcer(Options{Self: "a", File: path})
	if err != nil {
		t.Fatal(err)
	}
	r := req(agg("t", "x", "a", "b", "c"))
	if d := e.Admit(withNonce(r, "n0")); d.Verdict != Accepted {
		t.Fatalf("default: %+v", d)
	}
	tighter := strings.Replace(string(DefaultYAML), "min_parties: 3", "min_parties: 4", 1)
	time.Sleep(10 * time.Millisecond) // a new modification time
	if err := os.WriteFile(path, []byte(tighter), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := e.Admit(withNonce(r, "n0")); d.Verdict != Refused || d.Rule != "floors.min_parties" {
		t.Fatalf("after reload: %+v", d)
	}
	if err := os.WriteFile(path, []byte("approval: never\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := e.Admit(withNonce(r, "n0")); d.Verdict != Refused || d.Rule != "policy" || strings.Contains(d.Reason, path) {
		t.Fatalf("broken policy: %+v", d)
	}
}

func TestGuard(t *testing.T) {
	e, err := NewEnforcer(Options{Self: "a"})
	if err != nil {
		t.Fatal(err)
	}
	ds := map[string]string{"t": "t"}
	g := e.Guard("j1", []job.Use{agg("t", "v", "a", "b", "c")}, []string{"a", "b", "c"}, ds)
	m := &wire.Message{Type: "secureagg/up", Job: "j1", Phase: "p", Round: 0}
	three := []string{"a", "b", "c"}
	if err := g.Send("b", m, wire.DiscloseCiphertext, "a", three); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		to      string
		d       wire.Disclosure
		parties []string
		rule    string
	}{
		"a form not admitted":         {"b", wire.DiscloseRaw, three, "forms"},
		"a member not of the job":     {"z", wire.DiscloseCiphertext, three, "peers"},
		"a share of a two-party step": {"b", wire.DiscloseDecryptionShare, []string{"a", "b"}, "floors.min_parties"},
	} {
		if err := g.Send(c.to, m, c.d, "a", c.parties); err == nil || !strings.Contains(err.Error(), "rule "+c.rule) || !strings.Contains(err.Error(), "refused by a's policy") {
			t.Errorf("%s: %v", name, err)
		}
	}
	step := job.Step{Job: "j1", Phase: "p"}
	if err := g.Aggregate(step, job.Aggregate{Table: "t", Column: "v", Parties: three, Rows: 100}); err != nil {
		t.Fatal(err)
	}
	g2 := e.Guard("j2", nil, three, ds)
	if err := g2.Aggregate(step, job.Aggregate{Table: "t", Column: "v", Parties: three, Rows: 101}); err == nil || !strings.Contains(err.Error(), "floors.differencing") {
		t.Errorf("one row more: %v", err)
	}
	if err := g2.Aggregate(step, job.Aggregate{Table: "t", Column: "v", Parties: three, Rows: 101, Noised: true, Sensitivity: 1, PerRow: 1}); err != nil {
		t.Errorf("one row more, noised: %v", err)
	}
	if err := g2.Spend(step, job.Spend{Table: "t", Column: "v", Epsilon: 0.6}); err != nil {
		t.Fatal(err)
	}
	if err := g2.Spend(step, job.Spend{Table: "t", Column: "v", Epsilon: 0.6}); err == nil || !strings.Contains(err.Error(), "rule budget") {
		t.Errorf("second draw beyond the budget: %v", err)
	}
}

// A node that sent a decryption share of a total refuses, within the job,
// any later aggregate of that column without a party of the total: the
// difference would be that party's input (a coordinator that "retries"
// after a decryption, or whose root reports an error after decrypting).
func TestGuardFormedAtTheShare(t *testing.T) {
	e, err := NewEnforcer(Options{Self: "a"})
	if err != nil {
		t.Fatal(err)
	}
	four, three := []string{"a", "b", "c", "d"}, []string{"a", "b", "c"}
	g := e.Guard("j1", []job.Use{agg("t", "v", four...)}, four, map[string]string{"t": "t.csv", "u": "u.csv"})
	s0 := job.Step{Job: "j1", Phase: "aggregate", Round: 0, Attempt: 1}
	if err := g.Aggregate(s0, job.Aggregate{Table: "t", Column: "v", Parties: four, Rows: 50}); err != nil {
		t.Fatal(err)
	}
	// Before any share: a re-run over fewer parties is no differencing.
	s1 := job.Step{Job: "j1", Phase: "aggregate", Round: 0, Attempt: 2}
	if err := g.Aggregate(s1, job.Aggregate{Table: "t", Column: "v", Parties: four, Rows: 50}); err != nil {
		t.Fatal(err)
	}
	share := &wire.Message{Type: "secureagg/share", Job: "j1", Phase: "aggregate", Round: 0, Attempt: 2}
	if err := g.Send("b", share, wire.DiscloseDecryptionShare, "b", four); err != nil {
		t.Fatal(err)
	}
	s2 := job.Step{Job: "j1", Phase: "aggregate", Round: 1, Attempt: 1}
	if err := g.Aggregate(s2, job.Aggregate{Table: "t", Column: "v", Parties: three, Rows: 50}); err == nil || !strings.Contains(err.Error(), "rule formed") {
		t.Fatalf("a total without d after one with d was decrypted: %v", err)
	}
	// Another column, and the same parties again, are not refused.
	if err := g.Aggregate(s2, job.Aggregate{Table: "u", Column: "v", Parties: three, Rows: 50}); err != nil {
		t.Fatal(err)
	}
	if err := g.Aggregate(s2, job.Aggregate{Table: "t", Column: "v", Parties: four, Rows: 50}); err != nil {
		t.Fatal(err)
	}
	// The record survives the session: a new guard of the job knows it.
	g2 := e.Guard("j1", nil, four, map[string]string{"t": "t.csv"})
	if err := g2.Aggregate(s2, job.Aggregate{Table: "t", Column: "v", Parties: three, Rows: 50}); err == nil {
		t.Fatal("a new session forgot the formed total")
	}
}

// Noise counts as noise only when the owner declared bounds and the spec's
// sensitivity is no smaller than they give; a dataset's exact releases are
// bounded away from the ends and counted; a column that singles out its
// rows is not published.
func TestGuardNoiseReleasesAndPublications(t *testing.T) {
	p := Default()
	p.ExactReleases = 2
	p.Tables = map[string]TableRules{"t.csv": {Bounds: map[string][2]float64{"v": {-5, 100}}}}
	e, err := NewEnforcer(Options{Self: "a", Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	three := []string{"a", "b", "c"}
	g := e.Guard("j1", nil, three, map[string]string{"t": "t.csv", "t2": "t2.csv"})
	st := job.Step{Job: "j1", Phase: "p"}
	if lo, hi, ok := g.Bounds("t", "v"); !ok || lo != -5 || hi != 100 || job.PerRow(lo, hi) != 100 {
		t.Fatalf("bounds %v %v %v", lo, hi, ok)
	}
	if _, _, ok := g.Bounds("t2", "v"); ok {
		t.Fatal("bounds of a dataset without any")
	}
	for name, c := range map[string]struct {
		a    job.Aggregate
		rule string
	}{
		"a negligible sensitivity": {job.Aggregate{Table: "t", Column: "v", Noised: true, Sensitivity: 1e-9, PerRow: 100}, "bounds"},
		"no owner bounds":          {job.Aggregate{Table: "t2", Column: "v", Noised: true, Sensitivity: 1e9}, "bounds"},
		"the owner's sensitivity":  {job.Aggregate{Table: "t", Column: "v", Noised: true, Sensitivity: 100, PerRow: 100}, ""},
	} {
		c.a.Parties = three
		err := g.Aggregate(st, c.a)
		if (c.rule == "") != (err == nil) || c.rule != "" && !strings.Contains(err.Error(), "rule "+c.rule) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]struct {
		r    job.Release
		rule string
	}{
		"the minimum":      {job.Release{Table: "t", Column: "v", Rank: 1, Rows: 100, Bracket: 10}, "floors.min_k"},
		"the maximum":      {job.Release{Table: "t", Column: "v", Rank: 100, Rows: 100, Bracket: 10}, "floors.min_k"},
		"a small bracket":  {job.Release{Table: "t", Column: "v", Rank: 50, Rows: 100, Bracket: 1}, "floors.min_k"},
		"the median":       {job.Release{Table: "t", Column: "v", Rank: 50, Rows: 100, Bracket: 10}, ""},
		"a second release": {job.Release{Table: "t", Column: "v", Rank: 40, Rows: 100, Bracket: 10}, ""},
	} {
		err := g.Release(st, c.r)
		if (c.rule == "") != (err == nil) || c.rule != "" && !strings.Contains(err.Error(), "rule "+c.rule) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The allowance of two is spent, under any name of the dataset.
	g2 := e.Guard("j2", nil, three, map[string]string{"alias": "t.csv"})
	if err := g2.Release(st, job.Release{Table: "alias", Column: "w", Rank: 50, Rows: 100, Bracket: 10}); err == nil || !strings.Contains(err.Error(), "rule exact_releases") {
		t.Fatalf("a third exact release: %v", err)
	}
	// Admitted again at a later step, a job weighs its declared releases
	// against the other jobs' only: j1's own two are left out for it.
	if mine, others := e.store.HistoryFor("j1").Releases["t.csv"], e.store.HistoryFor("j2").Releases["t.csv"]; mine != 0 || others != 2 {
		t.Fatalf("releases weighed for j1 %d, for j2 %d; want 0 and 2", mine, others)
	}
	ids := []string{"1", "2", "3", "4", "5", "6"}
	if err := g.Publish(st, job.Publication{Table: "t", Column: "id", Rows: 6, Unique: job.UniqueValues(ids)}); err == nil || !strings.Contains(err.Error(), "rule unique") {
		t.Fatalf("a unique column: %v", err)
	}
	if err := g.Publish(st, job.Publication{Table: "t", Column: "id", Rows: 6, Unique: 6, Generalised: true}); err != nil {
		t.Fatal(err)
	}
	dx := []string{"flu", "flu", "cold", "cold", "flu", "cold"}
	if err := g.Publish(st, job.Publication{Table: "t", Column: "dx", Rows: 6, Unique: job.UniqueValues(dx)}); err != nil {
		t.Fatal(err)
	}
}

// The policy decides about datasets: a table the node cannot resolve is
// refused with one answer whatever the cause, one dataset twice is
// refused, a classified column keeps its role, and a submission must be
// signed and recent.
func TestCheckDatasetsRolesAndSubmissions(t *testing.T) {
	p := Default()
	p.Tables = map[string]TableRules{"patients.csv": {Roles: map[string]string{"patient": "id", "zip": RoleQuasiIdentifier}}}
	r := req(agg("t", "v", "a", "b", "c"))
	r.Unavailable = map[string]string{"t": "table t.csv: no such file in the node's tables_dir"}
	missing := p.Check(r, history(nil))
	r.Unavailable = map[string]string{"t": "table t.csv: leaves tables_dir through a symbolic link"}
	forbidden := p.Check(r, history(nil))
	if missing == nil || forbidden == nil || missing.Reason != forbidden.Reason || strings.Contains(missing.Reason, ".csv") {
		t.Fatalf("missing %v, forbidden %v: want one answer naming no file", missing, forbidden)
	}
	r = req(agg("t", "v", "a", "b", "c"))
	r.Datasets = map[string]string{"t": "t.csv", "t_dup": "t.csv"}
	if got := p.Check(r, history(nil)); got == nil || got.Rule != "datasets" || strings.Contains(got.Reason, "t.csv") {
		t.Fatalf("one dataset twice: %v", got)
	}
	r = req(agg("p", "patient", "a", "b", "c"))
	r.Datasets = map[string]string{"p": "patients.csv"}
	if got := p.Check(r, history(nil)); got == nil || got.Rule != "tables" {
		t.Fatalf("an id summed as an attribute: %v", got)
	}
	r = req(job.Use{Table: "p", Column: "patient", Role: job.RoleSensitive, Form: wire.DiscloseGeneralised, K: 10, L: 2})
	r.Datasets = map[string]string{"p": "patients.csv"}
	if got := p.Check(r, history(nil)); got == nil || got.Rule != "tables" {
		t.Fatalf("an id published as the sensitive column: %v", got)
	}
	r = req(job.Use{Table: "p", Column: "zip", Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: 10})
	r.Datasets = map[string]string{"p": "patients.csv"}
	if got := p.Check(r, history(nil)); got != nil {
		t.Fatalf("a quasi-identifier generalised: %v", got)
	}

	e, err := NewEnforcer(Options{Self: "a", Policy: Default()})
	if err != nil {
		t.Fatal(err)
	}
	unsigned := req(agg("t", "v", "a", "b", "c"))
	unsigned.Signed = false
	if d := e.Admit(withNonce(unsigned, "u1")); d.Verdict != Refused || d.Rule != "submission" {
		t.Fatalf("unsigned: %+v", d)
	}
	old := req(agg("t", "v", "a", "b", "c"))
	old.Job, old.SubmittedAt = "j-old", time.Now().Add(-25*time.Hour)
	if d := e.Admit(withNonce(old, "u2")); d.Verdict != Refused || d.Rule != "submission" {
		t.Fatalf("a day-old submission: %+v", d)
	}
}

// A store from before datasets keyed its records and spending on the
// names specs gave; an upgraded node forgets none of it: each old record
// and spend weighs on every dataset's column of the same name.
func TestStoreMigratesNameKeyedState(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	old := `{"decisions": {}, "approvals": {}, "nonces": {"ab": "j0"},
 "aggregates": [{"job": "j1", "table": "t", "column": "v", "parties": ["a", "b", "c", "d"], "rows": 10, "time": "2026-11-01T00:00:00Z"}],
 "spent": {"t.v": {"epsilon": 0.7, "delta": 0}}}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEnforcer(Options{Self: "a", Store: s})
	if err != nil {
		t.Fatal(err)
	}
	// Differencing against the old record, under a dataset of any name.
	r := req(agg("t", "v", "a", "b", "c"))
	r.Datasets = map[string]string{"t": "renamed.csv"}
	if d := e.Admit(withNonce(r, "m1")); d.Verdict != Refused || d.Rule != "floors.differencing" {
		t.Fatalf("after the upgrade: %+v", d)
	}
	// The old spending counts: 0.7 of 1.0 is gone for every column v.
	g := e.Guard("j9", nil, []string{"a", "b", "c"}, map[string]string{"t": "renamed.csv"})
	if err := g.Spend(job.Step{Job: "j9"}, job.Spend{Table: "t", Column: "v", Epsilon: 0.5}); err == nil || !strings.Contains(err.Error(), "rule budget") {
		t.Fatalf("a spend beyond what the old store left: %v", err)
	}
	if err := g.Spend(job.Step{Job: "j9"}, job.Spend{Table: "t", Column: "v", Epsilon: 0.2}); err != nil {
		t.Fatal(err)
	}
	again, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if h := again.History(); h.LegacySpent["v"].Epsilon != 0.7 || len(h.Earlier("other.csv", "v")) != 1 || h.Spent["renamed.csv.v"].Epsilon != 0.2 {
		t.Fatalf("reopened after the migration: %+v %+v", h.LegacySpent, h.Spent)
	}
}

// A policy file written before the allowance of exact releases existed
// has the default's; an explicit 0 allows none.
func TestParseExactReleasesDefault(t *testing.T) {
	p, err := Parse([]byte("approval: auto\n"), "p.yaml")
	if err != nil || p.ExactReleases != DefaultExactReleases {
		t.Fatalf("omitted: %v, %v", p, err)
	}
	p, err = Parse([]byte("approval: auto\nexact_releases: 0\n"), "p.yaml")
	if err != nil || p.ExactReleases != 0 {
		t.Fatalf("explicit 0: %v, %v", p, err)
	}
}

// A job admitted again at a later step (the runtime admits at every step)
// weighs its declared ε against what other jobs spent, not against its own
// draws so far; another job weighs them all.
func TestBudgetLeavesTheJobsOwnDraws(t *testing.T) {
	p := Default() // ε 1 per column
	s := MemoryStore()
	for range 3 {
		if ok, err := s.spend("j2", "t", "v", Amount{Epsilon: 0.25}, p.budgetOf("t", "v")); !ok || err != nil {
			t.Fatalf("a draw within the budget: %v %v", ok, err)
		}
	}
	declared := func(job string, eps float64) *Request {
		u := agg("t", "v", "a", "b", "c")
		u.Epsilon = eps
		r := req(u)
		r.Job = job
		return r
	}
	if r := p.Check(declared("j2", 1), s.HistoryFor("j2")); r != nil {
		t.Errorf("j2 again, three of its draws spent: refused by %v", r)
	}
	if r := p.Check(declared("j3", 0.5), s.HistoryFor("j3")); r == nil || r.Rule != "budget" {
		t.Errorf("j3 after j2's 0.75: %v, want rule budget", r)
	}
	if r := p.Check(declared("j3", 0.25), s.HistoryFor("j3")); r != nil {
		t.Errorf("j3 within what is left: refused by %v", r)
	}
}

// A node whose policy state cannot be written (its disk is full) cannot
// keep a submission's nonce, so it cannot admit the job; that is its own
// failure, not a refusal by its policy: the decision carries the fault,
// whose text names the system error and never the state file's path, and
// nothing is recorded. Once the state can be written, the same job is
// admitted: the nonce that was not kept does not count as used.
func TestUnwritableStateIsAFaultNotARefusal(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	s, err := OpenStore(filepath.Join(blocker, "policy-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blocker, nil, 0o600); err != nil { // the state's directory is now a file
		t.Fatal(err)
	}
	var recorded []string
	e, err := NewEnforcer(Options{Self: "a", Policy: Default(), Store: s, Record: func(job string, d Decision) { recorded = append(recorded, job+":"+d.Verdict) }})
	if err != nil {
		t.Fatal(err)
	}
	r := withNonce(req(agg("t", "x", "a", "b", "c")), "n1")
	d := e.Admit(r)
	var stateErr *StateError
	if !errors.As(d.Fault, &stateErr) || d.Verdict == Accepted {
		t.Fatalf("unwritable state: %+v", d)
	}
	if strings.Contains(d.Fault.Error(), dir) || strings.Contains(d.Reason, "/") || !strings.Contains(d.Reason, "not a directory") {
		t.Fatalf("the fault's text %q must name the system error and no path", d.Reason)
	}
	if len(recorded) > 0 {
		t.Fatalf("a fault was recorded as a decision: %v", recorded)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if d := e.Admit(r); d.Verdict != Accepted || d.Fault != nil {
		t.Fatalf("once the state can be written: %+v", d)
	}
}
