package integrate_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/integrate"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sim"
)

// The bundled example over real nodes (libp2p on loopback, Raft): the same
// publication as in memory, integrated.csv holding every record, and every
// class of each requirement at least k records (read back from the CSV).
func TestSimExample(t *testing.T) {
	spec := "../examples/integrate/spec.yaml"
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"integrate": integrate.Kind{}}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Records   int                 `json:"records"`
		MinGroup  int                 `json:"min_group"`
		NCP       float64             `json:"ncp"`
		Published anonymize.Published `json:"published"`
		File      string              `json:"integrated"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if res["kind"] != "integrate" || got.File != integrate.IntegratedFile || got.Records != 44 {
		t.Fatalf("result: kind %v, file %q, records %d", res["kind"], got.File, got.Records)
	}

	s, err := job.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]job.Secrets{}
	for _, p := range s.PartyNames() {
		secrets[p] = jobtest.DirSecrets(t.TempDir())
	}
	rep, err := jobtest.Run(ctx, integrate.Kind{}, s, jobtest.Options{Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	mem := rep.Result["published"].(anonymize.Published)
	a, _ := json.Marshal(mem)
	b, _ := json.Marshal(got.Published)
	if string(a) != string(b) {
		t.Fatalf("real nodes published\n%s\nin memory\n%s", b, a)
	}
	if got.NCP != rep.Result["ncp"].(float64) || got.MinGroup != rep.Result["min_group"].(int) {
		t.Errorf("ncp %v min_group %d; in memory %v %v", got.NCP, got.MinGroup, rep.Result["ncp"], rep.Result["min_group"])
	}

	f, err := os.Open(filepath.Join(out, integrate.IntegratedFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, recs := recs[0], recs[1:]
	if len(recs) != 44 || slices.Contains(header, "patient") {
		t.Fatalf("integrated.csv: %d records, header %v", len(recs), header)
	}
	minGroup := len(recs)
	for _, qid := range [][]string{{"age", "sex", "diagnosis"}, {"sex", "district"}} {
		count := map[string]int{}
		key := func(r []string) string {
			var k []string
			for _, q := range qid {
				k = append(k, r[slices.Index(header, q)])
			}
			return strings.Join(k, "\x00")
		}
		for _, r := range recs {
			count[key(r)]++
		}
		for _, c := range count {
			if c < 4 {
				t.Errorf("QID %v: a class of %d records in integrated.csv", qid, c)
			}
			minGroup = min(minGroup, c)
		}
	}
	if minGroup != got.MinGroup {
		t.Errorf("min_group %d, integrated.csv %d", got.MinGroup, minGroup)
	}
}
