package boost_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
)

// TestFanoutNodes measures, over real nodes (sim.Run: libp2p, Raft, the
// default policy with floors.min_parties 2, as two organisations would
// set it, a dealt 2048-bit threshold key), the time per join row
// of one tree on a star with fan-out 10 beside the one-to-one case with as
// many join rows (BOOST_FANOUT=nodes; BOOST_ROWS join rows, 500 by
// default; BOOST_PAIRS pairs of runs, interleaved, 3 by default). A tree's
// time is its level and finish steps' (result.json's timing), without
// admission, load and PSI. docs/boost.md, "Over joins: fan-out 10".
func TestFanoutNodes(t *testing.T) {
	if os.Getenv("BOOST_FANOUT") != "nodes" {
		t.Skip("BOOST_FANOUT=nodes to measure")
	}
	n, pairs := 500, 3
	if v, err := strconv.Atoi(os.Getenv("BOOST_ROWS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("BOOST_PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	p := boost.DefaultParams()
	p.Trees = 1
	pol := policy.Default()
	pol.Floors.MinParties = 2
	for i := range pairs {
		var per [2]time.Duration
		for j, fan := range []int{1, 10} {
			c := fanoutCase(t, n, fan)
			res, err := simRunBits(t, c, p, boost.Kind{}, &capture{records: map[string]*job.Record{}}, filepath.Join(t.TempDir(), "out"), 2048, pol)
			if err != nil {
				t.Fatal(err)
			}
			tree := 0.0
			for phase, s := range res["timing"].(map[string]any) {
				if phase != "load" && phase != "psi" && phase != "admit" {
					tree += s.(float64)
				}
			}
			per[j] = time.Duration(tree * float64(time.Second) / float64(n))
			t.Logf("pair %d, fan-out %d: timing %v", i+1, fan, res["timing"])
		}
		t.Logf("pair %d: %d join rows, depth %d, one tree over real nodes: per join row %v one-to-one, %v with fan-out 10 (ratio %.2f)",
			i+1, n, p.MaxDepth, per[0], per[1], float64(per[1])/float64(per[0]))
	}
	fmt.Fprintln(os.Stderr, "load:", testkit.LoadAverage())
}
