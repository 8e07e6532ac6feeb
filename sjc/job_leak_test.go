package sjc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// leakCase is a three-party chain L (pa) - S (pb) - P (pc), S and P joined
// on a composite key, whose private values are recognisable: categorical
// values carry a prefix, numeric values are listed, and every join value
// held by one side only starts with "only".
func leakCase(t *testing.T) (*job.Spec, []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 9))
	dir := t.TempDir()
	var nums []float64
	// Every value's decimal is long (the 1/1024 offset): a short one, such
	// as "1019", turns up by chance in the PSI's pseudo-random bytes, and
	// the check below would name it a leak.
	num := func(base float64) string {
		x := base + float64(rng.IntN(400))*0.0625 + 1.0/1024
		nums = append(nums, x)
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	key := func(prefix string, n int, only string) string {
		if rng.IntN(6) == 0 {
			return fmt.Sprintf("%s%d", only, rng.IntN(3))
		}
		return fmt.Sprintf("%s%d", prefix, rng.IntN(n))
	}
	var l, s, p strings.Builder
	l.WriteString("ssn,org,x,class\n")
	for range 40 {
		x := num(1000)
		org := fmt.Sprintf("orgL_%d", rng.IntN(4))
		cls := "no"
		if v, _ := strconv.ParseFloat(x, 64); (v > 1012) != (org == "orgL_1") {
			cls = "yes"
		}
		fmt.Fprintf(&l, "%s,%s,%s,%s\n", key("sh", 8, "onlyL"), org, x, cls)
	}
	s.WriteString("dealer,day,gain,typ\n")
	for range 40 {
		fmt.Fprintf(&s, "%s,%s,%s,typS_%d\n", key("sh", 8, "onlyS"), key("dy", 4, "onlySd"), num(2000), rng.IntN(5))
	}
	p.WriteString("callee,day,len,cat\n")
	for range 40 {
		fmt.Fprintf(&p, "%s,%s,%s,catP_%d\n", key("sh", 8, "onlyP"), key("dy", 4, "onlyPd"), num(3000), rng.IntN(3))
	}
	for name, b := range map[string]*strings.Builder{"L": &l, "S": &s, "P": &p} {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := &job.Spec{
		Kind: "sjc", Dir: dir, Source: "leak.yaml",
		Parties: []job.PartySpec{
			{Name: "pa", Tables: []job.TableSpec{{Name: "L", Path: "L.csv"}}},
			{Name: "pb", Tables: []job.TableSpec{{Name: "S", Path: "S.csv"}}},
			{Name: "pc", Tables: []job.TableSpec{{Name: "P", Path: "P.csv"}}},
		},
		Schema: map[string]map[string]string{
			"L": {"ssn": "key", "org": "categorical", "x": "numeric", "class": "class"},
			"S": {"dealer": "key", "day": "key", "gain": "numeric", "typ": "categorical"},
			"P": {"callee": "key", "day": "key", "len": "numeric", "cat": "categorical"},
		},
		Join:   []string{"L.ssn = S.dealer", "P.callee = S.dealer AND S.day = P.day"},
		Params: map[string]any{"prune": false},
		Test:   map[string]string{"L": "L.csv", "S": "S.csv", "P": "P.csv"},
	}
	return spec, nums
}

func float64Bytes(x float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
}

// TestJobLeakage checks every message and every log record of a job
// against the package doc's leakage profile: no private attribute value
// and no join value held by one side only leaves its party; class and
// split summaries go only to the neighbour on their edge and name only
// shared join values; offers go only to the coordinator, the won
// candidate only to its party; no split predicate is in the log or in any
// message.
// It runs once per PSI protocol: the small sets here would make auto pick
// ECDH, so OT and VOLE are forced once each; and once with every party under a one-row
// memory budget, whose spilling must not change what leaves a party. The
// parties load as a node does by default (GroupAuto: these tables' rows
// are distinct, so row by row), and once every table grouped
// (GroupOn); TestJobAutoGroups holds a job whose choice groups one table
// to the messages of the job that groups none.
func TestJobLeakage(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"ecdh", "ot", "vole"} {
		t.Run(mode, func(t *testing.T) { checkJobLeakage(t, mode, sjc.Kind{}) })
	}
	t.Run("ecdh-budget", func(t *testing.T) { checkJobLeakage(t, "ecdh", sjc.Kind{MemoryBudget: oneRow}) })
	t.Run("ecdh-grouped", func(t *testing.T) { checkJobLeakage(t, "ecdh", sjc.Kind{GroupRows: sjc.GroupOn}) })
}

