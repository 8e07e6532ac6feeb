package node_test

import (
	"testing"

	"github.com/cohortdm/cohort/job/runner/runnertest"
	"github.com/cohortdm/cohort/sim"
)

// The node's messenger keeps the runtime's network contract, over real
// libp2p between two nodes on loopback and to itself.
func TestPartyConforms(t *testing.T) {
	c, err := sim.StartCluster(t.Context(), t.TempDir(), []string{"a", "b"}, sim.ClusterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runnertest.TestParty(t, c.Node("a").Party("conformance"), c.Node("b").Party("conformance"))
}
