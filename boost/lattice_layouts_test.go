package boost_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// TestLayoutNodes: the class holder's grouping of a level's nodes into
// layouts, at layoutCost 256 (30 Nov 2026). With many chunks a layout
// (default_credit: 24,000 entries at 32 bins, 188 chunks at one node a
// slot) layouts of one or two nodes; with few chunks and many nodes
// (a9a's fifth and sixth levels: 32,561 entries at 2 bins, 16 chunks, 8
// and 16 nodes) one layout of them all, so that the masks and decryptions
// a layout costs stay few; with a handful of rows all nodes in one layout
// but for lattice.MaxNodes. The counts always add up to the nodes.
func TestLayoutNodes(t *testing.T) {
	t.Parallel()
	pk := dealtLattice(t, []string{"a", "b"})["a"].PublicKey
	for _, tc := range []struct {
		bins, k, entries int
		want             []int
	}{
		{32, 1, 24000, []int{1}},
		{32, 2, 24000, []int{2}},
		{32, 4, 24000, []int{2, 2}},
		{32, 16, 24000, []int{4, 4, 4, 4}},
		{2, 16, 32561, []int{16}},
		{2, 8, 32561, []int{8}},
		{2, 1, 32561, []int{1}},
		{16, 2, 90, []int{2}},
		{32, 200, 10, []int{50, 50, 50, 50}},
		{32, 300, 1, []int{60, 60, 60, 60, 60}}, // at most lattice.MaxNodes (8,192/128) a layout
	} {
		got := boost.LayoutNodes(pk, tc.bins, tc.k, tc.entries)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%d nodes of %d bins over %d entries: layouts %v, want %v", tc.k, tc.bins, tc.entries, got, tc.want)
		}
		sum := 0
		for _, n := range got {
			sum += n
		}
		if sum != tc.k || got[0] > lattice.MaxNodes(pk.Params, tc.bins) {
			t.Errorf("%d nodes: layouts %v", tc.k, got)
		}
	}
}

// TestLatticeZeroPool: the class holder's gradient encryptions take their
// encryptions of zero from its pool (LatticeCrypto.Zeros, the node's in
// the job), the pool fills again between levels (more are taken than it
// held before training, while it is paused during the class holder's
// encryptions), and the model is the one in the clear byte for byte.
func TestLatticeZeroPool(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 90)
	p := testParams()
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	crypto := latticeCrypto(t, c.g)
	const size = 2
	pool, err := lattice.NewZeroPool(context.Background(), crypto.PK, size)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	waitZeros(t, pool, size)
	crypto.Zeros = pool
	// Each training has a window per level in which the filler may run;
	// a starved machine might give it none in one training, not in three.
	// A paused filler still delivers the one it made when the pool was
	// full: more than size+1 taken means it made some between levels.
	for try := 0; try < 3 && pool.Stats().Taken <= size+1; try++ {
		got, err := boost.TrainLattice(c.g, c.data, p, crypto)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
			t.Fatalf("the model from pooled encryptions differs\n got: %s\nwant: %s", a, b)
		}
	}
	st := pool.Stats()
	t.Logf("pool: %d taken, %d computed, %d made", st.Taken, st.Computed, st.Made)
	if st.Taken <= size+1 {
		t.Fatalf("%d encryptions of zero taken from a pool of %d: it did not fill between levels", st.Taken, size)
	}
}

// waitZeros waits until p holds n encryptions of zero (the filler's
// progress is the event; the deadline only ends a hung test).
func waitZeros(t *testing.T, p *lattice.ZeroPool, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for p.Stats().Ready < n {
		if time.Now().After(deadline) {
			t.Fatalf("zero pool holds %d after 2 minutes, want %d", p.Stats().Ready, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// zeroSecrets are a data dir's Secrets that offer a pool of lattice
// encryptions of zero, as a node's do (keyring.LatticeZeroSource).
type zeroSecrets struct {
	job.Secrets
	pool *lattice.ZeroPool
}

func (s zeroSecrets) LatticeZeros() *lattice.ZeroPool { return s.pool }

// TestJobLatticeZeroPool: in the job (jobtest: real sessions, keys in each
// party's data dir) the class holder's gradient encryptions take from the
// pool its node offers (keyring.LatticeZeros), which the class holder
// resumes while the others sum, so that more are taken than it held when
// the job began; each other party's masks take from its own node's pool
// (resumed while the class holder encrypts); the model is the library's.
func TestJobLatticeZeroPool(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	p := testParams()
	p.Trees, p.Release = 2, true
	secrets := dealtSecrets(t, c.spec.PartyNames())
	addLatticeKeys(t, secrets)
	const size = 2
	pools := map[string]*lattice.ZeroPool{}
	for name, s := range secrets {
		k, err := keyring.ReadLattice(s)
		if err != nil {
			t.Fatal(err)
		}
		pool, err := lattice.NewZeroPool(context.Background(), k.PublicKey, size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		waitZeros(t, pool, size)
		pool.Pause() // as a node does while it takes part in a job
		pools[name], secrets[name] = pool, zeroSecrets{s, pool}
	}
	spec := writeSpec(t, c, "zeros.yaml", map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "release": true,
		"backend": boost.BackendLattice})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{Leader: "alice", Secrets: secrets, StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := modelOf(t, rep.Result), modelJSON(t, *want); got != w {
		t.Fatalf("the model differs from the library's\n got: %s\nwant: %s", got, w)
	}
	holder := c.g.Tables[0].Party
	for name, pool := range pools {
		st := pool.Stats()
		t.Logf("%s: %d taken, %d computed, %d made", name, st.Taken, st.Computed, st.Made)
		// A paused filler still delivers the one it made when the pool
		// was full: more than size+1 taken means it made some between levels.
		if name == holder && st.Taken <= size+1 {
			t.Errorf("the class holder took %d encryptions of zero from a pool of %d: none made between levels", st.Taken, size)
		}
		// The other parties' masks take from their pools: at least the
		// full pool the job started with. (Whether they refill while the
		// class holder encrypts depends on the machine's load: a class
		// holder encrypting 60 rows leaves them little time.)
		if name != holder && st.Taken < size {
			t.Errorf("%s, a table's party, took %d encryptions of zero for its masks from a pool of %d", name, st.Taken, size)
		}
	}
}
