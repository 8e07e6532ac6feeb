package sim

import "testing"

// Up to 4 in-process nodes per core keep Raft's defaults; beyond that the
// timeouts grow with the crowding, so a 17-node cluster on 2 cores does not
// lose its leader while every node encrypts.
func TestCrowdedRaftMS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ nodes, cores, want int }{
		{3, 2, 0}, {8, 2, 0}, {9, 2, 1000}, {17, 2, 1800}, {17, 8, 0}, {5, 1, 1000}, {3, 0, 0},
	} {
		if got := crowdedRaftMS(tc.nodes, tc.cores); got != tc.want {
			t.Errorf("crowdedRaftMS(%d, %d) = %d, want %d", tc.nodes, tc.cores, got, tc.want)
		}
	}
}
