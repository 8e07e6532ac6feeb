package bicluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/score"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

func init() { testkit.SmallKeys() }

// inmemKeyBits is the modulus of keys dealt for in-memory runs: room for
// a packed slot of 62-bit values from a few parties, and fast.
const inmemKeyBits = 512

// rowID is the id of original row r in the CSVs the tests write: a
// distinctive string, so the leakage test can look for it in raw bytes.
func rowID(r int) string { return fmt.Sprintf("r%05dq", r) }

// consortium writes m split over n parties (synth.Split with seed) as
// one CSV each, and a spec with params; it returns the spec's path, the
// party names and the parts.
func consortium(t testing.TB, m *bicluster.Matrix, n int, seed []byte, params string) (string, []string, []synth.Part) {
	t.Helper()
	return consortiumIn(t, t.TempDir(), "", m, n, seed, params)
}

// consortiumIn is consortium writing into dir, every file name prefixed.
func consortiumIn(t testing.TB, dir, prefix string, m *bicluster.Matrix, n int, seed []byte, params string) (string, []string, []synth.Part) {
	t.Helper()
	m.RowIDs = make([]string, m.Rows)
	for r := range m.Rows {
		m.RowIDs[r] = rowID(r)
	}
	parts, err := synth.Split(m, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	var spec strings.Builder
	spec.WriteString("kind: bicluster\nparties:\n")
	var names []string
	for i, part := range parts {
		name := fmt.Sprintf("org%02d", i+1)
		names = append(names, name)
		var buf bytes.Buffer
		if err := synth.WriteCSV(&buf, part.Matrix); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+name+".csv"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: m, path: %s%s.csv}]\n", name, prefix, name)
	}
	fmt.Fprintf(&spec, "params: {%s}\n", params)
	path := filepath.Join(dir, prefix+"spec.yaml")
	if err := os.WriteFile(path, []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, names, parts
}

// dealt deals the consortium a threshold key and returns options that
// hand each party its share as a node's data dir holds it.
func dealt(t testing.TB, names []string) jobtest.Options {
	t.Helper()
	_, keys := keytest.Paillier(t, inmemKeyBits, names)
	// A step of 30 s, not jobtest's 10: the aggregation's hops are the
	// step's timeout over the tree's hop count (under a second at 10 s), and
	// a 1024-bit encryption of a vector missed one at load 45.
	opts := jobtest.Options{Secrets: map[string]job.Secrets{}, Seed: seedN(0), StepTimeout: 30 * time.Second}
	for _, name := range names {
		dir := filepath.Join(t.TempDir(), name)
		if err := keyring.SavePaillier(dir, keys[name]); err != nil {
			t.Fatal(err)
		}
		opts.Secrets[name] = jobtest.DirSecrets(dir)
	}
	return opts
}

func runJob(t testing.TB, path string, opts jobtest.Options) *jobtest.Report {
	t.Helper()
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, bicluster.Kind{}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// globals reads result.json's biclusters back as original-row biclusters.
func globals(t testing.TB, res job.Result) ([]bicluster.Bicluster, []bicluster.GlobalResult) {
	t.Helper()
	raw, err := json.Marshal(res["biclusters"])
	if err != nil {
		t.Fatal(err)
	}
	var gs []bicluster.GlobalResult
	if err := json.Unmarshal(raw, &gs); err != nil {
		t.Fatal(err)
	}
	var out []bicluster.Bicluster
	for _, g := range gs {
		var b bicluster.Bicluster
		for _, c := range g.Columns {
			j, err := strconv.Atoi(strings.TrimPrefix(c, "c"))
			if err != nil {
				t.Fatalf("column %q", c)
			}
			b.Cols = append(b.Cols, j)
		}
		for _, r := range g.Rows {
			_, id, _ := strings.Cut(r, ":")
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(id, "r"), "q"))
			if err != nil {
				t.Fatalf("row %q", r)
			}
			b.Rows = append(b.Rows, n)
		}
		slices.Sort(b.Rows)
		out = append(out, b)
	}
	return out, gs
}

