package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// A cluster whose options name a member to campaign has a leader as soon
// as that member's election is done, without waiting out a heartbeat
// timeout: with one of 60 s, the first election would come a minute or
// two after start, long after this test's deadline. The candidate leads.
func TestCampaignElectsAtOnce(t *testing.T) {
	t.Parallel()
	// A guard against the election that never comes, not a timing check:
	// without the campaign it would come 60–120 s after start.
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c := simtest.StartCluster(t, ctx, []string{"east", "north", "south", "west"}, sim.ClusterOptions{
		Timing:   node.Timing{HeartbeatMS: 60_000, ElectionMS: 60_000},
		Campaign: "north",
	})
	defer c.Close()
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if leader.Name() != "north" {
		t.Errorf("%s leads, not the candidate north", leader.Name())
	}
	// The campaign left the timeouts as they were.
	rc := leader.Raft().ReloadableConfig()
	if rc.HeartbeatTimeout != time.Minute || rc.ElectionTimeout != time.Minute {
		t.Errorf("after the campaign the timeouts are %v and %v, want 1m0s", rc.HeartbeatTimeout, rc.ElectionTimeout)
	}
}
