package hamming

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// The coordinator (east, a member with no data) is killed while the
// distance step runs, as north sends its ciphertexts: a new leader replays
// Coordinate, runs the step again as a new attempt (fresh PSI secrets, a
// fresh key), and the distance is the one in the clear. The re-run's
// messages are keyed by the new attempt, so nothing of the first run is
// decrypted under the second key.
func TestCoordinatorKilled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// north's first ciphertexts wait until east is dead, so the first
	// attempt cannot finish before the kill.
	sending, killed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	observe := func(m *wire.Message) *wire.Message {
		if m.Type == hamdist.TypeCts {
			once.Do(func() {
				close(sending)
				<-killed
			})
		}
		return m
	}
	var c nodewatch.Capture
	cl := simtest.StartCluster(t, ctx, []string{"east", "north", "south", "west"}, sim.ClusterOptions{
		KindsFor:  c.Registry("hamming", nodewatch.Watch{Kind: Kind{}, Corrupter: "north", Corrupt: observe}),
		TablesDir: exampleDir, Timing: timing, Logger: c.Logger(), Policy: policy.Default(),
	})
	if err := cl.MakeLeader(ctx, "east"); err != nil {
		t.Fatal(err)
	}
	n := cl.Node("north")
	id := submit(t, ctx, n, exampleSpec)
	select {
	case <-sending:
	case <-ctx.Done():
		t.Fatal("north never sent its ciphertexts")
	}
	err := cl.Kill("east")
	close(killed)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	var got result
	if err := json.Unmarshal(rec.Result, &got); err != nil {
		t.Fatal(err)
	}
	compared, distance := plain(t, "diagnosis", 0)
	if got.Compared != compared || got.Distance != distance {
		t.Errorf("after the failover: compared %d, distance %d; in the clear %d, %d", got.Compared, got.Distance, compared, distance)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	attempts := map[int]bool{}
	for _, s := range c.Sent {
		if s.M.Type == hamdist.TypeKey {
			attempts[s.M.Attempt] = true
		}
	}
	if len(attempts) < 2 {
		t.Errorf("keys sent in attempts %v: want the step run again", attempts)
	}
}
