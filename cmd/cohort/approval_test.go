package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// cli runs one cohort command in this process.
func cli(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{format: "text", stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	cmd := a.root()
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String() + errb.String(), err
}

// The approval test deals a 1024-bit key, which paillier accepts only in
// test binaries that opt in.
func init() { testkit.SmallKeys() }

// Manual approval through the CLI: a job waits on the node whose policy
// asks a person; job list and status show whom it waits for; job approve
// there lets it run; job reject with a reason fails the next one with the
// reason and the rule; the node's ledger records each decision.
//
// One cluster serves all three steps, in this order: the ledger check
// expects exactly the approval's and then the rejection's decisions.
func TestManualApprovalThroughTheCLI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := startApprovalCluster(t, ctx)
	defer f.c.Close()
	f.checkApprove(t, ctx)
	f.checkReject(t, ctx)
	f.checkLedger(t, ctx)
}

// approvalFixture is a three-node sum cluster where org3's policy asks a
// person, with a node.yaml per node so the CLI can be pointed at each.
type approvalFixture struct {
	c      *sim.Cluster
	spec   string
	config map[string]string
}

// startApprovalCluster writes each party's one-row table and the job spec
// that sums them (1+2+3), starts the cluster and saves a CLI config per node.
func startApprovalCluster(t *testing.T, ctx context.Context) *approvalFixture {
	t.Helper()
	dir := t.TempDir()
	names := []string{"org1", "org2", "org3"}
	var spec strings.Builder
	spec.WriteString("kind: sum\nparties:\n")
	for i, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n+".csv"), []byte(fmt.Sprintf("v\n%d\n", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", n, n)
	}
	spec.WriteString("params: {column: v}\n")
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: dir, Setup: simtest.ThresholdKeys(1024),
		PolicyFor: func(name string) *policy.Policy {
			p := policy.Default()
			if name == "org3" {
				p.Approval = policy.ApprovalManual
			}
			return p
		},
	})
	config := map[string]string{}
	for _, n := range names {
		cfg := &node.Config{Name: n, DataDir: c.DataDir(n), Consortium: "consortium.yaml"}
		config[n] = filepath.Join(t.TempDir(), "node.yaml")
		if err := cfg.Save(config[n]); err != nil {
			c.Close()
			t.Fatal(err)
		}
	}
	return &approvalFixture{c: c, spec: spec.String(), config: config}
}

// submit sends the sum job through org1 and waits until org1 sees it
// awaiting org3's approval, and only org3's.
func (f *approvalFixture) submit(t *testing.T, ctx context.Context) string {
	t.Helper()
	id, err := f.c.Node("org1").Submit(ctx, []byte(f.spec))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool {
		js, ok := f.c.Node("org1").Job(id)
		return ok && js.Status == node.StatusAwaiting && strings.Join(js.Waiting, ",") == "org3"
	})
	return id
}

// checkApprove: job list and status name org3 as the one awaited, org1
// cannot approve in org3's stead, org3's approval lets the job run to the
// right sum.
func (f *approvalFixture) checkApprove(t *testing.T, ctx context.Context) {
	t.Helper()
	c, config := f.c, f.config
	id := f.submit(t, ctx)
	out, err := cli(t, ctx, "job", "list", "--config", config["org1"])
	if err != nil || !strings.Contains(out, id) || !strings.Contains(out, "awaiting-approval (org3)") {
		t.Fatalf("job list: %v\n%s", err, out)
	}
	// org2 shows the wait once it has applied the admit round's record,
	// which may be a moment after org1 has.
	waitFor(t, ctx, func() bool {
		js, ok := c.Node("org2").Job(id)
		return ok && js.Status == node.StatusAwaiting
	})
	out, err = cli(t, ctx, "job", "status", id, "--config", config["org2"])
	if err != nil || !strings.Contains(out, "waiting for org3") {
		t.Fatalf("job status: %v\n%s", err, out)
	}
	if out, err := cli(t, ctx, "job", "approve", id, "--config", config["org1"]); err == nil {
		t.Fatalf("org1 approved a job that awaits org3: %s", out)
	}
	if out, err := cli(t, ctx, "job", "approve", id, "--config", config["org3"]); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	rec, err := c.Node("org1").Wait(ctx, id)
	if err != nil || rec.Status != node.StatusDone {
		t.Fatalf("approved job: %v %s %s", err, rec.Status, rec.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(rec.Result, &res); err != nil || res["sum"] != 6.0 {
		t.Fatalf("result %s: %v", rec.Result, err)
	}
}

// checkReject: a rejection needs a reason, and the rejected job fails with
// the reason and the rule that refused it.
func (f *approvalFixture) checkReject(t *testing.T, ctx context.Context) {
	t.Helper()
	id := f.submit(t, ctx)
	if _, err := cli(t, ctx, "job", "reject", id, "--config", f.config["org3"]); err == nil {
		t.Fatal("a rejection without a reason was taken")
	}
	if out, err := cli(t, ctx, "job", "reject", id, "--reason", "not this quarter", "--config", f.config["org3"]); err != nil {
		t.Fatalf("reject: %v\n%s", err, out)
	}
	rec, err := f.c.Node("org1").Wait(ctx, id)
	if err != nil || rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "org3: rule approval: rejected at org3: not this quarter") {
		t.Fatalf("rejected job: %v %s %q", err, rec.Status, rec.Error)
	}
}

// checkLedger: org3's audit ledger holds the wait and the verdict of both
// jobs, in order, and audit --decisions shows the rejection's reason.
func (f *approvalFixture) checkLedger(t *testing.T, ctx context.Context) {
	t.Helper()
	entries, err := audit.ReadFile(filepath.Join(f.c.DataDir("org3"), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []string
	for _, e := range audit.Decisions(entries) {
		verdicts = append(verdicts, e.Decision)
	}
	if got := strings.Join(verdicts, " "); got != "awaiting-approval accepted awaiting-approval refused" {
		t.Fatalf("org3's ledger records %q", got)
	}
	out, err := cli(t, ctx, "audit", "--dir", f.c.DataDir("org3"), "--decisions")
	if err != nil || !strings.Contains(out, "not this quarter") {
		t.Fatalf("audit --decisions: %v\n%s", err, out)
	}
}

func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("timed out waiting")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
