package node_test

import (
	"testing"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job/runner/runnertest"
	"github.com/cohortdm/cohort/sim"
)

// The node's messenger keeps the runtime's network contract, over real
// libp2p between two nodes on loopback and to itself.
func TestPartyConforms(t *testing.T) {
	t.Parallel()
	c := simtest.StartCluster(t, t.Context(), []string{"a", "b"}, sim.ClusterOptions{})
	defer c.Close()
	runnertest.TestParty(t, c.Node("a").Party("conformance"), c.Node("b").Party("conformance"))
}
