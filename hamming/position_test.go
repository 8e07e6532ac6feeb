package hamming

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

// positionSpec writes two tables without ids, row i of one facing row i of
// the other, and a spec aligning them by position.
func positionSpec(t *testing.T, a, b []int) string {
	t.Helper()
	dir := t.TempDir()
	for name, col := range map[string][]int{"a.csv": a, "b.csv": b} {
		var s strings.Builder
		s.WriteString("reading\n")
		for _, v := range col {
			fmt.Fprintf(&s, "%d\n", v)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := `kind: hamming
parties:
  - name: north
    tables: [{name: ta, path: a.csv}]
  - name: south
    tables: [{name: tb, path: b.csv}]
schema:
  ta: {reading: numeric}
  tb: {reading: numeric}
params: {align: position, threshold: 2, keyholder: south}
`
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Aligned by position, with south holding the key and a threshold of 2,
// the distance is the count in the clear; tables of different lengths fail
// at both parties at once: the comparer names the mismatch, and the key
// holder hears its refusal (the go-ahead handshake) instead of waiting out
// the step; no value is named.
func TestPosition(t *testing.T) {
	t.Parallel()
	a := []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, -5, 0}
	b := []int{10, 23, 28, 40, 47, 61, 70, 90, 90, 102, -8, 1}
	want := 0
	for i := range a {
		if d := a[i] - b[i]; d > 2 || d < -2 {
			want++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(spec string) (map[string]any, error) {
		return sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"hamming": Kind{}}, Out: t.TempDir(), Timing: timing, Policy: policy.Default()})
	}
	res, err := run(positionSpec(t, a, b))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	var got result
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Compared != len(a) || got.Distance != want {
		t.Errorf("compared %d, distance %d; want %d, %d", got.Compared, got.Distance, len(a), want)
	}
	_, err = run(positionSpec(t, a, b[:11]))
	if err == nil || !strings.Contains(err.Error(), "not the positions aligned") || !strings.Contains(err.Error(), "refused the comparison") {
		t.Fatalf("tables of 12 and 11 rows: %v", err)
	}
	for _, v := range append(a, b...) {
		if strings.Contains(err.Error(), fmt.Sprintf(",%d", v)) || strings.Contains(err.Error(), fmt.Sprintf(" %d ", v)) {
			t.Errorf("the error %q may hold the value %d", err, v)
		}
	}
}
