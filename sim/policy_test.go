package sim_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize/onetable"
	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/wire"
)

// hostile is four organisations' nodes under the default policy (org2's
// keeps one column home), each with a table t of a column v whose values
// are distinctive, and a member that submits whatever it likes.
type hostile struct {
	c   *sim.Cluster
	dir string
}

const secretValue = 7331.25 // in every party's table: must never reach a log, a ledger or an error

func startHostile(t *testing.T, ctx context.Context) *hostile {
	t.Helper()
	dir := t.TempDir()
	names := []string{"org1", "org2", "org3", "org4"}
	for i, n := range names {
		csv := fmt.Sprintf("id,v,w\n1,%v,1\n2,%d,2\n", secretValue, 10*(i+1))
		if err := os.WriteFile(filepath.Join(dir, n+".csv"), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}, "anonymize": onetable.Kind{}}, TablesDir: dir,
		Setup: simtest.ThresholdKeys(keyBits), Timing: node.Timing{SendMS: 5000, StepMS: 60000},
		PolicyFor: func(name string) *policy.Policy {
			// Rules are about datasets (the file inside tables_dir), never
			// the name a spec gives: every organisation bounds v, so that
			// it can be noised, and org2 keeps w home.
			rules := policy.TableRules{Bounds: map[string][2]float64{"v": {0, 10000}}}
			if name == "org2" {
				rules.Columns = map[string]policy.Grant{"w": {}}
			}
			p := policy.Default()
			p.Tables = map[string]policy.TableRules{name + ".csv": rules}
			return p
		},
	})
	return &hostile{c: c, dir: dir}
}

// sumSpec is a sum of col over parties, with extra params.
func sumSpec(col string, parties []string, extra string) []byte {
	return sumSpecAs("t", col, parties, extra)
}

// sumSpecAs is sumSpec with the parties' tables named table in the spec.
func sumSpecAs(table, col string, parties []string, extra string) []byte {
	var b strings.Builder
	b.WriteString("kind: sum\nparties:\n")
	for _, p := range parties {
		fmt.Fprintf(&b, "  - name: %s\n    tables: [{name: %s, path: %s.csv}]\n", p, table, p)
	}
	fmt.Fprintf(&b, "schema:\n  %s: {id: id, v: numeric, w: numeric}\nparams: {column: %s%s}\n", table, col, extra)
	return []byte(b.String())
}

