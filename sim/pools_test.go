package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/sim"
)

// TestClusterPools: ClusterOptions' pool sizes reach the nodes, which show
// their pools in their status (the batch's and sim.Run's nodes set both to
// none; TestBatchOneCluster).
func TestClusterPools(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name          string
		paillier, lat int
		wantLattice   int // 0: none
	}{
		{"sized", 3, 2, 2},
		{"none", -1, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
				Setup: simtest.ThresholdKeys(keyBits), RandomizerPool: tc.paillier, LatticePool: tc.lat,
			})
			for _, n := range c.Running() {
				st := n.Status()
				if tc.wantLattice == 0 {
					if st.Randomizers != nil || st.LatticeZeros != nil {
						t.Errorf("%s keeps a pool: %+v %+v", n.Name(), st.Randomizers, st.LatticeZeros)
					}
					continue
				}
				if st.LatticeZeros == nil || st.LatticeZeros.Size != tc.wantLattice {
					t.Errorf("%s: lattice zero pool %+v, want one of %d", n.Name(), st.LatticeZeros, tc.wantLattice)
				}
				if st.Randomizers == nil || st.Randomizers.Size != tc.paillier {
					t.Errorf("%s: randomizer pool %+v, want one of %d", n.Name(), st.Randomizers, tc.paillier)
				}
			}
		})
	}
}
