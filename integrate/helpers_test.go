package integrate

import (
	"context"
	"encoding/csv"
	"fmt"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/table"
)

// partyTable is one party's table in a test job: its header (with the id
// and class columns) and rows.
type partyTable struct {
	name string
	cols []string
	rows [][]string
}

// testJob is a job written to a directory: tables, taxonomies and spec.
type testJob struct {
	dir     string
	spec    *job.Spec
	parties []partyTable
	tax     map[string]*anonymize.Taxonomy
	reqs    []anonymize.Requirement
	l       int
	taxYAML map[string]string
	extra   string
	// algorithm is params.algorithm as the central baseline must run it.
	algorithm string
}

// writeJob writes every party's CSV, the taxonomy files (column -> file
// contents, YAML) and the spec, whose params are the requirements and extra.
func writeJob(t testing.TB, parties []partyTable, taxYAML map[string]string, reqs []anonymize.Requirement, extra string) *testJob {
	t.Helper()
	var params strings.Builder
	params.WriteString("  requirements:\n")
	for _, r := range reqs {
		fmt.Fprintf(&params, "    - {qid: [%s], k: %d}\n", strings.Join(r.QID, ", "), r.K)
	}
	params.WriteString(extra)
	j := &testJob{parties: parties, reqs: reqs, taxYAML: taxYAML, extra: extra}
	j.spec = writeSpec(t, j, params.String())
	return j
}

// rewrite writes an edited job's files again, in a new directory.
func rewrite(t testing.TB, j *testJob) *testJob {
	t.Helper()
	return writeJob(t, j.parties, j.taxYAML, j.reqs, j.extra)
}

// writeJobRaw writes the job with params given as YAML (indented by two).
func writeJobRaw(t testing.TB, j *testJob, params string) *job.Spec {
	t.Helper()
	return writeSpec(t, &testJob{parties: j.parties, taxYAML: j.taxYAML}, params)
}

func writeSpec(t testing.TB, j *testJob, params string) *job.Spec {
	t.Helper()
	dir := t.TempDir()
	var spec strings.Builder
	spec.WriteString("kind: integrate\nparties:\n")
	for _, p := range j.parties {
		f, err := os.Create(filepath.Join(dir, p.name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.Write(p.cols)
		w.WriteAll(p.rows)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t_%s, path: %s.csv}]\n", p.name, p.name, p.name)
	}
	spec.WriteString("taxonomies:\n")
	j.tax = map[string]*anonymize.Taxonomy{}
	for _, col := range slices.Sorted(maps.Keys(j.taxYAML)) {
		path := filepath.Join(dir, col+".yaml")
		if err := os.WriteFile(path, []byte(j.taxYAML[col]), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  %s: %s.yaml\n", col, col)
		tx, err := anonymize.LoadTaxonomy(path, col)
		if err != nil {
			t.Fatal(err)
		}
		j.tax[col] = tx
	}
	spec.WriteString("params:\n" + params)
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec.String())
	j.dir = dir
	return s
}

// run runs the job in memory with a data dir per party.
func (j *testJob) run(t testing.TB, opts jobtest.Options) (*jobtest.Report, error) {
	t.Helper()
	return j.runKind(t, Kind{}, opts)
}

// runKind runs the job as kind (a coordinator that misbehaves, say).
func (j *testJob) runKind(t testing.TB, kind job.Kind, opts jobtest.Options) (*jobtest.Report, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if opts.Secrets == nil {
		opts.Secrets = map[string]job.Secrets{}
		for _, p := range j.parties {
			opts.Secrets[p.name] = jobtest.DirSecrets(t.TempDir())
		}
	}
	return jobtest.Run(ctx, kind, j.spec, opts)
}