// run submits a spec as org1 and waits for the job to end.
func (h *hostile) run(t *testing.T, ctx context.Context, spec []byte) *node.JobRecord {
	t.Helper()
	n := h.c.Node("org1")
	id, err := n.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// refused checks that a job failed, refused by each of the named nodes'
// policies under rule.
func refused(t *testing.T, rec *node.JobRecord, rule string, nodes ...string) {
	t.Helper()
	if rec.Status != node.StatusFailed {
		t.Fatalf("job %s: the hostile job ran", rec.Status)
	}
	all := rec.Error + fmt.Sprint(rec.Failures)
	for _, n := range nodes {
		if !strings.Contains(all, n) || !strings.Contains(all, "rule "+rule) {
			t.Errorf("failure %q names neither %s nor rule %s", all, n, rule)
		}
	}
}

// TestHostileMember: with the default policy, a member cannot make another
// organisation's node disclose what the policy keeps: k = 1 and k below
// the floor, a column kept home, a sum of two, a sum that differs by one
// party from an earlier one (unless noised), and noised sums beyond the
// budget are all refused, naming the node and the rule; no log, snapshot
// or ledger holds a value.
func TestHostileMember(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := startHostile(t, ctx)
	all := []string{"org1", "org2", "org3", "org4"}

	// A publication with k = 1 is no anonymity: the kind refuses it at
	// submission; k = 3 is anonymous but below every node's floor.
	pub := func(k int) []byte {
		return []byte(fmt.Sprintf("kind: anonymize\nparties: [{name: org3, tables: [{name: t, path: org3.csv}]}]\n"+
			"taxonomies: {id: tax.yaml}\nparams: {algorithm: mondrian, requirements: [{qid: [id], k: %d}]}\n", k))
	}
	tax := "column: id\nnumeric: true\nroot: {label: \"[0-9]\", lo: 0, hi: 9}\n"
	if err := os.WriteFile(filepath.Join(h.dir, "tax.yaml"), []byte(tax), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.Node("org1").Submit(ctx, pub(1)); err == nil || !strings.Contains(err.Error(), "params.requirements[0].k") {
		t.Errorf("k = 1 submitted: %v", err)
	}
	refused(t, h.run(t, ctx, pub(3)), "floors.min_k", "org3")

	// A column org2 keeps home.
	refused(t, h.run(t, ctx, sumSpec("w", all, "")), "tables", "org2")

	// Two parties: each would learn the other's input.
	refused(t, h.run(t, ctx, sumSpec("v", []string{"org1", "org3"}, "")), "floors.min_parties", "org1", "org3")

	// A sum of four, then of three: the difference is org4's input.
	if rec := h.run(t, ctx, sumSpec("v", all, "")); rec.Status != node.StatusDone {
		t.Fatalf("the sum of four: %s", rec.Error)
	}
	three := []string{"org1", "org2", "org3"}
	refused(t, h.run(t, ctx, sumSpec("v", three, "")), "floors.differencing", "org1", "org2", "org3")

	// Noised, it runs and spends; a second draw beyond the budget of 1.0
	// is refused.
	noised := ", noise: {mechanism: laplace, epsilon: 0.6, sensitivity: 10000}"
	if rec := h.run(t, ctx, sumSpec("v", three, noised)); rec.Status != node.StatusDone {
		t.Fatalf("the noised sum of three: %s", rec.Error)
	}
	refused(t, h.run(t, ctx, sumSpec("v", three, noised)), "budget", "org1")
	show, err := h.c.Node("org1").Policy().Show()
	if err != nil || show.Spent["org1.csv.v"].Epsilon != 0.6 {
		t.Fatalf("org1 spent %+v, %v", show, err)
	}

	// Nothing of the parties' values reached any log, ledger or error.
	h.noValueAnywhere(t)
}

// noValueAnywhere checks every node's Raft log and snapshots, and its
// ledger, for the distinctive cell value, and the ledgers for forms the
// jobs were not admitted for.
func (h *hostile) noValueAnywhere(t *testing.T) {
	t.Helper()
	needle := []byte(fmt.Sprint(secretValue))
	// As msgpack writes a float64 (0xcb, then big-endian): a value in a
	// log entry is binary, not text.
	packed := binary.BigEndian.AppendUint64([]byte{0xcb}, math.Float64bits(secretValue))
	for _, name := range h.c.Names {
		dd := h.c.DataDir(name)
		simtest.RaftFiles(t, h.c, name, func(path string, b []byte) {
			if bytes.Contains(b, needle) || bytes.Contains(b, packed) {
				t.Errorf("%s's %s holds a cell value", name, path)
			}
		})
		entries, err := audit.ReadFile(filepath.Join(dd, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		decisions := 0
		for _, e := range entries {
			switch wire.Disclosure(e.Disclosure) {
			case wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DisclosePublicResult, wire.DiscloseControl:
			default:
				t.Errorf("%s disclosed %s (%s)", name, e.Disclosure, e.Type)
			}
			if e.Type == audit.DecisionType {
				decisions++
				if strings.Contains(e.Reason, string(needle)) {
					t.Errorf("%s's decision names a value: %s", name, e.Reason)
				}
			}
		}
		if decisions == 0 {
			t.Errorf("%s's ledger records no policy decision", name)
		}
	}
}

// TestHostileMemberRenames: the policy decides about datasets, so what a
// spec calls a table changes nothing (issue 30, findings 1 to 4): the same
// files under a new name are differenced against the old name's sums, keep
// their column rules and their spent budget; one file under two names in a
// job is refused; noise the owner did not size is no noise; and a unique id
// named the sensitive column is not published.
func TestHostileMemberRenames(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := startHostile(t, ctx)
	all := []string{"org1", "org2", "org3", "org4"}
	three := []string{"org2", "org3", "org4"}

	// A sum of three under t, then of four under t_alias: the difference
	// would be org1's input.
	if rec := h.run(t, ctx, sumSpecAs("t", "v", three, "")); rec.Status != node.StatusDone {
		t.Fatalf("the sum of three: %s", rec.Error)
	}
	refused(t, h.run(t, ctx, sumSpecAs("t_alias", "v", all, "")), "floors.differencing", "org2", "org3", "org4")

	// org2 keeps w home, whatever the spec calls the table.
	refused(t, h.run(t, ctx, sumSpecAs("t_alias", "w", all, "")), "tables", "org2")

	// One file under two names: its rows would count twice, and the
	// difference from the plain sum would be org1's input.
	twice := strings.Replace(string(sumSpec("v", all, "")), "tables: [{name: t, path: org1.csv}]",
		"tables: [{name: t, path: org1.csv}, {name: t_dup, path: org1.csv}]", 1)
	twice = strings.Replace(twice, "schema:\n", "schema:\n  t_dup: {id: id, v: numeric, w: numeric}\n", 1)
	refused(t, h.run(t, ctx, []byte(twice)), "datasets", "org1")

	// Noise of negligible size is not noise: the differencing rule holds.
	tiny := ", noise: {mechanism: laplace, epsilon: 0.01, sensitivity: 1.0e-9}"
	refused(t, h.run(t, ctx, sumSpecAs("t2", "v", all, tiny)), "bounds", "org2", "org3", "org4")

	// The budget follows the dataset: spent under t, gone under t_alias.
	noised := ", noise: {mechanism: laplace, epsilon: 0.6, sensitivity: 10000}"
	if rec := h.run(t, ctx, sumSpecAs("t", "v", all, noised)); rec.Status != node.StatusDone {
		t.Fatalf("the noised sum: %s", rec.Error)
	}
	refused(t, h.run(t, ctx, sumSpecAs("t_alias", "v", all, noised)), "budget", "org1")

	// A unique id as the sensitive column with l = 2: distinct 2-diversity
	// holds trivially, and every id would be published as it is.
	tax := "column: w\nnumeric: true\nroot: {label: \"[0-9]\", lo: 0, hi: 9}\n"
	if err := os.WriteFile(filepath.Join(h.dir, "taxw.yaml"), []byte(tax), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows strings.Builder
	rows.WriteString("id,v,w\n")
	for i := range 20 {
		fmt.Fprintf(&rows, "%d,1,%d\n", 1000+i, i%2)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "patients.csv"), []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	unique := "kind: anonymize\nparties: [{name: org3, tables: [{name: t, path: patients.csv}]}]\n" +
		"taxonomies: {w: taxw.yaml}\nparams: {algorithm: mondrian, requirements: [{qid: [w], k: 5}], sensitive: id, l: 2}\n"
	refused(t, h.run(t, ctx, []byte(unique)), "unique", "org3")

	h.noValueAnywhere(t)
}
