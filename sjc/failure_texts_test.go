package sjc_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// textFixture is a three-party chain L (pa) - S (pb) - P (pc) whose every
// private value is recognisable: join values and categories contain "Z",
// numbers have a fractional part no count or line number has.
type textFixture struct {
	csv  map[string]string // table -> CSV text
	spec func(dir string) *job.Spec
}

func newTextFixture() *textFixture {
	rng := rand.New(rand.NewPCG(21, 6))
	num := func(base float64) string {
		return strconv.FormatFloat(base+float64(rng.IntN(300))*0.0625+0.03125, 'f', -1, 64)
	}
	// key is a join value of table tb: shared ones kZ<prefix><i>, one
	// side's own <tb>Zonly<i>.
	key := func(tb, prefix string, n int) string {
		if rng.IntN(7) == 0 {
			return fmt.Sprintf("%s%sZonly%d", tb, prefix, rng.IntN(3))
		}
		return fmt.Sprintf("kZ%s%d", prefix, rng.IntN(n))
	}
	var l, s, p strings.Builder
	l.WriteString("ssn,org,income,class\n")
	for range 50 {
		x := num(7000)
		org := fmt.Sprintf("cZorg%d", rng.IntN(4))
		cls := "no"
		if v, _ := strconv.ParseFloat(x, 64); (v > 7009) != (org == "cZorg1") {
			cls = "yes"
		}
		fmt.Fprintf(&l, "%s,%s,%s,%s\n", key("L", "s", 9), org, x, cls)
	}
	s.WriteString("dealer,day,turnover,typ\n")
	for range 50 {
		fmt.Fprintf(&s, "%s,%s,%s,cZtyp%d\n", key("S", "s", 9), key("S", "d", 4), num(8000), rng.IntN(5))
	}
	p.WriteString("callee,day,duration,cat\n")
	for range 50 {
		fmt.Fprintf(&p, "%s,%s,%s,cZcat%d\n", key("P", "s", 9), key("P", "d", 4), num(9000), rng.IntN(3))
	}
	return &textFixture{
		csv: map[string]string{"L": l.String(), "S": s.String(), "P": p.String()},
		spec: func(dir string) *job.Spec {
			return &job.Spec{
				Kind: "sjc", Dir: dir, Source: "texts.yaml",
				Parties: []job.PartySpec{
					{Name: "pa", Tables: []job.TableSpec{{Name: "L", Path: "L.csv"}}},
					{Name: "pb", Tables: []job.TableSpec{{Name: "S", Path: "S.csv"}}},
					{Name: "pc", Tables: []job.TableSpec{{Name: "P", Path: "P.csv"}}},
				},
				Schema: map[string]map[string]string{
					"L": {"ssn": "key", "org": "categorical", "income": "numeric", "class": "class"},
					"S": {"dealer": "key", "day": "key", "turnover": "numeric", "typ": "categorical"},
					"P": {"callee": "key", "day": "key", "duration": "numeric", "cat": "categorical"},
				},
				Join:   []string{"L.ssn = S.dealer", "P.callee = S.dealer AND S.day = P.day"},
				Params: map[string]any{"prune": false, "timeout_ms": 2000},
			}
		},
	}
}

