package integrate_test

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/cohortdm/cohort/internal/shareddata"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/integrate"
	"github.com/cohortdm/cohort/internal/adultdata"
	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
)

// The Adult figure of docs/anonymize.md: the 45,222 records of adult.data
// and adult.test without "?", split by columns over three parties (a: age,
// sex, race; b: education, marital-status, workclass; c: occupation,
// native-country; every party holds the id and the income class), ARX's
// hierarchies, one requirement ⟨all eight columns, k⟩, run over real nodes
// with `sim` and compared with central TDS on the joined table.
//
//	COHORT_ADULT=1 go test ./integrate -run TestAdultIntegrate -v -count=1
//
// COHORT_ADULT_K picks the k values (comma-separated; default 2,5,10,25,50,100);
// COHORT_ADULT_SPEC=DIR also leaves the job directory there for `cohort sim`;
// COHORT_ADULT_DIR is where the Adult files are (default ../shared/data/adult
// from the repository root).
func TestAdultIntegrate(t *testing.T) {
	if os.Getenv("COHORT_ADULT") == "" {
		t.Skip("set COHORT_ADULT=1 to run on UCI Adult")
	}
	root, err := shareddata.Dir(".", "adult", "COHORT_ADULT_DIR")
	if err != nil {
		t.Skipf("UCI Adult not found: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "adult.data")); err != nil {
		t.Skipf("UCI Adult not found: %v", err)
	}
	dir := os.Getenv("COHORT_ADULT_SPEC")
	if dir == "" {
		dir = t.TempDir()
	}
	split := [][]string{{"age", "sex", "race"}, {"education", "marital-status", "workclass"}, {"occupation", "native-country"}}
	in := &adultIntegrateInputs{dir: dir, parties: []string{"a", "b", "c"}}
	in.recs = readAdult(t, root)
	if len(in.recs) != 45222 {
		t.Fatalf("%d records", len(in.recs))
	}
	in.index = map[string]int{}
	for i, n := range adultdata.Names {
		in.index[n] = i
	}
	writeAdultSplit(t, in, split)
	in.tax, in.qid = copyAdultHierarchies(t, root, dir, split)
	ks := []int{2, 5, 10, 25, 50, 100}
	if s := os.Getenv("COHORT_ADULT_K"); s != "" {
		ks = nil
		for _, f := range strings.Split(s, ",") {
			var k int
			fmt.Sscan(f, &k)
			ks = append(ks, k)
		}
	}
	t.Logf("| k | rounds | NCP 3-party | NCP central | min_group | 3-party end to end (sim.Run) | of which align | TDS rounds + publish | central TDS | process CPU, 3-party |")
	for _, k := range ks {
		adultIntegrateK(t, in, k)
	}
}

// adultIntegrateInputs is what every k of TestAdultIntegrate runs on: the
// job directory, the parties, the Adult records with their column index,
// and the quasi-identifier columns with their taxonomies.
type adultIntegrateInputs struct {
	dir     string
	parties []string
	recs    [][]string
	index   map[string]int
	qid     []string
	tax     map[string]*anonymize.Taxonomy
}

// writeAdultSplit writes each party's table to dir: the id, the income
// class and its share of the columns in split.
func writeAdultSplit(t *testing.T, in *adultIntegrateInputs, split [][]string) {
	t.Helper()
	for pi, p := range in.parties {
		f, err := os.Create(filepath.Join(in.dir, p+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.Write(append([]string{"id", "income"}, split[pi]...))
		for r, rec := range in.recs {
			row := []string{fmt.Sprintf("r%05d", r), rec[in.index["income"]]}
			for _, c := range split[pi] {
				row = append(row, rec[in.index[c]])
			}
			w.Write(row)
		}
		w.Flush()
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// copyAdultHierarchies copies ARX's hierarchy of every split column into dir
// for the job and loads it; the columns, in split's order, are the QID.
func copyAdultHierarchies(t *testing.T, root, dir string, split [][]string) (map[string]*anonymize.Taxonomy, []string) {
	t.Helper()
	tax := map[string]*anonymize.Taxonomy{}
	var qid []string
	for _, cs := range split {
		for _, c := range cs {
			b, err := os.ReadFile(filepath.Join(root, "arx", "adult_hierarchy_"+c+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c+".csv")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if tax[c], err = anonymize.LoadTaxonomy(path, c); err != nil {
				t.Fatal(err)
			}
			qid = append(qid, c)
		}
	}
	return tax, qid
}

// writeAdultIntegrateSpec writes the integrate job for one k, with the
// algorithm and PSI mode $COHORT_ADULT_ALG and $COHORT_ADULT_PSI pick.
func writeAdultIntegrateSpec(t *testing.T, in *adultIntegrateInputs, k int) (specPath, mode, alg string) {
	t.Helper()
	specPath = filepath.Join(in.dir, fmt.Sprintf("spec-k%d.yaml", k))
	var spec strings.Builder
	spec.WriteString("kind: integrate\nparties:\n")
	for _, p := range in.parties {
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: adult_%s, path: %s.csv}]\n", p, p, p)
	}
	spec.WriteString("taxonomies:\n")
	for _, c := range in.qid {
		fmt.Fprintf(&spec, "  %s: %s.csv\n", c, c)
	}
	mode = cmp.Or(os.Getenv("COHORT_ADULT_PSI"), "auto")
	alg = cmp.Or(os.Getenv("COHORT_ADULT_ALG"), "tds")
	fmt.Fprintf(&spec, "params:\n  algorithm: %s\n  class: income\n  psi: %s\n  timeout_ms: 600000\n  requirements: [{qid: [%s], k: %d}]\n", alg, mode, strings.Join(in.qid, ", "), k)
	if err := os.WriteFile(specPath, []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return specPath, mode, alg
}

// adultIntegrateK runs the three-party job for one k with sim.Run, runs the
// central algorithm on the joined records, requires both to publish the
// same table and logs the figure's row.
func adultIntegrateK(t *testing.T, in *adultIntegrateInputs, k int) {
	t.Helper()
	recs, index, qid, tax := in.recs, in.index, in.qid, in.tax
	specPath, mode, alg := writeAdultIntegrateSpec(t, in, k)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	out := filepath.Join(t.TempDir(), "out")
	start, cpu0 := time.Now(), cputime.Used(t)
	// ECDH on 45,222 ids keeps every core busy for tens of seconds; on a
	// shared machine the coordinator's 1 s reachability pings then go
	// unanswered. A longer Raft heartbeat widens the window (5
	// heartbeats). OT takes well under a second and needs none.
	var raftTiming node.Timing
	if mode == "ecdh" {
		raftTiming = node.Timing{HeartbeatMS: 2000, ElectionMS: 2000}
	}
	res, err := sim.Run(ctx, specPath, sim.RunOptions{Kinds: job.Registry{"integrate": integrate.Kind{}}, Out: out, Timing: raftTiming})
	wall, cpu := time.Since(start), cputime.Used(t)-cpu0
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	timing := res["timing"].(map[string]any)
	align := timing["align"].(float64) + timing["schema"].(float64)
	rest := 0.0
	for _, ph := range []string{"score", "split", "propose", "cut", "publish"} {
		if v, ok := timing[ph].(float64); ok {
			rest += v
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Published anonymize.Published `json:"-"` // from integrated.csv
		NCP       float64             `json:"ncp"`
		MinGroup  int                 `json:"min_group"`
		Rounds    int                 `json:"rounds"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	got.Published = readPublished(t, filepath.Join(out, integrate.IntegratedFile))
	cstart := time.Now()
	var cpub anonymize.Published
	var cncp float64
	if alg == "mondrian" {
		// the job's NCP is against the taxonomies' (public) ranges; age's
		// is 1–100, the data's 17–90: the central run with public ranges
		// must publish the same table, and both are also measured
		// against the data's ranges, as one-table Mondrian is
		cpub, cncp = adultCentralMondrian(t, recs, index, qid, tax, k, true)
		dpub, dncp := adultCentralMondrian(t, recs, index, qid, tax, k, false)
		t.Logf("k = %d, NCP against the data's ranges: 3-party %.2f %%, central Mondrian %.2f %% (central with public ranges %.2f %%, %d and %d classes)",
			k, dataNCP(t, got.Published, tax, recs, index)*100, dncp*100, cncp*100, len(cpub.Rows), len(dpub.Rows))
	} else {
		cpub, cncp = adultCentral(t, recs, index, qid, tax, k)
	}
	ctime := time.Since(cstart)
	a, _ := json.Marshal(got.Published)
	b, _ := json.Marshal(cpub)
	if string(a) != string(b) {
		t.Errorf("k = %d: the 3-party publication differs from the central one", k)
	}
	t.Logf("| %d | %d | %.2f %% | %.2f %% | %d | %.2f s | %.2f s | %.2f s | %.2f s | %.1f s |", k, got.Rounds, got.NCP*100, cncp*100, got.MinGroup,
		wall.Seconds(), align, rest, ctime.Seconds(), cpu.Seconds())
}

// readAdult reads adult.data and adult.test without the records holding a
// "?", the class without adult.test's trailing dot.
func readAdult(t *testing.T, root string) [][]string {
	recs, err := adultdata.Read(root, "adult.data", "adult.test")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// adultCentral runs TDS in one process with one party holding every column
// (the same attribute order as the job's), and publishes it.
func adultCentral(t *testing.T, recs [][]string, index map[string]int, qid []string, tax map[string]*anonymize.Taxonomy, k int) (anonymize.Published, float64) {
	var attrs []anonymize.TDSAttr
	cols := map[string][]string{}
	tab := &table.Table{Name: "joined"}
	for _, c := range qid {
		attrs = append(attrs, anonymize.TDSAttr{Name: c, Owner: "central", Tax: tax[c]})
		vals := make([]string, len(recs))
		for r, rec := range recs {
			vals[r] = rec[index[c]]
		}
		cols[c] = vals
		tab.Columns = append(tab.Columns, &table.Column{Name: c, Kind: table.Categorical, Str: vals})
	}
	class := make([]string, len(recs))
	for r, rec := range recs {
		class[r] = rec[index["income"]]
	}
	pub, err := anonymize.NewTDSPublic(attrs, []anonymize.Requirement{{QID: qid, K: k}}, class)
	if err != nil {
		t.Fatal(err)
	}
	party, err := anonymize.NewTDSParty("central", pub, cols)
	if err != nil {
		t.Fatal(err)
	}
	res, err := anonymize.RunTDS([]*anonymize.TDSParty{party}, pub)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := anonymize.Encode(tab, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	return res.Public.Publication(class, "income"), ds.PublicNCP(res.Public.Generalisation())
}

// adultCentralMondrian runs one-table strict Mondrian on the joined table
// (the job's attribute order, NCP against the data's ranges, as the
// one-table job does) and publishes it.
func adultCentralMondrian(t *testing.T, recs [][]string, index map[string]int, qid []string, tax map[string]*anonymize.Taxonomy, k int, public bool) (anonymize.Published, float64) {
	tab := &table.Table{Name: "joined"}
	for _, c := range qid {
		vals := make([]string, len(recs))
		for r, rec := range recs {
			vals[r] = rec[index[c]]
		}
		tab.Columns = append(tab.Columns, &table.Column{Name: c, Kind: table.Categorical, Str: vals})
	}
	ds, err := anonymize.Encode(tab, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	if public {
		ds.UsePublicRanges()
	}
	res, err := anonymize.Mondrian(ds, k)
	if err != nil {
		t.Fatal(err)
	}
	pub := res.Publish(ds)
	class := make([]string, len(recs))
	for r, rec := range recs {
		class[r] = rec[index["income"]]
	}
	pub.Columns = append(pub.Columns, &table.Column{Name: "income", Kind: table.Categorical, Str: class})
	return anonymize.Compact(pub), res.NCP
}

// dataNCP is a publication's NCP (the class last) from its labels, numeric
// widths over the data's range: "[lo-hi]" costs (hi − lo)/(max − min), a
// value 0; categorical labels their leaves over the root's.
func dataNCP(t *testing.T, p anonymize.Published, tax map[string]*anonymize.Taxonomy, recs [][]string, index map[string]int) float64 {
	width := map[string]float64{}
	for _, col := range p.Columns[:len(p.Columns)-1] {
		if tax[col].Numeric {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, rec := range recs {
				var x float64
				fmt.Sscan(rec[index[col]], &x)
				lo, hi = min(lo, x), max(hi, x)
			}
			width[col] = hi - lo
		}
	}
	total, n := 0.0, 0
	for _, row := range p.Rows {
		for c, col := range p.Columns[:len(p.Columns)-1] {
			tx, v := tax[col], row.Values[c]
			cost := 0.0
			if tx.Numeric {
				var a, b float64
				if _, err := fmt.Sscanf(v, "[%g-%g]", &a, &b); err == nil {
					cost = (b - a) / width[col]
				}
			} else if id, ok := tx.Find(v); ok && len(tx.Nodes[id].Children) > 0 {
				cost = float64(tx.Nodes[id].Leaves) / float64(tx.NumLeaves())
			} else if !ok {
				t.Fatalf("label %q not in the taxonomy of %s", v, col)
			}
			total += cost * float64(row.Count)
		}
		n += row.Count
	}
	return total / float64(n*(len(p.Columns)-1))
}
