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

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/quantile"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

func TestVoterSet(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	if testing.Short() {
		t.Skip("seven nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tables := t.TempDir()
	members := names(7)
	spec, total := writeParties(t, tables, members, 3, "sum", "{column: v}")
	c := simtest.StartCluster(t, ctx, members, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: tables, Setup: simtest.ThresholdKeys(keyBits),
		Timing: node.Timing{HeartbeatMS: 600, ElectionMS: 600, VoterDownMS: 2000},
	})
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
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names(3), sim.ClusterOptions{
		Timing: node.Timing{HeartbeatMS: 300, ElectionMS: 300, VoterDownMS: 300},
	})
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

// voterCluster is an in-process consortium like sim's, but with the
// consortium file's voters: set, so that all-voter and small-voter-set
// consortia of one size can be compared.
type voterCluster struct {
	cons  *node.Consortium
	cfgs  map[string]*node.Config
	nodes map[string]*node.Node
	kinds job.Registry
}

func startVoterCluster(t *testing.T, ctx context.Context, members []string, voters int, tables string, kinds job.Registry) *voterCluster {
	t.Helper()
	install, err := simtest.ThresholdKeys(keyBits)(members)
	if err != nil {
		t.Fatal(err)
	}
	// The timeouts sim gives a crowded machine: 200 ms per node per core.
	raftMS := max(400, 200*((len(members)+1)/2))
	vc := &voterCluster{cons: &node.Consortium{VotersWanted: voters}, cfgs: map[string]*node.Config{}, nodes: map[string]*node.Node{}, kinds: kinds}
	dir := t.TempDir()
	for _, name := range members {
		data := filepath.Join(dir, name)
		if _, _, err := node.Init(name, data, nil); err != nil {
			t.Fatal(err)
		}
		if err := install(name, data); err != nil {
			t.Fatal(err)
		}
		cfg := &node.Config{Name: name, DataDir: data, TablesDir: tables, Listen: []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"},
			Timing: node.Timing{HeartbeatMS: raftMS, ElectionMS: raftMS}}
		n, err := node.New(node.Options{Config: cfg, Kinds: kinds, Policy: policy.Permissive()})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Listen = n.Addrs()
		vc.cfgs[name], vc.nodes[name] = cfg, n
		vc.cons.Members = append(vc.cons.Members, node.Member{Name: name, PeerID: n.PeerID().String(), Addrs: n.Addrs()})
	}
	t.Cleanup(vc.close)
	for _, name := range members {
		if err := vc.nodes[name].Start(vc.cons); err != nil {
			t.Fatal(err)
		}
	}
	vc.waitLeader(t, ctx)
	return vc
}

func (vc *voterCluster) close() {
	for _, n := range vc.nodes {
		n.Close()
	}
}

// waitLeader waits until every running node names the same leader.
func (vc *voterCluster) waitLeader(t *testing.T, ctx context.Context) *node.Node {
	t.Helper()
	for {
		leader, agree := "", true
		for _, n := range vc.nodes {
			l := n.Leader()
			if l == "" || (leader != "" && l != leader) {
				agree = false
				break
			}
			leader = l
		}
		if agree && vc.nodes[leader] != nil {
			return vc.nodes[leader]
		}
		select {
		case <-ctx.Done():
			t.Fatal("no leader agreed")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (vc *voterCluster) kill(name string) {
	vc.nodes[name].Close()
	delete(vc.nodes, name)
}

func (vc *voterCluster) restart(t *testing.T, name string) {
	t.Helper()
	n, err := node.New(node.Options{Config: vc.cfgs[name], Kinds: vc.kinds, Policy: policy.Permissive()})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(vc.cons); err != nil {
		n.Close()
		t.Fatal(err)
	}
	vc.nodes[name] = n
}

// Figures for docs/deploy.md: start-up and election, re-election after the
// leader is killed, and sum and quantile job times, for 5 members (all
// voting), 25 members with 5 voters, and 25 members all voting. Opt in, it
// takes a minute or two: COHORT_SCALE=1 go test ./node -run TestLargeConsortium -v
func TestLargeConsortium(t *testing.T) {
	t.Parallel()
	if os.Getenv("COHORT_SCALE") == "" {
		t.Skip("set COHORT_SCALE=1 to measure 5 and 25 members")
	}
	for _, tc := range []struct{ members, voters int }{{5, 5}, {25, 5}, {25, 25}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		tables := t.TempDir()
		members := names(tc.members)
		sumSpec, total := writeParties(t, tables, members, 4, "sum", "{column: v}")
		qSpec, _ := writeParties(t, tables, members, 4, "quantile", "{column: v, quantiles: [0.5], precision: 1}")
		t0 := time.Now()
		vc := startVoterCluster(t, ctx, members, tc.voters, tables, job.Registry{"sum": sum.Kind{}, "quantile": quantile.Kind{}})
		start := time.Since(t0)
		l := vc.waitLeader(t, ctx)
		voters := l.RaftVoters()
		if len(voters) != tc.voters {
			t.Fatalf("%d members, voters: %d: %d vote (%v)", tc.members, tc.voters, len(voters), voters)
		}
		// Election: kill the leader, time until the rest agree on a new one.
		old := l.Name()
		t1 := time.Now()
		vc.kill(old)
		nl := vc.waitLeader(t, ctx)
		reelect := time.Since(t1)
		vc.restart(t, old)
		vc.waitLeader(t, ctx)
		times := map[string]time.Duration{}
		for _, kind := range []string{"sum", "quantile"} {
			spec := map[string][]byte{"sum": sumSpec, "quantile": qSpec}[kind]
			t2 := time.Now()
			rec := submitAndWait(t, ctx, vc.nodes[members[tc.members-1]], spec)
			times[kind] = time.Since(t2)
			if rec.Status != node.StatusDone {
				t.Fatalf("%s over %d members: %s", kind, tc.members, rec.Error)
			}
			if kind == "sum" {
				var res map[string]any
				if json.Unmarshal(rec.Result, &res) != nil || res["sum"] != total {
					t.Fatalf("sum over %d: %s, want %v", tc.members, rec.Result, total)
				}
			}
		}
		t.Logf("members=%d voters=%d start+first election=%.2fs re-election after killing leader %s=%.2fs (new %s) sum=%.2fs quantile=%.2fs",
			tc.members, len(voters), start.Seconds(), old, reelect.Seconds(), nl.Name(), times["sum"].Seconds(), times["quantile"].Seconds())
		vc.close()
		cancel()
	}
}