// private lists every string of the tables a failure text must not carry:
// each cell but the class labels and the header, and for every numeric
// column every threshold a split could have (the midpoints of adjacent
// distinct values), in the forms a formatter writes.
func (f *textFixture) private(t *testing.T, tables map[string]string) []string {
	t.Helper()
	var out []string
	for _, text := range tables {
		recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil {
			continue // a malformed table of a bad-input case: its cells are added below
		}
		for c := range recs[0] {
			var nums []float64
			for _, rec := range recs[1:] {
				if c >= len(rec) || rec[c] == "yes" || rec[c] == "no" {
					continue
				}
				out = append(out, rec[c])
				if x, err := strconv.ParseFloat(rec[c], 64); err == nil {
					nums = append(nums, x)
				}
			}
			slices.Sort(nums)
			nums = slices.Compact(nums)
			for i := 1; i < len(nums); i++ {
				m := tree.Midpoint(nums[i-1], nums[i])
				out = append(out, strconv.FormatFloat(m, 'f', -1, 64), strconv.FormatFloat(m, 'g', -1, 64))
			}
		}
	}
	for _, text := range tables {
		for _, field := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\n' }) {
			if strings.Contains(field, "Z") {
				out = append(out, field)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// textCase is one bad input or fault and what it must fail with.
type textCase struct {
	name string
	// edit changes the spec and the tables (train, or predict's new ones).
	edit func(s *job.Spec, tables map[string]string)
	// fault, when set, is injected through jobtest.Options.
	fault func(opts *jobtest.Options, dataDirs map[string]string)
	// model edits the parties' kept model parts before a predict case.
	model func(t *testing.T, dataDirs map[string]string, trained *tree.Tree)
	// hidden are further strings this case's texts must not carry.
	hidden func(trained *tree.Tree) []string
	// want is a substring some text must carry (the cause, named).
	want string
}

// TestFailureTextsDiscloseNothing runs sjc and sjc-predict on bad input
// and under faults, collects every failure text that reaches the
// coordinator or the log (each party's failure reason, each step's error,
// the job's error) and checks that none carries a cell value, a predicate
// (its threshold or category, its operator, a column it names) or a path.
// Paths: the node rewrites its own directories (tables_dir, data_dir) out
// of a party's failure before it leaves (node.Config.redactPaths); jobtest
// does not, so the test does the same rewriting and then checks that no
// other path remains. Values are not left to that rewriting: they are
// checked in the texts as the parties wrote them, and in every log entry
// and message of the run.
func TestFailureTextsDiscloseNothing(t *testing.T) {
	t.Parallel()
	f := newTextFixture()
	for _, c := range failureTrainCases() {
		t.Run("sjc/"+c.name, func(t *testing.T) {
			t.Parallel() // each case its own tables and data dirs
			checkFailureTexts(t, f, c, "", nil)
		})
	}

	// A model to predict with, trained on the good tables.
	trainDirs, trained := trainTextModel(t, f)
	for _, c := range failurePredictCases(trained) {
		t.Run("sjc-predict/"+c.name, func(t *testing.T) {
			t.Parallel() // each case its own tables and data dirs
			checkFailureTexts(t, f, c, "train-1", &trainedModel{trainDirs, trained})
		})
	}
}

// failureTrainCases are TestFailureTextsDiscloseNothing's sjc cases: bad
// tables or spec, a silent party, tampered summaries, corrupted kept
// state. A function of their own so the test reads in a screen.
func failureTrainCases() []textCase {
	return []textCase{
		{name: "text in a numeric column", want: "not a finite number", edit: func(_ *job.Spec, tb map[string]string) {
			tb["S"] = strings.Replace(tb["S"], ",cZtyp", "Z,cZtyp", 1) // "8012.0625Z"
		}},
		{name: "row with a missing field", want: "fields", edit: func(_ *job.Spec, tb map[string]string) {
			tb["P"] += "kZs1,kZd1,9001.03125\n"
		}},
		{name: "header without a schema column", want: "duration", edit: func(_ *job.Spec, tb map[string]string) {
			tb["P"] = strings.Replace(tb["P"], "callee,day,duration,cat", "callee,day,length,cat", 1)
		}},
		{name: "table without rows", want: "no rows", edit: func(_ *job.Spec, tb map[string]string) {
			tb["S"] = "dealer,day,turnover,typ\n"
		}},
		// A missing file gets the answer a forbidden table gets: the
		// spec's table, not the file (the owner's ledger names the file).
		{name: "table file missing", want: "rule tables: table P is not available to this job at this node", edit: func(_ *job.Spec, tb map[string]string) { delete(tb, "P") }},
		{name: "schema kind mismatch", want: "not a finite number", edit: func(s *job.Spec, _ map[string]string) {
			s.Schema["S"]["typ"] = "numeric"
		}},
		{name: "no common join value", want: "no join value in common", edit: func(_ *job.Spec, tb map[string]string) {
			tb["P"] = strings.ReplaceAll(tb["P"], "kZs", "kZq")
		}},
		{name: "empty join", want: "joins rows of every other table", edit: func(_ *job.Spec, tb map[string]string) {
			// Each edge shares a value, but L's rows join S rows that join
			// no P row.
			tb["L"] = "ssn,org,income,class\nkZs0,cZorg0,7000.03125,yes\nkZs0,cZorg1,7000.09375,no\n"
			tb["S"] = "dealer,day,turnover,typ\nkZs0,kZd0,8000.03125,cZtyp0\nkZs1,kZd1,8000.09375,cZtyp1\n"
			tb["P"] = "callee,day,duration,cat\nkZs1,kZd1,9000.03125,cZcat0\n"
		}},
		{name: "test table malformed", want: "not a finite number", edit: func(s *job.Spec, tb map[string]string) {
			s.Test = map[string]string{"L": "L.csv", "S": "S_test.csv", "P": "P.csv"}
			tb["S_test"] = strings.Replace(tb["S"], ",cZtyp", "Z,cZtyp", 3)
		}},
		{name: "silent party", want: "silent", edit: func(s *job.Spec, _ map[string]string) {
			s.Params["timeout_ms"] = 500 // four attempts of a level time out
		}, fault: func(o *jobtest.Options, _ map[string]string) {
			o.Grace = 200 * time.Millisecond
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Phase == "choose" {
					ev.Net.Drop("pc", jobtest.DropHang)
				}
				return jobtest.Fault{}
			}
		}},
		{name: "tampered split summary", want: "summary", fault: func(o *jobtest.Options, _ map[string]string) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Phase == "split" {
					ev.Net.Intercept("pb", tamperSummaries(sjc.TypeSplitSummary))
				}
				return jobtest.Fault{}
			}
		}},
		{name: "tampered class summary", want: "summary", fault: func(o *jobtest.Options, _ map[string]string) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Phase == "propagate" {
					ev.Net.Intercept("pb", tamperSummaries(sjc.TypeClassSummary))
				}
				return jobtest.Fault{}
			}
		}},
		{name: "kept state corrupted", want: "state", fault: func(o *jobtest.Options, dirs map[string]string) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind != jobtest.Committed || ev.Step.Phase != "propagate" {
					return jobtest.Fault{}
				}
				// A state that quotes a value of the party's table.
				garbage := []byte("\x92\xa6cZtyp3\xcb\x40\xbf\x40\x10\x00\x00\x00\x00kZs2")
				for slot := range 2 {
					path := filepath.Join(dirs["pb"], "jobs", ev.Step.Job, fmt.Sprintf("sjc-state-%d", slot))
					if err := os.WriteFile(path, garbage, 0o600); err != nil {
						panic(err)
					}
				}
				return jobtest.Fault{Restart: []string{"pb"}}
			}
		}},
	}
}

