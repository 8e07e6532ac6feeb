package sjc

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// The lying coordinators of coordinator_internal_test.go (lie) and a
// hostile member, over real nodes: libp2p, Raft, each node under the
// default policy. hub, a member that holds no table, leads and
// coordinates; p1, p2 and p3 hold the evil chain's tables.

// hub is the coordinating member: no party of the job.
const hub = "hub"

// nodesTiming gives every send and step a minute: no party is dropped
// for slowness while the tests of other packages share the cores (the
// tests wait on the job's end, never on a clock); with 2 s Raft timeouts
// and hub campaigning at start, hub keeps the lead through a loaded
// moment, so the refusals name the coordinator the test chose.
var nodesTiming = node.Timing{HeartbeatMS: 2000, ElectionMS: 2000, SendMS: 60000, StepMS: 60000}

// markedChain writes the evil chain (evilChain's generated tables) with
// every private value recognisable, and returns its spec and the strings
// no failure, message or log may carry: every attribute value (numbers
// get a fraction no count has, categories a "catZ" prefix) and, per
// table, a join value outside the intersection (a dangling row, which
// joins no row of the neighbour and so changes no count). Shared join
// values become "kZ" and the value; the tree is the evil chain's, every
// change keeping the order of the values.
func markedChain(t *testing.T, params map[string]any) (*job.Spec, []string) {
	t.Helper()
	ch, err := GenChain(ChainParams{Tables: 3, N: 60, V: 15, X: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var private []string
	for name, tb := range ch.Train {
		for i, c := range tb.Columns {
			for r, v := range c.Str {
				switch c.Kind {
				case table.Key:
					c.Str[r] = "kZ" + v
				case table.Numeric:
					c.Str[r] = v + ".03125"
				case table.Categorical:
					c.Str[r] = "catZ" + v
				}
			}
			switch c.Kind {
			case table.Key:
				v := "kZ1" // the second key of the middle table: shared
				if i == 0 {
					v = "kZonly" + name
					private = append(private, v)
				}
				c.Str = append(c.Str, v)
			case table.Numeric:
				c.Str = append(c.Str, "5.03125")
				private = append(private, c.Str...)
			case table.Categorical:
				c.Str = append(c.Str, "catZdangling")
				private = append(private, c.Str...)
			default: // the class
				c.Str = append(c.Str, c.Str[0])
			}
		}
		f, err := os.Create(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteCSV(f, tb); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	spec := *ch.Spec
	spec.Dir, spec.Source, spec.Params, spec.Test = dir, "lying.yaml", params, nil
	slices.Sort(private)
	return &spec, slices.Compact(private)
}

// nodesRun is one job run over real nodes, watched (simtest.RunWatched).
type nodesRun struct{ *simtest.Watched }

// runNodes runs spec on hub, p1, p2 and p3 with every node's kind w,
// hub leading, and returns once the job has ended.
func runNodes(t *testing.T, spec *job.Spec, w nodewatch.Watch) *nodesRun {
	t.Helper()
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r := simtest.RunWatched(t, append([]string{hub}, spec.PartyNames()...), hub, "sjc", w, raw,
		sim.ClusterOptions{TablesDir: spec.Dir, Timing: nodesTiming, Policy: policy.Default()})
	return &nodesRun{r}
}

// texts are the job's failure texts: its error, each party's failure and
// every failure a party or the coordinator reported.
func (r *nodesRun) texts() string {
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	texts := append([]string{r.Rec.Error}, r.Capture.Failures...)
	for _, p := range slices.Sorted(maps.Keys(r.Rec.Failures)) {
		texts = append(texts, r.Rec.Failures[p])
	}
	return strings.Join(texts, "\n")
}

// ledger is party's audit ledger: every message its node sent.
func (r *nodesRun) ledger(t *testing.T, party string) []audit.Entry {
	t.Helper()
	entries, err := audit.ReadFile(filepath.Join(r.Audit, party+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// noneHolds checks that no failure text, captured message or log record
// of the run carries any of private (in a text, as a whole word: a log
// record's time may hold digits of a value).
func (r *nodesRun) noneHolds(t *testing.T, private []string) {
	t.Helper()
	text := r.texts()
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	if r.Capture.LogBytes == 0 || len(r.Capture.Sent) == 0 {
		t.Fatalf("%d log bytes and %d messages captured: the check checks nothing", r.Capture.LogBytes, len(r.Capture.Sent))
	}
	logs := r.Capture.Logs.Bytes()
	for _, v := range private {
		if holds([]byte(text), v) {
			t.Errorf("a failure text carries %q", v)
		}
		if holds(logs, v) {
			t.Errorf("the nodes' log carries %q", v)
		}
		for _, s := range r.Capture.Sent {
			if bytes.Contains(s.M.Body, []byte(v)) {
				t.Errorf("%s's %s to %s carries %q", s.From, s.M.Type, s.To, v)
			}
		}
	}
}

// runLieNodes runs lie l over real nodes and checks that the step it lies
// in is refused by the parties l names, each naming the step and hub;
// that no party disclosed anything in that step; and that no private
// value is in any failure text, message or log record.
func runLieNodes(t *testing.T, l lie) {
	t.Helper()
	spec, private := markedChain(t, l.params)
	r := runNodes(t, spec, nodewatch.Watch{Kind: Kind{}, Lead: l.kind.Coordinate})
	r.Refused(t, l.phase, l.round, l.refusers(), fmt.Sprintf("party PARTY refuses %s round %d: coordinator %s", l.phase, l.round, hub))
	r.Undisclosed(t, l.phase, l.round, spec.PartyNames(), hub)
	r.noneHolds(t, private)
}

// A coordinator that asks for offers at a node the log has closed (past
// max_depth) is refused over real nodes by every party, before any gain
// leaves.
func TestLyingCoordinatorNodesGrowAClosedNode(t *testing.T) {
	t.Parallel()
	runLieNodes(t, growClosedNode())
}

// A coordinator that commits a split's children's counts swapped is
// refused over real nodes at the next level by every party, whose own
// counts differ: no offer of that level leaves.
func TestLyingCoordinatorNodesForgeCounts(t *testing.T) {
	t.Parallel()
	runLieNodes(t, forgeCounts())
}

// A coordinator that names the winning table at a gain it did not offer
// is refused over real nodes by the table's party; the others, whose
// confirmation it does not give, split nothing: no split summary and no
// child's counts leave.
func TestLyingCoordinatorNodesChooseTheCandidate(t *testing.T) {
	t.Parallel()
	runLieNodes(t, chooseTheCandidate())
}

// A coordinator that names a loser the winner of a node is refused over
// real nodes by the party whose candidate should have won; its "no"
// confirmation travels over libp2p, and no party splits.
func TestLyingCoordinatorNodesMakeALoserSplit(t *testing.T) {
	t.Parallel()
	runLieNodes(t, makeLoserSplit())
}

// corruptSummaries rewrites every class summary p2 (the middle of the
// chain, on edges 0 and 1) sends with edit.
func corruptSummaries(edit func(es *EdgeSummary)) func(*wire.Message) *wire.Message {
	return func(m *wire.Message) *wire.Message {
		if m.Type != TypeClassSummary {
			return m
		}
		var es EdgeSummary
		if err := wire.Unmarshal(m.Body, &es); err != nil {
			panic(err)
		}
		edit(&es)
		cp := *m
		var err error
		if cp.Body, err = wire.Marshal(&es); err != nil {
			panic(err)
		}
		return &cp
	}
}

// A member that sends its neighbour a malformed class summary is refused
// over real nodes: p2's first summary (to p3, on edge T2-T3) names
// another edge than the one it is sent on, or positions past the edge's
// intersection (which p3's alignment would be read past); p3 refuses it
// naming p2, the edge and what is wrong, and the class propagation stops
// there: p3 and p2 send no summary on, and no party's root counts reach
// the coordinator.
func TestHostileMemberNodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(es *EdgeSummary)
		want string
	}{
		{"another edge", func(es *EdgeSummary) { es.Edge = 1 - es.Edge }, "from p2: names edge 0"},
		{"past the intersection", func(es *EdgeSummary) { es.Pos = append(es.Pos, 0x7f) }, "a summary names a position outside the intersection"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spec, private := markedChain(t, nil)
			r := runNodes(t, spec, nodewatch.Watch{Kind: Kind{}, Corrupter: "p2", Corrupt: corruptSummaries(c.edit)})
			r.Refused(t, propagateRound.Phase, 0, []string{"p3"}, "class summary of party p2 on edge T2.k2 = T3.k2", c.want)
			r.stoppedAtP3(t, spec.PartyNames())
			r.noneHolds(t, private)
		})
	}
}

// stoppedAtP3 checks the ledgers of a propagate that p3 refused at p2's
// first summary: only p1 (to p2) and p2 (to p3) sent class summaries,
// and no party sent the coordinator its output.
func (r *nodesRun) stoppedAtP3(t *testing.T, parties []string) {
	t.Helper()
	refused := 0
	for _, p := range parties {
		for _, e := range r.ledger(t, p) {
			if e.Phase != propagateRound.Phase {
				continue
			}
			if e.Type == TypeClassSummary && p == "p2" {
				refused++
			}
			if e.Type == jobrun.OutputType && e.Disclosure != string(wire.DiscloseControl) {
				t.Errorf("%s sent the coordinator its propagate output (%s)", p, e.Disclosure)
			}
			if e.Type == TypeClassSummary && !(p == "p1" && e.Peer == "p2" || p == "p2" && e.Peer == "p3") {
				t.Errorf("%s sent a class summary to %s after p3 refused p2's", p, e.Peer)
			}
		}
	}
	if refused != 1 {
		t.Errorf("p2 sent %d class summaries, want the one p3 refused", refused)
	}
}

// holds reports whether b holds v as a whole number or word: not inside a
// longer one, as a log record's time (seconds 52.031254) would hold
// 2.03125.
func holds(b []byte, v string) bool {
	for i := bytes.Index(b, []byte(v)); i >= 0; {
		end := i + len(v)
		if (i == 0 || !inWord(b[i-1])) && (end == len(b) || !inWord(b[end])) {
			return true
		}
		k := bytes.Index(b[i+1:], []byte(v))
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}

func inWord(c byte) bool {
	return c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
