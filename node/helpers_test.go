package node_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cohortdm/cohort/sim"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func startBenchCluster(b *testing.B) (*sim.Cluster, error) { return startBenchClusterN(b, 2) }

func startBenchClusterN(b *testing.B, n int) (*sim.Cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return sim.StartCluster(ctx, b.TempDir(), names(n), sim.ClusterOptions{})
}