// splitCol is the first split of tr, in preorder, on a numeric column
// (numeric) or a categorical one; it panics if tr has none.
func splitCol(tr *tree.Tree, numeric bool) *tree.Split {
	var found *tree.Split
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		if n.IsLeaf() || found != nil {
			return
		}
		if (n.Split.Op == tree.OpLE) == numeric {
			found = n.Split
			return
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(tr.Root)
	if found == nil {
		panic(fmt.Sprintf("the trained tree has no split with numeric %v", numeric))
	}
	return found
}

// failurePredictCases are TestFailureTextsDiscloseNothing's sjc-predict
// cases on the model trained (the tree); the spec cases name a column of
// one of its numeric predicates.
func failurePredictCases(trained *tree.Tree) []textCase {
	return []textCase{
		{name: "spec leaves out a predicate's column", want: "node", edit: func(s *job.Spec, _ map[string]string) {
			sp := splitCol(trained, true)
			delete(s.Schema[sp.Table], sp.Column)
		}, hidden: func(tr *tree.Tree) []string { return []string{splitCol(tr, true).Column} }},
		{name: "predicate's column of another kind", want: "node", edit: func(s *job.Spec, _ map[string]string) {
			sp := splitCol(trained, true)
			s.Schema[sp.Table][sp.Column] = "categorical"
		}, hidden: func(tr *tree.Tree) []string { return []string{splitCol(tr, true).Column} }},
		{name: "malformed model part", want: "model", model: func(t *testing.T, dirs map[string]string, tr *tree.Tree) {
			sp := splitCol(tr, true)
			writeModelPart(t, dirs["pb"], fmt.Sprintf(`{"job": "train-1", "splits": [{"column": %q, "num": %v}] cZtyp1`, sp.Column, sp.Num))
			writeModelPart(t, dirs["pc"], fmt.Sprintf(`{"job": "train-1", "splits": [{"column": %q, "num": %v}] cZcat1`, sp.Column, sp.Num))
		}},
		{name: "model part missing", want: "model", model: func(t *testing.T, dirs map[string]string, _ *tree.Tree) {
			if err := os.Remove(filepath.Join(dirs["pc"], sjc.ModelSecret("train-1"))); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "model parts of different models", want: "different models", model: func(t *testing.T, dirs map[string]string, _ *tree.Tree) {
			b, err := os.ReadFile(filepath.Join(dirs["pc"], sjc.ModelSecret("train-1")))
			if err != nil {
				t.Fatal(err)
			}
			writeModelPart(t, dirs["pc"], strings.Replace(string(b), `"label": 0`, `"label": 1`, 1))
		}},
		{name: "new table malformed", want: "not a finite number", edit: func(_ *job.Spec, tb map[string]string) {
			tb["P"] = strings.Replace(tb["P"], ",cZcat", "Z,cZcat", 2)
		}},
		{name: "tampered split summary", want: "summary", fault: func(o *jobtest.Options, _ map[string]string) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Phase == "classify" {
					ev.Net.Intercept("pb", tamperSummaries(sjc.TypeSplitSummary))
				}
				return jobtest.Fault{}
			}
		}},
	}
}

// trainedModel is a finished training: each party's data dir and the tree.
type trainedModel struct {
	dirs map[string]string
	tree *tree.Tree
}