// TestJobMatchesCHawk: the job over real threshold encryption with 3 and
// 4 parties finds what centralised cHawk finds on the paper's data, within
// the 0.02 of match score, and at γ = 0 every implanted bicluster;
// it is also compared with the pure pipeline merged in the clear. Two
// parties run on the default two-member key, 2-of-2. Groups of two
// parties' locals are merged, as the paper merges any (min_group_parties
// 2, which the permissive policy of these nodes allows; the default, 3,
// leaves them out, as the default policy's floor would).
func TestJobMatchesCHawk(t *testing.T) {
	t.Parallel()
	for _, parties := range []int{2, 3, 4} {
		for _, g := range []float64{0, 0.1} {
			t.Run(fmt.Sprintf("%d/%v", parties, g), func(t *testing.T) {
				seed := seedN(parties)
				m, truth, err := synth.Paper(g).Generate(seed)
				if err != nil {
					t.Fatal(err)
				}
				p := bicluster.DefaultParams()
				path, names, _ := consortium(t, m, parties, seed, "min_group_parties: 2")
				opts := dealt(t, names)
				opts.Seed = seed
				pinJointSeed(t, opts, seed)
				rep := runJob(t, path, opts)
				clear := phoenixAfterJob(t, rep, names, m, parties, seed, p)
				// cHawk from the job's initial order, as the job.
				central, err := bicluster.CHawk(m, jointSeedOf(t, rep, names), p)
				if err != nil {
					t.Fatal(err)
				}
				got, gs := globals(t, rep.Result)
				job, ch, cl := score.Match(truth, got), score.Match(truth, central.Biclusters), score.Match(truth, clear)
				t.Logf("match: job %.3f, cHawk %.3f, in clear %.3f; %d biclusters, %v iterations", job, ch, cl, len(got), rep.Result["iterations"])
				if g == 0 && job < 1-1e-9 {
					t.Errorf("γ=0: match %.3f, want 1", job)
				}
				if job < ch-0.02 {
					t.Errorf("match %.3f more than 0.02 below cHawk's %.3f", job, ch)
				}
				if job < cl-0.02 {
					t.Errorf("match %.3f more than 0.02 below the pure pipeline's %.3f", job, cl)
				}
				for _, g := range gs {
					if len(g.Means) != len(g.Columns) {
						t.Errorf("bicluster %v: %d means", g.Columns, len(g.Means))
					}
				}
			})
		}
	}
}

// TestJobMeanOfMeans: the paper's barycenter mode through the job gives
// what the pure pipeline gives in that mode (4 parties, γ = 0.05).
func TestJobMeanOfMeans(t *testing.T) {
	t.Parallel()
	seed := seedN(9)
	m, truth, err := synth.Paper(0.05).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	p := bicluster.DefaultParams()
	p.Mode = bicluster.MeanOfMeans
	path, names, _ := consortium(t, m, 4, seed, "mode: mean_of_means")
	opts := dealt(t, names)
	opts.Seed = seed
	pinJointSeed(t, opts, seed)
	rep := runJob(t, path, opts)
	clear := phoenixAfterJob(t, rep, names, m, 4, seed, p)
	if rep.Result["mode"] != string(bicluster.MeanOfMeans) {
		t.Fatalf("the job ran in mode %v", rep.Result["mode"])
	}
	got, _ := globals(t, rep.Result)
	j, cl := score.Match(truth, got), score.Match(truth, clear)
	t.Logf("match: job %.3f, in clear %.3f", j, cl)
	if j < cl-0.02 || j < 0.9 {
		t.Fatalf("mean-of-means job match %.3f, pure pipeline %.3f", j, cl)
	}
}

// TestJobFaultAtEveryStepBoundary: the leader changes at every step
// boundary and, in turn, a party restarts (rebuilding its session from its
// table, the seed and the history); then every party restarts at every
// boundary. The biclusters are those of a run without faults.
func TestJobFaultAtEveryStepBoundary(t *testing.T) {
	t.Parallel()
	seed := seedN(7)
	m, _, err := synth.Paper(0.05).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	path, names, _ := consortium(t, m, 3, seed, "")
	opts := dealt(t, names)
	plain := runJob(t, path, opts)
	commits := 0
	opts.OnStep = func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind != jobtest.Committed {
			return jobtest.Fault{}
		}
		commits++
		return jobtest.Fault{Leader: names[commits%len(names)], Restart: []string{names[(commits+1)%len(names)]}}
	}
	faulty := runJob(t, path, opts)
	if commits < 5 {
		t.Fatalf("only %d steps committed", commits)
	}
	if len(faulty.Leaders) < commits {
		t.Errorf("leaders %v: the leader did not change at every boundary", faulty.Leaders)
	}
	a, _ := json.Marshal(plain.Result)
	b, _ := json.Marshal(faulty.Result)
	if !bytes.Equal(a, b) {
		t.Fatalf("with faults %s\nwithout %s", b, a)
	}
	if bs, _ := globals(t, plain.Result); len(bs) == 0 {
		t.Fatal("no biclusters: nothing was compared")
	}
	// Every party restarts at every commit, the leader staying: every
	// session after the first step is rebuilt from the table, the seed and
	// the history alone.
	restarts := 0
	opts.OnStep = func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind != jobtest.Committed {
			return jobtest.Fault{}
		}
		restarts++
		return jobtest.Fault{Restart: names}
	}
	rebuilt := runJob(t, path, opts)
	if restarts < 5 {
		t.Fatalf("only %d restarts", restarts)
	}
	if c, _ := json.Marshal(rebuilt.Result); !bytes.Equal(a, c) {
		t.Fatalf("with every session rebuilt %s\nwithout %s", c, a)
	}
}