// central is the plaintext baseline: the parties' tables joined on the ids
// every party holds, TDS run by one party owning every attribute (in the
// job's attribute order: owners by name, then table order), published as
// distinct rows with counts by code independent of the job's, with its NCP.
func (j *testJob) central(t testing.TB) (anonymize.Published, float64) {
	t.Helper()
	ps := slices.Clone(j.parties)
	slices.SortFunc(ps, func(a, b partyTable) int { return strings.Compare(a.name, b.name) })
	byID := make([]map[string][]string, len(ps))
	for i, p := range ps {
		byID[i] = map[string][]string{}
		for _, r := range p.rows {
			byID[i][r[0]] = r
		}
	}
	var ids []string
	for id := range byID[0] {
		common := true
		for i := range ps {
			if _, ok := byID[i][id]; !ok {
				common = false
			}
		}
		if common {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var attrs []anonymize.TDSAttr
	joined := &table.Table{Name: "joined"}
	cols := map[string][]string{}
	var class []string
	for i, p := range ps {
		for ci, c := range p.cols {
			if c == "id" || c == "class" {
				continue
			}
			vals := make([]string, len(ids))
			for r, id := range ids {
				vals[r] = byID[i][id][ci]
			}
			attrs = append(attrs, anonymize.TDSAttr{Name: c, Owner: "central", Tax: j.tax[c]})
			cols[c] = vals
			joined.Columns = append(joined.Columns, &table.Column{Name: c, Kind: table.Categorical, Str: vals})
		}
	}
	ci := slices.Index(ps[0].cols, "class")
	for _, id := range ids {
		class = append(class, byID[0][id][ci])
	}
	if j.algorithm == "mondrian" {
		return j.centralMondrian(t, joined, attrs, class)
	}
	pub, err := anonymize.NewTDSPublic(attrs, j.reqs, class)
	if err != nil {
		t.Fatal(err)
	}
	if j.l > 1 {
		if pub, err = pub.WithClassDiversity(j.l); err != nil {
			t.Fatal(err)
		}
	}
	party, err := anonymize.NewTDSParty("central", pub, cols)
	if err != nil {
		t.Fatal(err)
	}
	res, err := anonymize.RunTDS([]*anonymize.TDSParty{party}, pub)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = a.Name
	}
	ds, err := anonymize.Encode(joined, names, j.tax)
	if err != nil {
		t.Fatal(err)
	}
	ncp := ds.PublicNCP(res.Public.Generalisation())
	return naiveRows(append(names, "class"), len(ids), func(r int) []string {
		var vals []string
		for a, at := range attrs {
			vals = append(vals, at.Tax.Nodes[res.Public.Gen[a][r]].Label)
		}
		return append(vals, class[r])
	}), ncp
}

// naiveRows counts the n records' rows (row(r) gives record r's values)
// into a publication, by code independent of the package's.
func naiveRows(cols []string, n int, row func(r int) []string) anonymize.Published {
	count := map[string]int{}
	for r := range n {
		count[strings.Join(row(r), "\x00")]++
	}
	out := anonymize.Published{Columns: cols}
	for _, k := range slices.Sorted(maps.Keys(count)) {
		out.Rows = append(out.Rows, anonymize.Row{Values: strings.Split(k, "\x00"), Count: count[k]})
	}
	slices.SortFunc(out.Rows, func(a, b anonymize.Row) int { return slices.Compare(a.Values, b.Values) })
	return out
}

// centralMondrian is the plaintext baseline of algorithm mondrian: strict
// Mondrian on the joined table (the job's attribute order, public ranges,
// k the largest k_i, distinct l-diversity of the class), its classes
// published by label and counted naively.
func (j *testJob) centralMondrian(t testing.TB, joined *table.Table, attrs []anonymize.TDSAttr, class []string) (anonymize.Published, float64) {
	t.Helper()
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = a.Name
	}
	ds, err := anonymize.Encode(joined, names, j.tax)
	if err != nil {
		t.Fatal(err)
	}
	ds.UsePublicRanges()
	k := 0
	for _, r := range j.reqs {
		k = max(k, r.K)
	}
	var sens *anonymize.Coded
	if j.l > 1 {
		if sens, err = (anonymize.SensitiveModel{L: j.l}).Code(class); err != nil {
			t.Fatal(err)
		}
	}
	res, err := anonymize.MondrianModel(ds, k, sens)
	if err != nil {
		t.Fatal(err)
	}
	pub := res.Publish(ds)
	return naiveRows(append(names, "class"), len(class), func(r int) []string {
		var vals []string
		for _, c := range pub.Columns {
			vals = append(vals, c.Str[r])
		}
		return append(vals, class[r])
	}), res.NCP
}

// expand lists the publication's records.
func expand(p anonymize.Published) [][]string {
	var out [][]string
	for _, r := range p.Rows {
		for range r.Count {
			out = append(out, r.Values)
		}
	}
	return out
}

// naiveCheck is an independent checker (quadratic, sharing no code with
// the package): every record's class on each requirement's QID holds at
// least k records and, with l > 1, at least l distinct class labels.
func naiveCheck(t testing.TB, p anonymize.Published, reqs []anonymize.Requirement, l int) int {
	t.Helper()
	recs := expand(p)
	minGroup := len(recs)
	for _, r := range reqs {
		var idx []int
		for _, q := range r.QID {
			idx = append(idx, slices.Index(p.Columns, q))
		}
		for _, a := range recs {
			n := 0
			labels := map[string]bool{}
			for _, b := range recs {
				same := true
				for _, i := range idx {
					if a[i] != b[i] {
						same = false
					}
				}
				if same {
					n++
					labels[b[len(b)-1]] = true
				}
			}
			minGroup = min(minGroup, n)
			if n < r.K {
				t.Errorf("requirement %s: a class of %d records", r, n)
				return minGroup
			}
			if l > 1 && len(labels) < l {
				t.Errorf("requirement %s: a class with %d class labels, l = %d", r, len(labels), l)
				return minGroup
			}
		}
	}
	return minGroup
}

