package hamming

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

// benchSpec writes two tables of n ids each (the same ids, in different
// orders; a categorical code of 4 values, a fifth of them differing) and
// a spec comparing them with the given params.
func benchSpec(b *testing.B, n int, params string) string {
	b.Helper()
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(9, 10))
	codes := []string{"a", "b", "c", "d"}
	var north, south strings.Builder
	north.WriteString("id,code\n")
	south.WriteString("id,code\n")
	perm := r.Perm(n)
	vals := make([]string, n)
	for i := range vals {
		vals[i] = codes[r.IntN(4)]
		fmt.Fprintf(&north, "id%07d,%s\n", i, vals[i])
	}
	for _, i := range perm {
		v := vals[i]
		if r.IntN(5) == 0 {
			v = codes[r.IntN(4)]
		}
		fmt.Fprintf(&south, "id%07d,%s\n", i, v)
	}
	for name, body := range map[string]string{"north.csv": north.String(), "south.csv": south.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	spec := `kind: hamming
parties:
  - name: north
    tables: [{name: tn, path: north.csv}]
  - name: south
    tables: [{name: ts, path: south.csv}]
schema:
  tn: {id: id, code: categorical}
  ts: {id: id, code: categorical}
params: {` + params + `}
`
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// A whole hamming job over real nodes on loopback, 10,000 ids per party:
// the PSI alignment and the exchange (the distance step's seconds), and
// the job's wall time, and the CPU time of both nodes together (one
// process), per 10,000 ids.
//
//	go test ./hamming -run '^$' -bench Job -benchtime 2x
func BenchmarkJob(b *testing.B) {
	const n = 10_000
	for _, align := range []string{"psi", "position"} {
		b.Run("align="+align, func(b *testing.B) {
			spec := benchSpec(b, n, "align: "+align)
			var step float64
			cpu0 := cputime.Used(b)
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"hamming": Kind{}}, Out: b.TempDir(),
					Timing: timingBench, Policy: policy.Default()})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				tm, _ := res["timing"].(map[string]any)
				s, _ := tm["distance"].(float64)
				step += s
				if by, ok := res["bytes"].(map[string]any); ok {
					for p, v := range by {
						f, _ := v.(float64)
						b.ReportMetric(f/1e6, "MB-sent-by-"+p)
					}
				}
			}
			b.ReportMetric(step/float64(b.N), "distance-step-s/10k-ids")
			b.ReportMetric((cputime.Used(b)-cpu0).Seconds()/float64(b.N), "cpu-s/10k-ids")
		})
	}
}

var timingBench = func() (t node.Timing) { t = timing; t.StepMS = 600_000; return t }()