// TestJobTamperedShare: a party whose decryption shares are corrupted is
// named in the result's excluded list and the biclusters are unchanged.
func TestJobTamperedShare(t *testing.T) {
	t.Parallel()
	seed := seedN(3)
	m, _, err := synth.Paper(0).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	path, names, _ := consortium(t, m, 4, seed, "")
	opts := dealt(t, names)
	plain := runJob(t, path, opts)
	// org04 leads; the first other party, org01, roots every aggregation
	// (secureagg.Root) and the merge test, and asks t more parties for
	// shares, org02 first in both.
	const cheat = "org02"
	opts.Leader = "org04"
	opts.Network = jobtest.NewNetwork(names...)
	var tampered atomic.Int32
	opts.Network.Intercept(cheat, func(to string, msg *wire.Message) *wire.Message {
		if msg.Type == secureagg.TypeShare {
			tampered.Add(1)
			msg.Body[len(msg.Body)/2] ^= 0x55
		}
		return msg
	})
	rep := runJob(t, path, opts)
	if tampered.Load() == 0 {
		t.Fatal("the cheat was never asked for its share: nothing was tested")
	}
	excl, _ := rep.Result["excluded"].(map[string]string)
	if why := excl[cheat]; !strings.Contains(why, "decryption share") {
		t.Fatalf("excluded %v does not name %s's share", rep.Result["excluded"], cheat)
	}
	// The merge test's own decryption excluded it too.
	inTest := false
	for _, rec := range rep.Records() {
		if rec.Step.Phase == "test" {
			var d struct {
				Similar  []bool            `msgpack:"similar"`
				Excluded map[string]string `msgpack:"excluded"`
			}
			if err := wire.Unmarshal(rec.Decision, &d); err != nil {
				t.Fatal(err)
			}
			inTest = inTest || strings.Contains(d.Excluded[cheat], "invalid decryption share")
		}
	}
	if !inTest {
		t.Fatalf("the merge test did not exclude %s's corrupted share", cheat)
	}
	a, _ := json.Marshal(plain.Result["biclusters"])
	b, _ := json.Marshal(rep.Result["biclusters"])
	if !bytes.Equal(a, b) {
		t.Fatalf("with a cheat %s\nwithout %s", b, a)
	}
}

// TestJobTwoPartiesBadShare: with two parties the key is 2-of-2, so a
// share failing its proof cannot be outvoted: the job fails naming the
// party instead of excluding it.
func TestJobTwoPartiesBadShare(t *testing.T) {
	t.Parallel()
	seed := seedN(3)
	m, _, err := synth.Paper(0).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	path, names, _ := consortium(t, m, 2, seed, "")
	opts := dealt(t, names)
	opts.Network = jobtest.NewNetwork(names...)
	// org01 leads, so org02 is the root: org01's shares are corrupted.
	opts.Network.Intercept("org01", func(to string, msg *wire.Message) *wire.Message {
		if msg.Type == secureagg.TypeShare {
			msg.Body[len(msg.Body)/2] ^= 0x55
		}
		return msg
	})
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = jobtest.Run(ctx, bicluster.Kind{}, spec, opts)
	if err == nil || !strings.Contains(err.Error(), "org01") || !strings.Contains(err.Error(), "decryption share") {
		t.Fatalf("two parties, org01's shares corrupted: %v", err)
	}
}