// seed003Job splits Reddy et al.'s Table 1 (corrected) over three parties
// (gender, education, age), each also holding a few ids the others lack.
func seed003Job(t testing.TB, reqs []anonymize.Requirement, extra string) *testJob {
	t.Helper()
	f, err := os.Open("../anonymize/testdata/seed003/table1.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// header: id,class,gender,education,age
	parts := []partyTable{{name: "alpha", cols: []string{"id", "class", "gender"}},
		{name: "beta", cols: []string{"id", "class", "education"}},
		{name: "gamma", cols: []string{"age", "id", "class"}}}
	for _, r := range recs[1:] {
		parts[0].rows = append(parts[0].rows, []string{r[0], r[1], r[2]})
		parts[1].rows = append(parts[1].rows, []string{r[0], r[1], r[3]})
		parts[2].rows = append(parts[2].rows, []string{r[4], r[0], r[1]})
	}
	// ids only one party holds: they must drop out
	parts[0].rows = append(parts[0].rows, []string{"only-alpha-1", "Y", "F"})
	parts[1].rows = append(parts[1].rows, []string{"only-beta-1", "N", "Civil"})
	parts[2].rows = append(parts[2].rows, []string{"40", "only-gamma-1", "Y"})
	tax := map[string]string{}
	for _, c := range []string{"gender", "education", "age"} {
		b, err := os.ReadFile(filepath.Join("../anonymize/testdata/seed003", c+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		tax[c] = string(b)
	}
	j := writeJob(t, parts, tax, reqs, extra)
	// the central run reads the age column as the job does: id first
	for i := range j.parties[2].rows {
		r := j.parties[2].rows[i]
		j.parties[2].rows[i] = []string{r[1], r[2], r[0]}
	}
	j.parties[2].cols = []string{"id", "class", "age"}
	return j
}

// randomJob makes n records over three parties, each owning cols
// categorical columns with two-level taxonomies of distinctive labels, the
// class correlated with the first column of each party; every party also
// holds ids the others lack.
func randomJob(t testing.TB, seed uint64, n int, reqs []anonymize.Requirement, extra string) *testJob {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	names := []string{"north", "south", "west"}
	tax := map[string]string{}
	parts := make([]partyTable, len(names))
	type colInfo struct {
		name   string
		leaves []string
	}
	cols := make([][]colInfo, len(names))
	for pi, p := range names {
		parts[pi] = partyTable{name: p, cols: []string{"id", "class"}}
		for c := 0; c < 2; c++ {
			col := fmt.Sprintf("%s%c", p[:2], 'a'+c)
			var y strings.Builder
			fmt.Fprintf(&y, "column: %s\nroot:\n  label: any-%s\n  children:\n", col, col)
			var leaves []string
			groups := 2 + rng.IntN(2)
			for g := 0; g < groups; g++ {
				fmt.Fprintf(&y, "    - label: grp-%s-%d\n      children:\n", col, g)
				for l := 0; l < 2+rng.IntN(3); l++ {
					leaf := fmt.Sprintf("rawval-%s-%d-%d", col, g, l)
					fmt.Fprintf(&y, "        - label: %s\n", leaf)
					leaves = append(leaves, leaf)
				}
			}
			tax[col] = y.String()
			cols[pi] = append(cols[pi], colInfo{col, leaves})
			parts[pi].cols = append(parts[pi].cols, col)
		}
	}
	for r := 0; r < n; r++ {
		id := fmt.Sprintf("rid-%03d-%05d", rng.IntN(1000), r)
		var vals [][]string
		score := 0
		for pi := range names {
			v := []string{}
			for ci, c := range cols[pi] {
				li := rng.IntN(len(c.leaves))
				if ci == 0 {
					score += li
				}
				v = append(v, c.leaves[li])
			}
			vals = append(vals, v)
		}
		class := "no"
		if rng.IntN(8) < score%4+2 {
			class = "yes"
		}
		for pi := range names {
			parts[pi].rows = append(parts[pi].rows, append([]string{id, class}, vals[pi]...))
		}
	}
	for pi := range names {
		for x := 0; x < 3; x++ {
			row := []string{fmt.Sprintf("lonely-%s-%d", names[pi], x), "yes"}
			for _, c := range cols[pi] {
				row = append(row, c.leaves[x%len(c.leaves)])
			}
			parts[pi].rows = append(parts[pi].rows, row)
		}
		// shuffle each party's row order: alignment must not depend on it
		rng.Shuffle(len(parts[pi].rows), func(a, b int) { parts[pi].rows[a], parts[pi].rows[b] = parts[pi].rows[b], parts[pi].rows[a] })
	}
	return writeJob(t, parts, tax, reqs, extra)
}

// published extracts the publication from a jobtest result.
func published(t testing.TB, rep *jobtest.Report) anonymize.Published {
	t.Helper()
	p, ok := rep.Result["published"].(anonymize.Published)
	if !ok {
		t.Fatalf("result has no publication: %v", rep.Result)
	}
	return p
}
