package publish

import (
	"context"
	"errors"
	"fmt"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/coherence"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// writeSpec writes data as the one table of a spec with the given params
// and returns the spec.
func writeSpec(t *testing.T, file, data, params string) *job.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := "kind: coherence\nparties:\n  - name: shop\n    tables: [{name: baskets, path: " + file + "}]\nparams:\n" + params
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec)
	return s
}

// basketsCSV draws n baskets of public items p0..p9 and private items
// s0..s2, with distinctive customer ids.
func basketsCSV(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("tid,item\n")
	for c := range n {
		tid := fmt.Sprintf("customer-%05d", 7919*c%100000)
		for i := range 10 {
			if rng.Float64() < 0.9/float64(i+1) {
				fmt.Fprintf(&b, "%s,p%d\n", tid, i)
			}
		}
		if r := rng.IntN(6); r < 3 {
			fmt.Fprintf(&b, "%s,s%d\n", tid, r)
		}
	}
	return b.String()
}

// basketsFIMI is the same kind of data in FIMI form: items 1-10 public,
// 100-102 private.
func basketsFIMI(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	for range n {
		var items []string
		for i := range 10 {
			if rng.Float64() < 0.9/float64(i+1) {
				items = append(items, fmt.Sprint(i+1))
			}
		}
		if r := rng.IntN(6); r < 3 {
			items = append(items, fmt.Sprint(100+r))
		}
		b.WriteString(strings.Join(items, " ") + " \n")
	}
	return b.String()
}

// run runs the job in process, the party keeping its contribution to the
// joint seed in a data dir of its own.
func run(t *testing.T, s *job.Spec, opts jobtest.Options) (*jobtest.Report, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if opts.Secrets == nil {
		opts.Secrets = jobtest.SecretsIn(t.TempDir(), s.PartyNames())
	}
	return jobtest.Run(ctx, Kind{}, s, opts)
}