// trainTextModel trains the fixture's model as job train-1 and returns the
// parties' data dirs and the assembled tree.
func trainTextModel(t *testing.T, f *textFixture) (map[string]string, *tree.Tree) {
	t.Helper()
	dir := t.TempDir()
	writeTables(t, dir, f.csv)
	spec := f.spec(dir)
	dirs, secrets := dataDirs(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := runJob(t, ctx, spec, jobtest.Options{JobID: "train-1", Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	tr := run.tree
	if n, _ := tr.Size(); n < 5 {
		t.Fatalf("a tree of %d nodes", n)
	}
	return dirs, tr
}

func writeTables(t *testing.T, dir string, tables map[string]string) {
	t.Helper()
	for name, text := range tables {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func dataDirs(t *testing.T, spec *job.Spec) (map[string]string, map[string]job.Secrets) {
	dirs, secrets := map[string]string{}, map[string]job.Secrets{}
	for _, p := range spec.PartyNames() {
		dirs[p] = filepath.Join(t.TempDir(), p)
		secrets[p] = job.DirSecrets(dirs[p])
	}
	return dirs, secrets
}

func writeModelPart(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, sjc.ModelSecret("train-1")), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// tamperSummaries makes every summary of type typ name positions past
// any intersection and carry counts that are not uvarints.
func tamperSummaries(typ string) jobtest.Tamper {
	return func(_ string, m *wire.Message) *wire.Message {
		if m.Type != typ {
			return m
		}
		var es sjc.EdgeSummary
		if wire.Unmarshal(m.Body, &es) != nil {
			return m
		}
		es.Pos = append(es.Pos, 0x7f)
		es.Counts = append(es.Counts, 0xff)
		m.Body, _ = wire.Marshal(&es)
		return m
	}
}

// checkFailureTexts runs one case (training when model is "", else
// prediction with that model) and checks its failure texts.
func checkFailureTexts(t *testing.T, f *textFixture, c textCase, model string, trained *trainedModel) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	tables := map[string]string{}
	for k, v := range f.csv {
		tables[k] = v
	}
	spec := f.spec(dir)
	var kind job.Kind = sjc.Kind{}
	if model != "" {
		kind = sjc.PredictKind{}
		spec.Kind, spec.Params = "sjc-predict", map[string]any{"model": model, "timeout_ms": 2000}
	}
	if c.edit != nil {
		c.edit(spec, tables)
	}
	writeTables(t, dir, tables)
	dirs, secrets := dataDirs(t, spec)
	var hidden []string
	if trained != nil {
		for p, d := range trained.dirs {
			if err := os.CopyFS(dirs[p], os.DirFS(d)); err != nil {
				t.Fatal(err)
			}
		}
		if c.model != nil {
			c.model(t, dirs, trained.tree)
		}
		if c.hidden != nil {
			hidden = c.hidden(trained.tree)
		}
	}
	opts := jobtest.Options{JobID: "job-texts", Secrets: secrets}
	if c.fault != nil {
		c.fault(&opts, dirs)
	}
	rep, err := jobtest.Run(ctx, kind, spec, opts)
	if err == nil {
		t.Fatal("the job succeeded")
	}
	texts := []string{err.Error()}
	if rep != nil {
		for _, r := range rep.Records() {
			texts = append(texts, r.Error)
			for _, why := range r.Failed {
				texts = append(texts, why)
			}
		}
	}
	joined := strings.Join(texts, "\n")
	if !strings.Contains(joined, c.want) {
		t.Errorf("no failure names the cause %q:\n%s", c.want, joined)
	}
	for _, v := range hidden {
		if strings.Contains(joined, v) {
			t.Errorf("a failure text names %q:\n%s", v, joined)
		}
	}
	for _, v := range f.private(t, tables) {
		if strings.Contains(joined, v) {
			t.Errorf("a failure text carries %q:\n%s", v, joined)
		}
		if rep == nil {
			continue
		}
		if es := rep.LogHolding([]byte(v)); len(es) > 0 {
			t.Errorf("the log carries %q (%d entries)", v, len(es))
		}
		if ss := rep.SentHolding([]byte(v)); len(ss) > 0 {
			t.Errorf("a message carries %q: %s from %s to %s", v, ss[0].Message.Type, ss[0].From, ss[0].To)
		}
	}
	for _, op := range []string{" " + tree.OpLE + " ", " " + tree.OpEQ + " "} {
		if strings.Contains(joined, op) {
			t.Errorf("a failure text carries a predicate's operator %q:\n%s", op, joined)
		}
	}
	// The node's rewriting of its own directories, then no path is left.
	redacted := strings.ReplaceAll(joined, dir, "tables_dir")
	for _, d := range dirs {
		redacted = strings.ReplaceAll(redacted, d, "data_dir")
	}
	if strings.Contains(redacted, os.TempDir()) || strings.Contains(redacted, string(filepath.Separator)+"home") {
		t.Errorf("a failure text carries a path outside the node's directories:\n%s", redacted)
	}
	t.Log(redacted)
}
