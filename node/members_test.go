package node_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
)

// fileNode is a node started the way `cohort node run` starts one: its own
// data dir and consortium file.
type fileNode struct {
	*node.Node
	consPath string
}

// newFileNode inits and creates (but does not start) a node whose
// consortium file is DIR/NAME/consortium.yaml.
// startFileNodes starts n members, each with its own consortium file, and
// waits until they agree on a leader.
func startFileNodes(t *testing.T, ctx context.Context, dir string, kinds job.Registry, n int) ([]*fileNode, *node.Consortium) {
	t.Helper()
	var nodes []*fileNode
	cons := &node.Consortium{}
	for _, name := range names(n) {
		f := newFileNode(t, dir, name, kinds, false)
		nodes = append(nodes, f)
		cons.Members = append(cons.Members, f.member())
	}
	for _, f := range nodes {
		f.start(t, cons)
	}
	waitFor(t, ctx, func() bool { return nodes[0].Leader() != "" && nodes[1].Leader() == nodes[0].Leader() })
	return nodes, cons
}

func newFileNode(t *testing.T, dir, name string, kinds job.Registry, join bool) *fileNode {
	t.Helper()
	data := filepath.Join(dir, name)
	if _, _, err := node.Init(name, data, nil); err != nil {
		t.Fatal(err)
	}
	cfg := &node.Config{Name: name, DataDir: data, Listen: []string{"/ip4/127.0.0.1/tcp/0"},
		Consortium: filepath.Join(data, "consortium.yaml"), Timing: node.Timing{VoterDownMS: 60_000}}
	n, err := node.New(node.Options{Config: cfg, Kinds: kinds, Join: join, Policy: policy.Permissive()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return &fileNode{Node: n, consPath: cfg.Consortium}
}

func (f *fileNode) member() node.Member {
	return node.Member{Name: f.Name(), PeerID: f.PeerID().String(), Addrs: f.Addrs()}
}

func (f *fileNode) start(t *testing.T, cons *node.Consortium) {
	t.Helper()
	if err := cons.Save(f.consPath); err != nil {
		t.Fatal(err)
	}
	if err := f.Start(cons); err != nil {
		t.Fatal(err)
	}
}

func fileMembers(t *testing.T, f *fileNode) []string {
	t.Helper()
	c, err := node.LoadConsortium(f.consPath)
	if err != nil {
		t.Fatal(err)
	}
	return c.Names()
}

func deniedConnections(t *testing.T, n *node.Node) int {
	t.Helper()
	rec := httptest.NewRecorder()
	n.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m := regexp.MustCompile(`(?m)^cohort_connections_denied_total (\d+)`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no cohort_connections_denied_total in /metrics")
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// cohort consortium add and remove: a new member is refused until its add
// is committed, then receives the log, joins Raft and takes part in jobs;
// every node's consortium file follows; a change is refused while a job
// runs; a removed member is refused from then on.
func TestMembershipAddRemove(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	kind := &prober{}
	kinds := job.Registry{"probe": kind}
	nodes, cons := startFileNodes(t, ctx, dir, kinds, 3)

	// org4 starts with a file that lists it and joins: refused until added.
	org4 := newFileNode(t, dir, "org4", kinds, true)
	withNew := &node.Consortium{Members: append(slices.Clone(cons.Members), org4.member())}
	org4.start(t, withNew)
	waitFor(t, ctx, func() bool { return deniedConnections(t, nodes[0].Node)+deniedConnections(t, nodes[1].Node) > 0 })
	if org4.Leader() != "" {
		t.Fatalf("org4 knows leader %q before it was added", org4.Leader())
	}
	if _, err := org4.Submit(shortCtx(t, ctx), proberSpec([]string{"org1"}, "{rounds: 1}")); err == nil {
		t.Fatal("org4 submitted a job before it was added")
	}

	// Refused while a job runs.
	leader := leaderOf(t, ctx, nodes)
	follower := nodes[0]
	if follower == leader {
		follower = nodes[1]
	}
	held, err := leader.Submit(ctx, proberSpec(names(3), "{rounds: 1, hold: [0], hold_ms: 30000}"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool { js, _ := leader.Job(held); return js != nil && len(js.Steps) > 1 }) // past the admit phase
	err = follower.AddMember(ctx, org4.member())
	if !errors.Is(err, node.ErrMembership) || !strings.Contains(err.Error(), held) {
		t.Fatalf("add while job %s runs: %v", held, err)
	}
	if err := follower.Cancel(ctx, held); err != nil {
		t.Fatal(err)
	}

	// Add through a follower (forwarded to the leader).
	if err := follower.AddMember(ctx, org4.member()); err != nil {
		t.Fatal(err)
	}
	if err := follower.AddMember(ctx, org4.member()); !errors.Is(err, node.ErrMembership) {
		t.Errorf("second add: %v, want ErrMembership", err)
	}
	waitFor(t, ctx, func() bool { return org4.Leader() != "" && len(org4.Consortium().Members) == 4 })
	for _, f := range nodes {
		waitFor(t, ctx, func() bool { return slices.Equal(fileMembers(t, f), names(4)) })
	}
	// Four members, all within the voter count: org4 is promoted.
	waitFor(t, ctx, func() bool { return slices.Equal(leader.RaftVoters(), names(4)) })
	rec := submitAndWait(t, ctx, org4.Node, proberSpec(names(4), "{rounds: 2}"))
	if rec.Status != node.StatusDone {
		t.Fatalf("job with the new member: %s %s", rec.Status, rec.Error)
	}

	// Remove org3 (not the leader, so the test knows who leads after).
	victim := byName(nodes, "org3")
	if victim == leader {
		victim = byName(nodes, "org2")
	}
	if err := org4.RemoveMember(ctx, victim.Name()); err != nil {
		t.Fatal(err)
	}
	rest := slices.DeleteFunc(names(4), func(s string) bool { return s == victim.Name() })
	waitFor(t, ctx, func() bool { return slices.Equal(leader.RaftVoters(), rest) })
	for _, f := range append(slices.DeleteFunc(slices.Clone(nodes), func(f *fileNode) bool { return f == victim }), org4) {
		// Each node writes its file when it applies the change, which a
		// loaded machine may do after the leader's voters change.
		waitFor(t, ctx, func() bool { return slices.Equal(fileMembers(t, f), rest) })
	}
	if _, err := victim.Submit(shortCtx(t, ctx), proberSpec([]string{victim.Name()}, "{rounds: 1}")); err == nil {
		t.Error("the removed member submitted a job")
	}
	if err := leader.RemoveMember(ctx, "nobody"); !errors.Is(err, node.ErrMembership) {
		t.Errorf("removing a non-member: %v", err)
	}
	rec = submitAndWait(t, ctx, leader.Node, proberSpec(rest, "{rounds: 1}"))
	if rec.Status != node.StatusDone {
		t.Fatalf("job after the removal: %s", rec.Error)
	}
}

// The consortium API: GET lists members and voters; a malformed member is
// 400, a refused change 409.
func TestConsortiumAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newFileNode(t, t.TempDir(), "org1", nil, false)
	f.start(t, &node.Consortium{Members: []node.Member{f.member()}})
	waitFor(t, ctx, func() bool { return f.IsLeader() })
	srv := httptest.NewServer(withToken(f.Node))
	defer srv.Close()
	var st node.ConsortiumStatus
	if code := getJSON(t, srv.URL+"/v1/consortium", &st); code != http.StatusOK || len(st.Members) != 1 || !slices.Equal(st.Voters, []string{"org1"}) {
		t.Fatalf("GET /v1/consortium: %d %+v", code, st)
	}
	if code, msg := post(t, srv.URL+"/v1/consortium/members", []byte(`{"name": "x", "peer_id": "nope"}`)); code != http.StatusConflict || !strings.Contains(msg, "peer id") {
		t.Errorf("bad peer id: %d %s", code, msg)
	}
	if code, _ := post(t, srv.URL+"/v1/consortium/members", []byte(`{"name": "x", "bogus": 1}`)); code != http.StatusBadRequest {
		t.Errorf("unknown field: %d, want 400", code)
	}
	req, _ := http.NewRequest("DELETE", srv.URL+"/v1/consortium/members/org1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("removing the last member: %d, want 409", resp.StatusCode)
	}
}

func byName(nodes []*fileNode, name string) *fileNode {
	for _, f := range nodes {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// leaderOf waits until nodes[0] knows a leader among nodes and returns it:
// on a loaded machine an election may still be under way, or begin again,
// after the nodes first agreed on one.
func leaderOf(t *testing.T, ctx context.Context, nodes []*fileNode) *fileNode {
	t.Helper()
	var leader *fileNode
	waitFor(t, ctx, func() bool { leader = byName(nodes, nodes[0].Leader()); return leader != nil })
	return leader
}

func shortCtx(t *testing.T, ctx context.Context) context.Context {
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	t.Cleanup(cancel)
	return c
}

// A member listed at an address where it is not is found once the
// consortium file has the right one and the node reloads it, without a
// restart: here neither of two nodes can reach the other (a wrong address
// on each side), so no leader is elected until one side reloads.
func TestReloadFindsMovedMember(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	a := newFileNode(t, dir, "org1", nil, false)
	b := newFileNode(t, dir, "org2", nil, false)
	right := &node.Consortium{Members: []node.Member{a.member(), b.member()}}
	wrong := func(keep *fileNode) *node.Consortium {
		c := &node.Consortium{}
		for _, m := range right.Members {
			if m.Name != keep.Name() {
				m.Addrs = []string{"/ip4/127.0.0.1/tcp/" + freePort(t)}
			}
			c.Members = append(c.Members, m)
		}
		return c
	}
	a.start(t, wrong(a))
	b.start(t, wrong(b))
	time.Sleep(2 * time.Second)
	if a.Leader() != "" || b.Leader() != "" {
		t.Fatalf("a leader (%q, %q) with neither node reachable", a.Leader(), b.Leader())
	}
	// A file that changes membership is refused: that goes through the log.
	third := &node.Consortium{Members: append(slices.Clone(right.Members), node.Member{Name: "org3", PeerID: "12D3KooWRgNR3xcGzt3Vbkyoj29tQqRSqZXo9UgHad2RGpHussYv"})}
	if err := third.Save(a.consPath); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReloadConsortium(); !errors.Is(err, node.ErrMembership) {
		t.Fatalf("reload of a file with a new member: %v, want ErrMembership", err)
	}
	if err := right.Save(a.consPath); err != nil {
		t.Fatal(err)
	}
	got, err := a.ReloadConsortium()
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := got.Member("org2"); !slices.Equal(m.Addrs, b.Addrs()) {
		t.Fatalf("after reload org2 is at %v, want %v", m.Addrs, b.Addrs())
	}
	waitFor(t, ctx, func() bool { return a.Leader() != "" && a.Leader() == b.Leader() })
}

// A member that cannot be reached is redialled with a growing backoff, not
// every 250 ms: over 4 s the dials to it are 0.5, 1 and 2 s apart (with up
// to 25 % jitter), so there are 3 or 4 of them, not 16; once it is reachable
// the node connects to it on its own, with no job or Raft traffic asking.
func TestRedialBacksOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	a := newFileNode(t, dir, "org1", nil, false)
	b := newFileNode(t, dir, "org2", nil, false)
	// org1 and org2 vote; org1 finds org2 at a dead address at first.
	cons := &node.Consortium{Members: []node.Member{a.member(), b.member()}}
	dead := &node.Consortium{Members: []node.Member{a.member(), b.member()}}
	dead.Members[1].Addrs = []string{"/ip4/127.0.0.1/tcp/" + freePort(t)}
	a.start(t, dead)
	time.Sleep(4 * time.Second)
	failed := dials(t, a.Node, "org2", "failed")
	// 3 or 4 on time; 2 to 6 leaves room for a loaded machine's late ticks.
	if failed < 2 || failed > 6 {
		t.Errorf("%d failed dials to an unreachable member in 4 s, want about 4 (backoff 0.5, 1, 2 s), not one per 250 ms tick", failed)
	}
	// The right address and org2 up: org1 connects without being asked.
	if err := cons.Save(a.consPath); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReloadConsortium(); err != nil {
		t.Fatal(err)
	}
	b.start(t, cons)
	waitFor(t, ctx, func() bool { return dials(t, a.Node, "org2", "ok") >= 1 || dials(t, b.Node, "org1", "ok") >= 1 })
	waitFor(t, ctx, func() bool { return a.Leader() != "" && a.Leader() == b.Leader() })
}

func dials(t *testing.T, n *node.Node, peer, result string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	n.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m := regexp.MustCompile(`(?m)^cohort_member_dials_total\{peer="` + peer + `",result="` + result + `"\} (\d+)`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// Removing the leader: it commits its own removal, leaves Raft and steps
// down; the others elect a leader among themselves and carry on.
func TestRemoveLeader(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	kinds := job.Registry{"probe": &prober{}}
	nodes, _ := startFileNodes(t, ctx, dir, kinds, 3)
	leader := leaderOf(t, ctx, nodes)
	var rest []*fileNode
	for _, f := range nodes {
		if f != leader {
			rest = append(rest, f)
		}
	}
	if err := rest[0].RemoveMember(ctx, leader.Name()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool {
		l := rest[0].Leader()
		return l != "" && l != leader.Name() && rest[1].Leader() == l && len(rest[0].RaftVoters()) == 2
	})
	names := []string{rest[0].Name(), rest[1].Name()}
	rec := submitAndWait(t, ctx, rest[1].Node, proberSpec(names, "{rounds: 1}"))
	if rec.Status != node.StatusDone {
		t.Fatalf("job after removing the leader: %s", rec.Error)
	}
}