// local runs the library on the spec's data, as the party does, a draw of
// public items seeded with draw.
func local(t *testing.T, s *job.Spec, draw uint64) (*coherence.Labelled, coherence.Format, *Params) {
	t.Helper()
	prm, err := parseParams(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir, s.Parties[0].Tables[0].Path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read, format := coherence.ReadFIMI, coherence.FIMI
	if strings.HasSuffix(path, ".csv") {
		read, format = coherence.ReadCSV, coherence.CSV
	}
	db, err := read(f)
	if err != nil {
		t.Fatal(err)
	}
	l, err := coherence.Label(db, prm.roles(draw), format)
	if err != nil {
		t.Fatal(err)
	}
	return l, format, prm
}

// Each algorithm, as a job, suppresses what the library suppresses in
// process; the publication passes the checker and the nugget figures
// match the library's count.
func TestAlgorithms(t *testing.T) {
	params := map[string]string{
		"tree":   "  h: 0.6\n  k: 4\n  p: 3\n  private: [s0, s1, s2]\n  k_nugget: 10\n",
		"border": "  h: 0.6\n  k: 4\n  p: inf\n  utility: itemset\n  private: [s0, s1, s2]\n  k_nugget: 0.1\n",
		"rmall":  "  h: 0.6\n  k: 4\n  p: 3\n  algorithm: rmall\n  private: [s0, s1, s2]\n",
		"kanon":  "  h: 0.3\n  k: 4\n  p: 3\n  algorithm: k-anonymizer\n  private: [s0, s1, s2]\n  k_nugget: 10\n",
	}
	for name, prm := range params {
		t.Run(name, func(t *testing.T) {
			s := writeSpec(t, "baskets.csv", basketsCSV(200, 7), prm)
			rep, err := run(t, s, jobtest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			db, _, p := local(t, s, 0)
			var want *coherence.Result
			ctx := context.Background()
			switch p.algorithm() {
			case "tree-cohesion":
				want, err = coherence.TreeCohesion(ctx, db, p.privacy())
			case "rmall":
				want, err = coherence.RmAll(ctx, db, p.privacy())
			case "k-anonymizer":
				var ka *coherence.KAnonResult
				if ka, err = coherence.KAnonymizer(ctx, db, p.privacy().K); err == nil {
					want = &ka.Result
					if rep.Result["classes"] != ka.Classes {
						t.Errorf("classes %v, library %d", rep.Result["classes"], ka.Classes)
					}
				}
			default:
				nug, _ := p.nuggets(len(db.Trans))
				var br *coherence.BorderResult
				br, err = coherence.BorderCohesion(ctx, db, p.privacy(), nug)
				if err == nil {
					want = &br.Result
					if got := rep.Result["nuggets_before"]; fmt.Sprint(got) != br.NuggetsBefore.String() {
						t.Errorf("nuggets_before %v, library %v", got, br.NuggetsBefore)
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, v := range want.Suppressed {
				labels = append(labels, db.Items[v])
			}
			if got := rep.Result["suppressed"].([]string); !slices.Equal(got, labels) {
				t.Errorf("job suppressed %v, library %v", got, labels)
			}
			if len(labels) == 0 {
				t.Errorf("nothing suppressed: the test data has no mole")
			}
			pub := rep.Result["published"].(publication)
			pdb, _, err := pub.database()
			if err != nil {
				t.Fatal(err)
			}
			if p.algorithm() == "k-anonymizer" {
				checkKAnon(t, ctx, db, pdb, p, rep.Result)
				if rep.Result["moles_after"] == 0 {
					t.Errorf("no mole left at h = %v: the test does not show that h is ignored", *p.H)
				}
				return
			}
			if err := coherence.Check(ctx, db, pdb, p.privacy()); err != nil {
				t.Errorf("the published transactions fail the checker: %v", err)
			}
			if rep.Result["moles_before"].(int) < 1 || rep.Result["moles_after"] != 0 || rep.Result["verified"] != true ||
				rep.Result["guarantee"] != "(h,k,p)-coherence" {
				t.Errorf("moles %v → %v, verified %v, guarantee %v", rep.Result["moles_before"], rep.Result["moles_after"], rep.Result["verified"], rep.Result["guarantee"])
			}
		})
	}
}

// checkKAnon checks a k-Anonymizer publication: k-anonymous over the
// public items, with the moles the result reports left in it (a cohesion
// only when none is left: the k-Anonymizer ignores h).
func checkKAnon(t *testing.T, ctx context.Context, db *coherence.Labelled, pub *coherence.Database, p *Params, res map[string]any) {
	t.Helper()
	if err := coherence.CheckKAnonymous(db, pub, p.K); err != nil {
		t.Errorf("the publication is not %d-anonymous: %v", p.K, err)
	}
	var suppressed []int32
	for _, l := range res["suppressed"].([]string) {
		suppressed = append(suppressed, int32(slices.Index(db.Items, l)))
	}
	left, err := coherence.MolesLeft(ctx, db, suppressed, p.privacy())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res["moles_after"]) != fmt.Sprint(left) {
		t.Errorf("moles_after %v, %d left in the publication", res["moles_after"], left)
	}
	if err := coherence.Check(ctx, db, pub, p.privacy()); (err == nil) != (left == 0) {
		t.Errorf("the checker says %v of a publication with %d moles", err, left)
	}
	if res["verified"] != true || res["guarantee"] != "k-anonymity" {
		t.Errorf("verified %v, guarantee %v", res["verified"], res["guarantee"])
	}
}

// drawOf checks the run's joint seed against its profile and returns the
// draw seed the result names, after checking that it is the one the log
// determines (the joint seed mixed with params.seed).
func drawOf(t *testing.T, rep *jobtest.Report, s *job.Spec) uint64 {
	t.Helper()
	joint, err := rep.CheckJointSeed(jointSeed(rep.JobID, s))
	if err != nil {
		t.Fatal(err)
	}
	prm, err := parseParams(s)
	if err != nil {
		t.Fatal(err)
	}
	draw, err := strconv.ParseUint(fmt.Sprint(rep.Result["draw_seed"]), 10, 64)
	if err != nil || draw != drawSeed(joint, prm.Seed) {
		t.Fatalf("result draw_seed %v (%v), the log's %d", rep.Result["draw_seed"], err, drawSeed(joint, prm.Seed))
	}
	return draw
}

// The thesis's private items and a public fraction, on a FIMI file: the
// draw of public items is the library's with the draw_seed of the result,
// which the log's joint seed determines; two jobs with one params.seed
// draw differently (the spec's author does not choose the draw); the
// publication keeps the copies.
func TestThesisRuleFIMI(t *testing.T) {
	prm := "  h: 0.7\n  k: 3\n  p: 2\n  private_rule: thesis\n  public_fraction: 0.6\n  seed: 5\n"
	data := basketsFIMI(150, 3)
	s := writeSpec(t, "b.dat", data, prm)
	a, err := run(t, s, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := run(t, writeSpec(t, "b.dat", data, prm), jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	drawA, drawB := drawOf(t, a, s), drawOf(t, b, s)
	if drawA == drawB {
		t.Errorf("two jobs with one params.seed drew the same public items (draw seed %d)", drawA)
	}
	db, _, p := local(t, s, drawA)
	want, err := coherence.TreeCohesion(context.Background(), db, p.privacy())
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, v := range want.Suppressed {
		labels = append(labels, db.Items[v])
	}
	if got := a.Result["suppressed"].([]string); !slices.Equal(got, labels) {
		t.Errorf("the job suppressed %v, the library with the result's draw seed %v", got, labels)
	}
	// Items are 1-10 and 100-102, so base is 1000: the copies and s* (2000)
	// are the labels of four digits.
	copies := 0
	for _, l := range a.Result["published"].(publication).Items {
		if len(l) == 4 {
			copies++
		}
	}
	if copies == 0 {
		t.Errorf("the publication holds no private copy")
	}
}

// Leakage: with a coordinator that is not the party, the only messages
// are the party's outputs, disclosed as public results: its commitment and
// opening of the joint seed (no contribution sent or logged before the
// commitment is committed: CheckJointSeed) and the publication; no
// customer id is in any message or log entry.
// The k-Anonymizer baseline sends the same.
func TestLeakage(t *testing.T) {
	for _, alg := range []string{"greedy", "k-anonymizer"} {
		t.Run(alg, func(t *testing.T) { leakage(t, "  algorithm: "+alg+"\n") })
	}
}

func leakage(t *testing.T, extra string) {
	data := basketsCSV(120, 9)
	s := writeSpec(t, "baskets.csv", data, "  h: 0.6\n  k: 4\n  p: 2\n  private: [s0, s1, s2]\n"+extra)
	rep, err := run(t, s, jobtest.Options{Members: []string{"hub"}, Leader: "hub"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.CheckJointSeed(jointSeed(rep.JobID, s)); err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.Result["draw_seed"]; ok {
		t.Errorf("a draw seed without public_fraction")
	}
	phases := map[string]int{}
	for _, m := range rep.Sent {
		if m.From != "shop" || m.To != "hub" {
			t.Errorf("a message from %s to %s", m.From, m.To)
		}
		phases[m.Message.Phase]++
	}
	for _, ph := range []string{job.PhaseSeedCommit, job.PhaseSeedReveal, phase} {
		if phases[ph] == 0 {
			t.Errorf("no output of step %s", ph)
		}
	}
	if len(rep.Outputs) == 0 {
		t.Fatal("no output reported")
	}
	for _, m := range rep.SentOutside(wire.DisclosePublicResult) {
		t.Errorf("message %s discloses %q", m.Message.Type, m.Disclosure)
	}
	sent := 0
	for _, m := range rep.Sent {
		if m.Disclosure == wire.DisclosePublicResult {
			sent++
		}
	}
	if sent == 0 {
		t.Errorf("the publication left the party in no message recorded as a public result")
	}
	for _, line := range strings.Split(data, "\n")[1:] {
		tid, _, _ := strings.Cut(line, ",")
		if tid == "" {
			continue
		}
		if len(rep.SentHolding([]byte(tid))) > 0 || len(rep.LogHolding([]byte(tid))) > 0 {
			t.Fatalf("customer id %q left the party", tid)
		}
	}
}

func TestBadParams(t *testing.T) {
	base := "  h: 0.5\n  k: 3\n  p: 2\n"
	cases := map[string]string{
		"params.h":               "  k: 3\n  p: 2\n",
		"params.h ":              "  h: 1.5\n  k: 3\n  p: 2\n",
		"params.k":               "  h: 0.5\n  k: 1\n  p: 2\n",
		"params.p":               "  h: 0.5\n  k: 3\n",
		"params.p ":              "  h: 0.5\n  k: 3\n  p: 0\n",
		"params.utility":         base + "  utility: items\n",
		"params.algorithm":       base + "  algorithm: fast\n",
		"params.k_nugget":        base + "  utility: itemset\n",
		"params.k_nugget ":       base + "  k_nugget: 1.5\n",
		"params.p_nugget":        base + "  p_nugget: 3\n",
		"params.private_rule":    base + "  private_rule: mine\n",
		"params.private_rule ":   base + "  private_rule: thesis\n  private: [s0]\n",
		"params.public_fraction": base + "  public_fraction: 0.5\n  public: [p1]\n",
		"params.seed":            base + "  seed: 4\n",
		"params.public[0]":       base + "  public: ['']\n",
		"params.public[1]":       base + "  public: [p1, s0]\n  private: [s0]\n",
		"params.colour":          base + "  colour: red\n",
	}
	for field, prm := range cases {
		err := Kind{}.Validate(writeSpec(t, "b.csv", "tid,item\n1,a\n", prm))
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(field)) {
			t.Errorf("%q: err = %v, want it to name %s", prm, err, field)
		}
	}
	if err := (Kind{}).Validate(writeSpec(t, "b.csv", "tid,item\n1,a\n", base)); err != nil {
		t.Errorf("good params: %v", err)
	}
}

// Bad data fails the job with an error naming the line or the field, never
// a value from the data.
func TestBadData(t *testing.T) {
	cases := []struct {
		file, data, params, want string
	}{
		{"b.dat", "1 2 3\n4 x-secret-x 5\n", "  h: 0.5\n  k: 2\n  p: 2\n", "line 2: field 2"},
		{"b.csv", "tid,item\n1,a,x-secret-x\n", "  h: 0.5\n  k: 2\n  p: 2\n", "row 2"},
		{"b.csv", "tid,item\n1,a\n2,b\n", "  h: 0.5\n  k: 3\n  p: 2\n", "params.k"},
		{"b.csv", "tid,item\nx-secret-x1,a\nx-secret-x1,ill\nx-secret-x2,b\nx-secret-x2,ill\nx-secret-x3,c\n", "  h: 0.5\n  k: 2\n  p: 2\n  private: [ill]\n", "params.h"},
		{"b.csv", "tid,item\nx-secret-x1,a\nx-secret-x2,b\n", "  h: 0.5\n  k: 2\n  p: 2\n  private_rule: thesis\n  public: [s*]\n", "params.public"},
		{"b.dat", "10000000000000000000 2\n3 4\n", "  h: 0.5\n  k: 2\n  p: 2\n  private_rule: thesis\n", "params.private_rule"},
		{"b.csv", "tid,item\n1,x-secret-x\n2,x-secret-x'\n", "  h: 0.5\n  k: 2\n  p: 2\n  private_rule: thesis\n", "params.private_rule"},
	}
	for _, c := range cases {
		rep, err := run(t, writeSpec(t, c.file, c.data, c.params), jobtest.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.data, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "x-secret-x") || len(rep.LogHolding([]byte("x-secret-x"))) > 0 {
			t.Errorf("%q: a value of the data is in the error or the log", c.data)
		}
	}
}

// Over a real node (libp2p, Raft) with `cohort sim`'s runner: the
// publication is written to published.dat in the input's format, every
// transaction in it, and passes the checker; with a public fraction, under
// the roles the library draws with the result's draw_seed.
func TestSim(t *testing.T) {
	for _, c := range []struct{ file, data, extra string }{
		{"baskets.csv", basketsCSV(150, 11), ""},
		{"baskets.dat", basketsFIMI(150, 11), "  public_fraction: 0.8\n  seed: 3\n"},
		{"kanon.csv", basketsCSV(150, 11), "  algorithm: k-anonymizer\n"},
	} {
		t.Run(c.file, func(t *testing.T) {
			private := "[s0, s1, s2]"
			if strings.HasSuffix(c.file, ".dat") {
				private = "[100, 101, 102]" // YAML integers name items too
			}
			// k = 5: the default node policy's floor.
			s := writeSpec(t, c.file, c.data, "  h: 0.6\n  k: 5\n  p: 2\n  private: "+private+"\n"+c.extra)
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"coherence": Kind{}}, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			if res["published"] != File {
				t.Errorf("result names %v, not %s", res["published"], File)
			}
			f, err := os.Open(filepath.Join(out, File))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var draw uint64
			if strings.Contains(c.extra, "public_fraction") {
				if draw, err = strconv.ParseUint(fmt.Sprint(res["draw_seed"]), 10, 64); err != nil {
					t.Fatalf("result draw_seed %v: %v", res["draw_seed"], err)
				}
			}
			db, format, prm := local(t, s, draw)
			read := coherence.ReadFIMI
			if format == coherence.CSV {
				read = coherence.ReadCSV
			}
			pub, err := read(f)
			if err != nil {
				t.Fatal(err)
			}
			if prm.algorithm() == "k-anonymizer" {
				sup := map[string]any{"suppressed": []string{}, "moles_after": res["moles_after"], "verified": res["verified"], "guarantee": res["guarantee"]}
				for _, l := range res["suppressed"].([]any) {
					sup["suppressed"] = append(sup["suppressed"].([]string), l.(string))
				}
				checkKAnon(t, ctx, db, pub, prm, sup)
			} else if err := coherence.Check(ctx, db, pub, prm.privacy()); err != nil {
				t.Fatalf("published.dat: %v", err)
			}
			if len(res["suppressed"].([]any)) == 0 {
				t.Errorf("nothing suppressed")
			}
		})
	}
}

// The shape check refuses publications that do not describe themselves.
func TestOutputCheck(t *testing.T) {
	good := output{Format: "fimi", Transactions: 2, Published: publication{Format: "fimi", Items: []string{"1", "2"}, Trans: [][]uint32{{0, 1}, {}}}}
	if err := good.check(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(o *output){
		"unknown item":        func(o *output) { o.Published.Trans[1] = []uint32{2} },
		"repeated item":       func(o *output) { o.Published.Trans[1] = []uint32{1, 1} },
		"repeated label":      func(o *output) { o.Published.Items = []string{"1", "1"} },
		"wrong count":         func(o *output) { o.Transactions = 3 },
		"suppressed shown":    func(o *output) { o.Suppressed = []string{"2"} },
		"bad format":          func(o *output) { o.Published.Format = "xml"; o.Format = "xml" },
		"nugget not a number": func(o *output) { o.NuggetsBefore = "many" },
		"moles left":          func(o *output) { o.Algorithm = "tree-cohesion"; o.MolesAfter = 2 },
		"negative classes":    func(o *output) { o.Algorithm = "k-anonymizer"; o.Classes = -1 },
	}
	for name, f := range bad {
		o := good
		o.Published.Trans = [][]uint32{{0, 1}, {}}
		o.Published.Items = []string{"1", "2"}
		f(&o)
		if err := o.check(); !errors.Is(err, errShape) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The job declares its publication to the node policy as the items
// generalised with the spec's k, so a node's min_k floor governs it: under
// the default policy (floor 5) k = 4 is refused before anything is read,
// naming the rule and the node.
func TestUsesAndPolicyFloor(t *testing.T) {
	s := writeSpec(t, "baskets.csv", basketsCSV(150, 11), "  h: 0.6\n  k: 4\n  p: 2\n  private: [s0, s1, s2]\n")
	uses, err := Kind{}.Uses(s, s.Parties[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(uses) != 1 || uses[0].Form != wire.DiscloseGeneralised || uses[0].K != 4 || uses[0].Column != "item" {
		t.Fatalf("uses %+v, want the items generalised with k = 4", uses)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"coherence": Kind{}}, Out: filepath.Join(t.TempDir(), "out")})
	if err == nil || !strings.Contains(err.Error(), "floors.min_k") || !strings.Contains(err.Error(), s.Parties[0].Name) {
		t.Fatalf("k = 4 under the default policy: %v, want a refusal by floors.min_k naming the party", err)
	}
}

// skipSeedKind is the job with a coordinator that asks for the publication
// without drawing the joint seed first.
type skipSeedKind struct{ Kind }

func (skipSeedKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	_, err := publishRound.Run(ctx, c, job.Call[struct{}]{Parties: c.Spec().PartyNames()},
		func(o *job.Outcome[output]) (output, error) { return output{}, o.Err() })
	return nil, err
}

// The party refuses to publish before the log holds the joint seed, naming
// the coordinator: the public draw is never the spec's or the
// coordinator's choice alone. Nothing leaves the party.
func TestCoordinatorMustDrawSeed(t *testing.T) {
	s := writeSpec(t, "b.dat", basketsFIMI(60, 3), "  h: 0.7\n  k: 3\n  p: 2\n  public_fraction: 0.5\n  seed: 5\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, skipSeedKind{}, s, jobtest.Options{Members: []string{"hub"}, Leader: "hub",
		Secrets: jobtest.SecretsIn(t.TempDir(), s.PartyNames())})
	if err == nil || !strings.Contains(err.Error(), "party shop refuses coherence round 0") || !strings.Contains(err.Error(), "coordinator hub") {
		t.Fatalf("err %v, want the party's refusal naming the coordinator", err)
	}
	if len(rep.Outputs) != 0 {
		t.Errorf("%d outputs left the party", len(rep.Outputs))
	}
}

// A table above its max_rows (a node's max_table_rows) is refused before
// the suppression loads it, naming the kind and the setting, whatever its
// source: a CSV or FIMI file the kind parses itself (its lines counted,
// a CSV's header free) or a database table Open reads; one at the limit
// is published.
func TestMaxRowsRefusesALargerTable(t *testing.T) {
	dir := t.TempDir()
	csvData := "tid,item\n1,a\n1,b\n2,a\n2,b\n3,a\n3,b\n"
	files := map[string]string{"b.csv": csvData, "b.dat": "1 2\n1 2\n1 2\n"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pairs := &table.Table{Name: "b", Columns: []*table.Column{
		{Name: "tid", Kind: table.Categorical, Str: []string{"1", "1", "2", "2", "3", "3"}},
		{Name: "item", Kind: table.Categorical, Str: []string{"a", "b", "a", "b", "a", "b"}}}}
	if err := table.Write(context.Background(), table.Source{SQLite: filepath.Join(dir, "b.db"), Table: "b"}, pairs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		source string
		rows   int
	}{{"{path: b.csv", 6}, {"{path: b.dat", 3}, {"{sqlite: b.db, table: b", 6}} {
		for _, limit := range []int{c.rows, c.rows - 1} {
			spec := fmt.Sprintf("kind: coherence\nparties:\n  - name: shop\n    tables: [{name: baskets, source: %s, max_rows: %d}}]\nparams:\n  h: 0.9\n  k: 2\n  p: 2\n", c.source, limit)
			s := spectest.Write(t, filepath.Join(dir, fmt.Sprintf("spec%d.yaml", limit)), spec)
			_, err := run(t, s, jobtest.Options{})
			switch {
			case limit == c.rows && err != nil:
				t.Fatalf("%s at its limit: %v", c.source, err)
			case limit < c.rows && (err == nil || !errors.Is(err, table.ErrTooLarge) && !strings.Contains(err.Error(), "too large")):
				t.Fatalf("%s above its limit: %v, want refused", c.source, err)
			case limit < c.rows && (!strings.Contains(err.Error(), "kind coherence loads whole tables into memory") ||
				!strings.Contains(err.Error(), "max_table_rows") || strings.Contains(err.Error(), "row ")):
				t.Fatalf("%s above its limit: %v, want the kind and the setting named, no row number", c.source, err)
			}
		}
	}
}
