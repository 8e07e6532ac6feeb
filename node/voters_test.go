package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/quantile"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

func TestVoterSet(t *testing.T) {
	cons := func(voters int, names ...string) *node.Consortium {
		c := &node.Consortium{VotersWanted: voters}
		for _, n := range names {
			c.Members = append(c.Members, node.Member{Name: n})
		}
		return c
	}
	for _, tc := range []struct {
		c    *node.Consortium
		want []string
	}{
		{cons(0, "c", "a", "b"), []string{"a", "b", "c"}},
		{cons(0, "g", "f", "e", "d", "c", "b", "a"), []string{"a", "b", "c", "d", "e"}},
		{cons(3, "g", "f", "e", "d", "c", "b", "a"), []string{"a", "b", "c"}},
		{cons(9, "b", "a"), []string{"a", "b"}},
	} {
		if got := tc.c.Voters(); !slices.Equal(got, tc.want) {
			t.Errorf("voters of %v (voters: %d): %v, want %v", tc.c.Names(), tc.c.VotersWanted, got, tc.want)
		}
	}
	bad := &node.Consortium{VotersWanted: -1, Members: []node.Member{{Name: "a", PeerID: "12D3KooWRgNR3xcGzt3Vbkyoj29tQqRSqZXo9UgHad2RGpHussYv"}}}
	if err := bad.Validate("c.yaml"); err == nil || !strings.Contains(err.Error(), "voters") {
		t.Errorf("voters: -1 accepted: %v", err)
	}
}

// writeParties writes a numeric table per party under dir (party i holds
// the values i*10+1 .. i*10+rows) and a spec for kind over all of them.
func writeParties(t testing.TB, dir string, parties []string, rows int, kind, params string) ([]byte, float64) {
	t.Helper()
	var spec strings.Builder
	fmt.Fprintf(&spec, "kind: %s\nparties:\n", kind)
	total := 0.0
	for i, p := range parties {
		var b strings.Builder
		b.WriteString("v\n")
		for r := 1; r <= rows; r++ {
			v := float64(i*10 + r)
			total += v
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64) + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, p+".csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", p, p)
	}
	fmt.Fprintf(&spec, "schema:\n  t: {v: numeric}\nparams: %s\n", params)
	return []byte(spec.String()), total
}

// In a consortium of seven, the first five by name vote and the other two
// are non-voting replicas that still apply the log and take part in jobs.
// When a voter stays down, the leader promotes the next member and demotes
// it; when it is back, it is promoted again.
func TestNonVotersAndRebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("seven nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tables := t.TempDir()
	members := names(7)
	spec, total := writeParties(t, tables, members, 3, "sum", "{column: v}")
	c, err := sim.StartCluster(ctx, t.TempDir(), members, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: tables, Setup: sim.ThresholdKeys(1024),
		Timing: node.Timing{HeartbeatMS: 600, ElectionMS: 600, VoterDownMS: 2000},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first5 := []string{"org1", "org2", "org3", "org4", "org5"}
	for _, n := range c.Running() {
		if v := n.RaftVoters(); !slices.Equal(v, first5) {
			t.Fatalf("%s: voters %v, want %v", n.Name(), v, first5)
		}
	}
	if st := c.Node("org7").Status(); !slices.Equal(st.Voters, first5) || len(st.Members) != 7 {
		t.Errorf("status of a non-voter: voters %v, members %v", st.Voters, st.Members)
	}
	// A job submitted through a non-voter, with the non-voters as parties.
	rec := submitAndWait(t, ctx, c.Node("org7"), spec)
	if rec.Status != node.StatusDone {
		t.Fatalf("sum over 7 parties: %s %s", rec.Status, rec.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(rec.Result, &res); err != nil || res["sum"] != total {
		t.Fatalf("result %s, want sum %v", rec.Result, total)
	}
	// Stop a voter that does not lead: org6 takes its place.
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := "org2"
	if leader.Name() == victim {
		victim = "org3"
	}
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(first5), func(s string) bool { return s == victim })
	want = append(want, "org6")
	slices.Sort(want)
	waitFor(t, ctx, func() bool { l, _ := c.WaitLeader(ctx); return slices.Equal(l.RaftVoters(), want) })
	t.Logf("%s down: voters %v", victim, want)
	// Back up: it is first by name again, so it votes again and org6 does not.
	if _, err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool { l, _ := c.WaitLeader(ctx); return slices.Equal(l.RaftVoters(), first5) })
}

// A consortium no larger than its voter set never demotes a voter that is
// down: there is no member to take its place, and it still counts toward
// the quorum when it comes back.
func TestNoDemotionWithoutReplacement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := sim.StartCluster(ctx, t.TempDir(), names(3), sim.ClusterOptions{
		Timing: node.Timing{HeartbeatMS: 300, ElectionMS: 300, VoterDownMS: 300},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := "org1"
	if l.Name() == victim {
		victim = "org2"
	}
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // ten times VoterDownMS, three rebalance passes
	if v := l.RaftVoters(); !slices.Equal(v, names(3)) {
		t.Fatalf("voters with %s down: %v, want all three", victim, v)
	}
}

// Figures for docs/deploy.md: election and job times of sum and quantile
// over 5 and 25 in-process members (5 voters each). Opt in, it takes
// minutes: COHORT_SCALE=1 go test ./node -run TestLargeConsortium -v
func TestLargeConsortium(t *testing.T) {
	if os.Getenv("COHORT_SCALE") == "" {
		t.Skip("set COHORT_SCALE=1 to measure 5 and 25 members")
	}
	sizes := []int{5, 25}
	if s := os.Getenv("COHORT_SCALE_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		tables := t.TempDir()
		members := names(n)
		sumSpec, total := writeParties(t, tables, members, 4, "sum", "{column: v}")
		qSpec, _ := writeParties(t, tables, members, 4, "quantile", "{column: v, quantiles: [0.5], precision: 1}")
		t0 := time.Now()
		c, err := sim.StartCluster(ctx, t.TempDir(), members, sim.ClusterOptions{
			Kinds: job.Registry{"sum": sum.Kind{}, "quantile": quantile.Kind{}}, TablesDir: tables, Setup: sim.ThresholdKeys(1024),
		})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		start := time.Since(t0)
		l, _ := c.WaitLeader(ctx)
		voters := l.RaftVoters()
		// Election: kill the leader, time until the rest agree on a new one.
		t1 := time.Now()
		old := l.Name()
		if err := c.Kill(old); err != nil {
			t.Fatal(err)
		}
		nl, err := c.WaitLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		reelect := time.Since(t1)
		if _, err := c.Restart(old); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
		times := map[string]time.Duration{}
		for kind, spec := range map[string][]byte{"sum": sumSpec, "quantile": qSpec} {
			t2 := time.Now()
			rec := submitAndWait(t, ctx, c.Node(members[n-1]), spec)
			times[kind] = time.Since(t2)
			if rec.Status != node.StatusDone {
				t.Fatalf("%s over %d members: %s", kind, n, rec.Error)
			}
			if kind == "sum" {
				var res map[string]any
				if json.Unmarshal(rec.Result, &res) != nil || res["sum"] != total {
					t.Fatalf("sum over %d: %s, want %v", n, rec.Result, total)
				}
			}
		}
		t.Logf("members=%d voters=%d start+first election=%.2fs re-election after killing leader %s=%.2fs (new %s) sum=%.2fs quantile=%.2fs",
			n, len(voters), start.Seconds(), old, reelect.Seconds(), nl.Name(), times["sum"].Seconds(), times["quantile"].Seconds())
		c.Close()
		cancel()
	}
}
