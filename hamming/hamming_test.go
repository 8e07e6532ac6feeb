package hamming

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

var (
	exampleDir  = filepath.Join("..", "examples", "hamming")
	exampleSpec = filepath.Join(exampleDir, "spec.yaml")
	numericSpec = filepath.Join(exampleDir, "numeric.yaml")
)

var timing = node.Timing{SendMS: 3000, StepMS: 60000}

// readCSV reads a party's example table by its header.
func readCSV(t testing.TB, name string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(exampleDir, "data", name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// plain is the distance in the clear over the patients both hold: the
// number whose column values differ (by more than thr for numbers).
func plain(t testing.TB, column string, thr int) (compared, distance int) {
	t.Helper()
	south := map[string]string{}
	for _, r := range readCSV(t, "south") {
		south[r["patient"]] = r[column]
	}
	for _, r := range readCSV(t, "north") {
		v, ok := south[r["patient"]]
		if !ok {
			continue
		}
		compared++
		if thr == 0 {
			if v != r[column] {
				distance++
			}
			continue
		}
		a, _ := strconv.Atoi(r[column])
		b, _ := strconv.Atoi(v)
		if a-b > thr || b-a > thr {
			distance++
		}
	}
	return compared, distance
}

type result struct {
	Distance int `json:"distance"`
	Compared int `json:"compared"`
}

// The bundled examples run under the default node policy and give the
// distance in the clear: categorical codes exactly, systolic readings
// with threshold 5.
func TestExamplesUnderDefaultPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec, column string
		thr          int
	}{{exampleSpec, "diagnosis", 0}, {numericSpec, "systolic", 5}} {
		t.Run(filepath.Base(c.spec), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out := t.TempDir()
			if _, err := sim.Run(ctx, c.spec, sim.RunOptions{Kinds: job.Registry{"hamming": Kind{}}, Out: out, Timing: timing, Policy: policy.Default()}); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			var got result
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			compared, distance := plain(t, c.column, c.thr)
			if got.Compared != compared || got.Distance != distance {
				t.Errorf("compared %d, distance %d; in the clear %d, %d", got.Compared, got.Distance, compared, distance)
			}
			if distance == 0 || distance == compared {
				t.Errorf("the example's distance %d of %d tells nothing apart", distance, compared)
			}
		})
	}
}

// startCluster starts north, south and east (a member with no data) with
// the example's tables under the default node policy (whose guard checks
// every message's form), every node running the watched kind.
func startCluster(t *testing.T, ctx context.Context, c *nodewatch.Capture, w nodewatch.Watch) *sim.Cluster {
	t.Helper()
	return simtest.StartCluster(t, ctx, []string{"east", "north", "south"}, sim.ClusterOptions{
		KindsFor: c.Registry("hamming", w), TablesDir: exampleDir, Timing: timing, Logger: c.Logger(), Policy: policy.Default(),
	})
}

func submit(t *testing.T, ctx context.Context, n *node.Node, spec string) string {
	t.Helper()
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := n.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// needles are the plain values of both parties' tables: every patient id
// and every cell as text, each in a form longer than random bytes would
// hold by chance.
func needles(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	seen := map[string]bool{}
	for _, party := range []string{"north", "south"} {
		for _, r := range readCSV(t, party) {
			for _, v := range []string{r["patient"], r["diagnosis"]} {
				if !seen[v] {
					seen[v] = true
					out = append(out, []byte(v))
				}
			}
		}
	}
	return out
}