// TestJobBadInput: parties with different columns, a non-numeric value
// and a party with no rows each fail the job with an error naming the
// party and the column or table.
func TestJobBadInput(t *testing.T) {
	t.Parallel()
	seed := seedN(5)
	m, _, err := synth.Paper(0).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(csv string) string
		wants []string
	}{
		{"columns", func(s string) string { return strings.Replace(s, ",c7,", ",c7b,", 1) }, []string{"org02", `"c7b"`, "org01", `"c7"`}},
		{"non-numeric", func(s string) string {
			lines := strings.Split(s, "\n")
			cells := strings.Split(lines[2], ",")
			cells[4] = "n/a"
			lines[2] = strings.Join(cells, ",")
			return strings.Join(lines, "\n")
		}, []string{"org02", `"c3"`, "numeric"}},
		{"no rows", func(s string) string { return strings.SplitAfter(s, "\n")[0] }, []string{"org02", "no rows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, names, _ := consortium(t, m, 3, seed, "")
			csv := filepath.Join(filepath.Dir(path), "org02.csv")
			b, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(csv, []byte(tc.edit(string(b))), 0o644); err != nil {
				t.Fatal(err)
			}
			spec, err := job.LoadSpec(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = jobtest.Run(ctx, bicluster.Kind{}, spec, dealt(t, names))
			if err == nil {
				t.Fatal("the job succeeded")
			}
			t.Log(err)
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

// TestJobParams: each bad param is refused naming its field; the
// defaults and both spellings of the modes are accepted.
func TestJobParams(t *testing.T) {
	t.Parallel()
	for params, field := range map[string]string{
		"delta: 0":                      "params.delta",
		"min_rows: 0":                   "params.min_rows",
		"min_cols: -1":                  "params.min_cols",
		"max_iter: 0":                   "params.max_iter",
		"mode: median":                  "params.mode",
		"divergence: euclid":            "params.divergence",
		"beta: -1":                      "params.beta",
		"frac_bits: 61":                 "params.frac_bits",
		"value_bits: 10, frac_bits: 16": "params.value_bits",
		"beta: 1000":                    "params.beta",
		"timeout_ms: -5":                "params.timeout_ms",
		"colour: red":                   "params.colour",
		"backend: rlwe":                 "params.backend",
		"min_group_parties: 1":          "params.min_group_parties",
		"min_group_parties: 9":          "params.min_group_parties",
	} {
		spec := &job.Spec{Kind: "bicluster"}
		if err := yamlParams(spec, params); err != nil {
			t.Fatal(err)
		}
		err := bicluster.Kind{}.Validate(spec)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params {%s}: error %v does not name %s", params, err, field)
		}
	}
	for _, params := range []string{"", "mode: mean_of_means", "mode: mean-of-means, divergence: itakura-saito", "mode: exact"} {
		spec := &job.Spec{Kind: "bicluster"}
		if err := yamlParams(spec, params); err != nil {
			t.Fatal(err)
		}
		if err := (bicluster.Kind{}).Validate(spec); err != nil {
			t.Errorf("params {%s}: %v", params, err)
		}
	}
}

// yamlParams sets spec.Params from a flow mapping's body.
func yamlParams(spec *job.Spec, body string) error {
	var p map[string]any
	if err := yaml.Unmarshal([]byte("{"+body+"}"), &p); err != nil {
		return err
	}
	spec.Params = p
	return nil
}

// TestJobAccuracyTable prints the job's match score against cHawk's and
// the pure pipeline's on the paper's data at γ = 0 … 0.25 with four
// parties over real threshold encryption (in memory, 512-bit keys: the
// key size does not change the decrypted sums), averaged over 3 seeds,
// for docs/bicluster.md. It runs only when COHORT_BICLUSTER_ACCURACY is
// set:
//
//	COHORT_BICLUSTER_ACCURACY=1 go test ./bicluster/ -run AccuracyTable -v
func TestJobAccuracyTable(t *testing.T) {
	t.Parallel()
	if os.Getenv("COHORT_BICLUSTER_ACCURACY") == "" {
		t.Skip("set COHORT_BICLUSTER_ACCURACY=1 to print the table")
	}
	const parties, reps = 4, 3
	p := bicluster.DefaultParams()
	t.Log("| γ | Phoenix-4 job | pure pipeline | cHawk | k-means (K = 10) |")
	t.Log("|---|---|---|---|---|")
	for _, g := range []float64{0, 0.05, 0.1, 0.15, 0.2, 0.25} {
		var j, cl, ch, km float64
		for n := range reps {
			seed := seedN(100 + n)
			m, truth, err := synth.Paper(g).Generate(seed)
			if err != nil {
				t.Fatal(err)
			}
			central, err := bicluster.CHawk(m, seed, p)
			if err != nil {
				t.Fatal(err)
			}
			path, names, _ := consortium(t, m, parties, seed, "")
			opts := dealt(t, names)
			opts.Seed = seed
			pinJointSeed(t, opts, seed)
			rep := runJob(t, path, opts)
			clear := phoenixAfterJob(t, rep, names, m, parties, seed, p)
			got, _ := globals(t, rep.Result)
			j += score.Match(truth, got) / reps
			cl += score.Match(truth, clear) / reps
			ch += score.Match(truth, central.Biclusters) / reps
			kb, err := score.KMeans(m, 10, 100, seed)
			if err != nil {
				t.Fatal(err)
			}
			km += score.Match(truth, kb) / reps
			if jm, kmm := score.Match(truth, got), score.Match(truth, kb); jm <= kmm {
				t.Errorf("γ = %v, seed %d: the job's match %.3f is not above k-means' %.3f", g, n, jm, kmm)
			}
		}
		t.Logf("| %.2f | %.3f | %.3f | %.3f | %.3f |", g, j, cl, ch, km)
	}
}
