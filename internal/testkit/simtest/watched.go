package simtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// Watched is one job run over real nodes with its kind watched at every
// node (nodewatch): the cluster, what was captured, where the ledgers
// are, and the job's id and record once it ended.
type Watched struct {
	Cluster *sim.Cluster
	Capture *nodewatch.Capture
	Audit   string // the nodes' audit ledgers, PARTY.jsonl
	ID      string
	Rec     *node.JobRecord
}

// RunWatched starts members with kind (its name in specs) watched as w at
// every node, leader campaigning at start and made to lead, submits spec
// through leader and waits, on events and for three minutes at most, for
// the job's end: what the leakage and hostile-coordinator tests over real
// nodes share. opts gives the rest (timing, policy, tables, keys); its
// KindsFor, AuditDir, Logger and Campaign are set here.
func RunWatched(tb testing.TB, members []string, leader, kind string, w nodewatch.Watch, spec []byte, opts sim.ClusterOptions) *Watched {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &Watched{Capture: &nodewatch.Capture{}, Audit: filepath.Join(tb.TempDir(), "audit")}
	opts.KindsFor, opts.AuditDir, opts.Logger, opts.Campaign = r.Capture.Registry(kind, w), r.Audit, r.Capture.Logger(), leader
	r.Cluster = StartCluster(tb, ctx, members, opts)
	if err := r.Cluster.MakeLeader(ctx, leader); err != nil {
		tb.Fatal(err)
	}
	n := r.Cluster.Node(leader)
	var err error
	if r.ID, err = n.Submit(ctx, spec); err != nil {
		tb.Fatal(err)
	}
	if r.Rec, err = n.Wait(ctx, r.ID); err != nil {
		tb.Fatal(err)
	}
	return r
}