// resultNumbers is every number in the committed result, as JSON spells
// it, space-separated: public figures a short value's digits may match.
func resultNumbers(t *testing.T, res map[string]any) []byte {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out []byte
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n, ok := tok.(json.Number); ok {
			out = append(append(out, n...), ' ')
		}
	}
	return out
}

// loggedResultNumbers is resultNumbers of the result a finish log record
// holds.
func loggedResultNumbers(t *testing.T, data []byte) []byte {
	t.Helper()
	var rec struct {
		Result []byte `msgpack:"result"`
	}
	if err := msgpack.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(rec.Result, &res); err != nil {
		t.Fatal(err)
	}
	return resultNumbers(t, res)
}

// checkJobLeakage is one run of TestJobLeakage: the leak case's job with
// PSI protocol mode under kind, its tree big enough to say anything, then
// the checks of its log and messages against the profile.
func checkJobLeakage(t *testing.T, mode string, kind sjc.Kind) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, nums := leakCase(t)
	spec.Params["psi"] = mode
	run, err := runJobKind(t, ctx, kind, spec, jobtest.Options{Leader: "pb"})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := run.tree.Size()
	if n < 5 {
		t.Fatalf("tree of %d nodes: too small to say anything", n)
	}
	g, err := sjc.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	shared := leakShared(t, spec, g)
	private, splits := leakPrivate(nums, run.tree)
	checkNoPrivateBytes(t, run, private, shared)
	seen := checkLeakMessages(t, run, g, shared, mode)
	t.Logf("%d splits, %d messages checked (%v), %d private byte strings searched in %d log entries", splits, len(run.rep.Sent), seen, len(private), len(run.rep.Log))
}

// leakShared is the shared join values of each edge of the leak case,
// computed in the clear from its tables.
func leakShared(t *testing.T, spec *job.Spec, g *sjc.Graph) [][]string {
	t.Helper()
	data := loadTables(t, spec, map[string]string{"L": read(t, spec, "L"), "S": read(t, spec, "S"), "P": read(t, spec, "P")})
	labels, _ := sjc.Labels(g, data["L"])
	locals, err := sjc.Prepare(g, data, labels, sjc.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	shared := make([][]string, len(g.Edges))
	for e, ed := range g.Edges {
		shared[e] = sjc.Intersect(locals[g.Index(ed.Parent)].JoinValues(e), locals[e+1].JoinValues(e))
	}
	return shared
}

// leakPrivate is the private bytes to search for: categorical values,
// numeric values nums (as text and as float64), one-sided join values,
// and the split thresholds and categories of tr; and tr's number of
// splits.
func leakPrivate(nums []float64, tr *tree.Tree) ([][]byte, int) {
	var private [][]byte
	for _, p := range []string{"orgL_", "typS_", "catP_", "onlyL", "onlyS", "onlyP"} {
		private = append(private, []byte(p))
	}
	for _, x := range nums {
		private = append(private, float64Bytes(x), []byte(strconv.FormatFloat(x, 'f', -1, 64)))
	}
	var walk func(n *tree.Node)
	splits := 0
	walk = func(n *tree.Node) {
		if n.IsLeaf() {
			return
		}
		splits++
		if n.Split.Op == tree.OpLE {
			private = append(private, float64Bytes(n.Split.Num), []byte(strconv.FormatFloat(n.Split.Num, 'f', -1, 64)))
		} else {
			private = append(private, []byte(n.Split.Cat))
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(tr.Root)
	return private, splits
}

// checkNoPrivateBytes checks that no log entry and no message of run holds
// any of private (except where the job id or the result's own numbers
// spell it by chance), and that the log holds no shared join value.
func checkNoPrivateBytes(t *testing.T, run *jobRun, private [][]byte, shared [][]string) {
	t.Helper()
	public := resultNumbers(t, run.rep.Result)
	for _, e := range run.rep.Log {
		if e.Op == "finish" {
			// the logged result adds the runtime's seconds per phase,
			// whose digits may spell a value by chance
			public = append(public, loggedResultNumbers(t, e.Data)...)
		}
	}
	for _, b := range private {
		if bytes.Contains([]byte(run.rep.JobID), b) || bytes.Contains(public, b) {
			// the job id's random digits (the result names the model by
			// it) and the committed result's own numbers (seconds per
			// phase, row counts, scores) may spell a value by chance
			continue
		}
		if es := run.rep.LogHolding(b); len(es) > 0 {
			t.Errorf("the log holds private bytes %q (%d entries, first %s)", b, len(es), es[0].Op)
		}
		if ss := run.rep.SentHolding(b); len(ss) > 0 {
			t.Errorf("a message holds private bytes %q: %s from %s to %s", b, ss[0].Message.Type, ss[0].From, ss[0].To)
		}
	}
	// No join value at all in the log: the shared ones stay with their edge.
	for e := range shared {
		for _, v := range shared[e] {
			if es := run.rep.LogHolding([]byte(v)); len(es) > 0 {
				t.Errorf("the log holds the shared join value %q of edge %d", v, e)
			}
		}
	}
}

// checkLeakMessages checks every captured message of run against the
// profile: disclosures within it, summaries only between their edge's
// parties and naming only its shared values, offers only to the
// coordinator, confirmations without data, and every type the run must
// send (mode's PSI types among them) sent. It returns the count per type.
func checkLeakMessages(t *testing.T, run *jobRun, g *sjc.Graph, shared [][]string, mode string) map[string]int {
	t.Helper()
	owner := map[string]string{"L": "pa", "S": "pb", "P": "pc"}
	edgeParties := func(e int) [2]string {
		a, b := owner[g.Edges[e].Parent], owner[g.Edges[e].Child]
		return [2]string{min(a, b), max(a, b)}
	}
	// Control: the confirmations of a level's winners, and the runtime's
	// admission answers; neither carries data.
	allowed := []wire.Disclosure{wire.DiscloseClassSummary, wire.DiscloseSplitSummary, wire.DiscloseScore,
		wire.DisclosePSIBlinded, wire.DisclosePublicResult, wire.DiscloseControl}
	if out := run.rep.SentOutside(allowed...); len(out) > 0 {
		t.Errorf("%d messages outside the profile, first %s (%s)", len(out), out[0].Message.Type, out[0].Disclosure)
	}
	seen := map[string]int{}
	for _, s := range run.rep.Sent {
		m := s.Message
		seen[m.Type]++
		switch m.Type {
		case sjc.TypeClassSummary, sjc.TypeSplitSummary:
			// A summary names join values by position in its edge's
			// shared values (sjc.EdgeSummary): it can name no other.
			var es sjc.EdgeSummary
			if err := wire.Unmarshal(m.Body, &es); err != nil {
				t.Fatal(err)
			}
			e := es.Edge
			if e < 0 || e >= len(shared) {
				t.Fatalf("%s names edge %d", m.Type, e)
			}
			if ps := edgeParties(e); [2]string{min(s.From, s.To), max(s.From, s.To)} != ps {
				t.Errorf("%s on edge %d sent from %s to %s, not between its tables' parties %v", m.Type, e, s.From, s.To, ps)
			}
			var values []string
			var err error
			if m.Type == sjc.TypeClassSummary {
				var cs sjc.ClassSummary
				cs, err = es.ClassSummary(shared[e])
				values = cs.Values
			} else {
				var ss sjc.SplitSummary
				ss, err = es.SplitSummary(shared[e])
				values = ss.Values
			}
			if err != nil || len(values) == 0 {
				t.Errorf("%s on edge %d: %v, %d values", m.Type, e, err, len(values))
			}
		case jobrun.OutputType:
			// A level's offers (gains only) go to the coordinator alone.
			if m.Phase == "choose" {
				seen["offers"]++
				if s.To != "pb" || s.Disclosure != wire.DiscloseScore { // the only leader
					t.Errorf("offers from %s went to %s as %s, not to the coordinator as a score", s.From, s.To, s.Disclosure)
				}
			}
		case sjc.TypeConfirm:
			// One bit to each other party holding a table, no data.
			if s.Disclosure != wire.DiscloseControl || len(m.Body) > 8 || s.To == s.From {
				t.Errorf("confirmation from %s to %s: %d bytes as %s", s.From, s.To, len(m.Body), s.Disclosure)
			}
		}
	}
	psiTypes := map[string][]string{"ecdh": {psi.TypeBlinded, psi.TypeDouble}, "ot": {psi.TypeOTBase, psi.TypeOTChoice, psi.TypeOTMatrix, psi.TypeOTValues, psi.TypeFilter},
		"vole": {psi.TypeVoleBase, psi.TypeVoleChoice, psi.TypeVoleKeys, psi.TypeVoleMatrix, psi.TypeVoleTrees, psi.TypeVoleOKVS, psi.TypeVoleValues, psi.TypeFilter}}
	for _, typ := range append(psiTypes[mode], sjc.TypeClassSummary, sjc.TypeSplitSummary, sjc.TypeConfirm, "offers") {
		if seen[typ] == 0 {
			t.Errorf("no %s message was sent: the test checks nothing of it", typ)
		}
	}
	return seen
}

func read(t *testing.T, spec *job.Spec, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(spec.Dir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b)) + "\n"
}
