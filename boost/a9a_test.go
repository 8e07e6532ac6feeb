package boost_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/shareddata"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

// a9a is LIBSVM's binary version of the UCI Adult data (Platt, "Fast
// Training of Support Vector Machines using Sequential Minimal
// Optimization", 1998, §"Adult"): the 14 attributes become 123 binary
// features. Every category of the 8 categorical attributes is one feature
// (adult.names' order); the 6 continuous ones are discretised, age,
// fnlwgt, education-num and hours-per-week into 5 quantile bins, and
// capital-gain and capital-loss into 2 (zero, positive). LIBSVM does not
// publish its bin edges; these are the training set's 20/40/60/80 %
// quantiles, a value in the bin of the number of edges at or below it
// (the test set is binned with them). A missing value ('?')
// sets no feature of its attribute.
type a9aAttr struct {
	name  string
	cats  []string  // categorical: its categories
	edges []float64 // continuous: a value v is in bin #(edges at most v)
}

// a9aColumns is the order of adult.data's 14 attributes.
var a9aColumns = []string{"age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
	"relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country"}

// a9aQuantiles are the continuous attributes binned into 5 quantiles.
var a9aQuantiles = map[string]bool{"age": true, "fnlwgt": true, "education-num": true, "hours-per-week": true}

// a9aGuest is the attributes the class holder holds (60 features); the
// other party holds the other 7 (63 features).
var a9aGuest = map[string]bool{"age": true, "workclass": true, "fnlwgt": true, "education": true, "education-num": true,
	"marital-status": true, "occupation": true}

// adultDir is the UCI Adult data: $COHORT_ADULT_DATA, or the project's
// shared copy (shareddata.Dir).
func adultDir(t testing.TB) string {
	dir, err := shareddata.Dir(".", "adult", "COHORT_ADULT_DATA")
	if err != nil {
		t.Skipf("no Adult data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "adult.data")); err != nil {
		t.Skipf("no Adult data in %s", dir)
	}
	return dir
}

// readAdult reads an Adult file: each row's 14 attribute values and its
// label (1: >50K).
func readAdult(t testing.TB, path string) (rows [][]string, ys []int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ",")
		if len(fs) != 15 {
			continue // adult.test's first line, blank lines
		}
		for i := range fs {
			fs[i] = strings.TrimSpace(fs[i])
		}
		y := 0
		if strings.HasPrefix(fs[14], ">50K") {
			y = 1
		}
		rows, ys = append(rows, fs[:14]), append(ys, y)
	}
	return rows, ys
}

// a9aAttrs reads the categories from adult.names and the quantile edges
// from the training rows.
func a9aAttrs(t testing.TB, dir string, train [][]string) []a9aAttr {
	b, err := os.ReadFile(filepath.Join(dir, "adult.names"))
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		name, vals, ok := strings.Cut(line, ": ")
		if !ok || !slices.Contains(a9aColumns, name) || strings.HasPrefix(vals, "continuous") {
			continue
		}
		for _, v := range strings.Split(strings.TrimSuffix(vals, "."), ",") {
			cats[name] = append(cats[name], strings.TrimSpace(v))
		}
	}
	var out []a9aAttr
	for i, name := range a9aColumns {
		a := a9aAttr{name: name, cats: cats[name]}
		switch {
		case a9aQuantiles[name]:
			var xs []float64
			for _, r := range train {
				x, _ := strconv.ParseFloat(r[i], 64)
				xs = append(xs, x)
			}
			slices.Sort(xs)
			for q := 1; q < 5; q++ {
				a.edges = append(a.edges, xs[q*len(xs)/5])
			}
		case a.cats == nil:
			a.edges = []float64{0} // capital-gain, capital-loss: zero or positive
		}
		out = append(out, a)
	}
	if n := a9aWidth(out); n != 123 {
		t.Fatalf("a9a has 123 features, this construction %d", n)
	}
	return out
}

func a9aWidth(attrs []a9aAttr) int {
	n := 0
	for _, a := range attrs {
		n += len(a.cats) + len(a.edges) + min(1, len(a.edges))
	}
	return n
}

// a9aRow is a row's 123 features (0 or 1), in LIBSVM's order, and the
// attribute each feature came from.
func a9aRow(attrs []a9aAttr, r []string) (x []int, from []string) {
	for i, a := range attrs {
		k := len(a.cats) + len(a.edges) + min(1, len(a.edges))
		f := make([]int, k)
		if a.cats != nil {
			if j := slices.Index(a.cats, r[i]); j >= 0 {
				f[j] = 1
			}
		} else if v, err := strconv.ParseFloat(r[i], 64); err == nil {
			j := 0
			for j < len(a.edges) && v >= a.edges[j] {
				j++
			}
			f[j] = 1
		}
		x = append(x, f...)
		for range k {
			from = append(from, a.name)
		}
	}
	return x, from
}

// a9aData builds a9a (train: adult.data's 32,561 rows; test: adult.test's
// 16,281) as a two-party vertical split joined one-to-one by id: table
// guest (the class holder: y and the features of a9aGuest's attributes)
// and table host (the rest). With out set it also writes a9a and a9a.t
// there in LIBSVM's format.
func a9aData(t testing.TB, out string) (g *joinprop.Graph, train, test map[string]*table.Table) {
	dir := adultDir(t)
	trRows, trY := readAdult(t, filepath.Join(dir, "adult.data"))
	if every, _ := strconv.Atoi(os.Getenv("BOOST_A9A_EVERY")); every > 1 {
		// A subsample for profiling: every every-th training row.
		var rs [][]string
		var ys []int
		for i := 0; i < len(trRows); i += every {
			rs, ys = append(rs, trRows[i]), append(ys, trY[i])
		}
		trRows, trY = rs, ys
	}
	teRows, teY := readAdult(t, filepath.Join(dir, "adult.test"))
	attrs := a9aAttrs(t, dir, trRows)
	_, from := a9aRow(attrs, trRows[0])
	schemas := map[string]map[string]table.Kind{"guest": {"id": table.Key, "y": table.Class}, "host": {"id": table.Key}}
	heads := map[string][]string{"guest": {"id", "y"}, "host": {"id"}}
	for j, a := range from {
		side := "host"
		if a9aGuest[a] {
			side = "guest"
		}
		col := fmt.Sprintf("f%03d", j+1)
		schemas[side][col] = table.Numeric
		heads[side] = append(heads[side], col)
	}
	build := func(rows [][]string, ys []int, suffix, libsvm string) map[string]*table.Table {
		var csv = map[string]*strings.Builder{"guest": {}, "host": {}}
		var ls strings.Builder
		for side, h := range heads {
			csv[side].WriteString(strings.Join(h, ",") + "\n")
		}
		for i, r := range rows {
			x, _ := a9aRow(attrs, r)
			fmt.Fprintf(csv["guest"], "%d,%d", i, ys[i])
			fmt.Fprintf(csv["host"], "%d", i)
			fmt.Fprintf(&ls, "%d", 2*ys[i]-1)
			for j, v := range x {
				side := "host"
				if a9aGuest[from[j]] {
					side = "guest"
				}
				fmt.Fprintf(csv[side], ",%d", v)
				if v == 1 {
					fmt.Fprintf(&ls, " %d:1", j+1)
				}
			}
			csv["guest"].WriteString("\n")
			csv["host"].WriteString("\n")
			ls.WriteString("\n")
		}
		if out != "" {
			if err := os.WriteFile(filepath.Join(out, libsvm), []byte(ls.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			for side, b := range csv { // the parties' tables, for a job over nodes
				if err := os.WriteFile(filepath.Join(out, side+suffix+".csv"), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		tabs := map[string]*table.Table{}
		for side, b := range csv {
			var err error
			if tabs[side], err = table.Read(strings.NewReader(b.String()), side+suffix+".csv", side, schemas[side]); err != nil {
				t.Fatal(err)
			}
		}
		return tabs
	}
	train, test = build(trRows, trY, "", "a9a"), build(teRows, teY, "-test", "a9a.t")
	g, err := joinprop.BuildGraph(map[string]string{"guest": "guest", "host": "host"}, schemas, []string{"guest.id = host.id"})
	if err != nil {
		t.Fatal(err)
	}
	return g, train, test
}

// TestA9A measures boost on a9a (docs/boost.md), split in two parties
// (a9aData). BOOST_A9A=clear trains BOOST_TREES trees (10) of depth
// BOOST_DEPTH (6) with 32 bins, sums in the clear, and logs the test
// accuracy and AUC on a9a.t; BOOST_A9A=paillier trains BOOST_TREES trees
// (1) with the sums that cross the edge packed and encrypted under
// 2048-bit Paillier, in one process, and logs the wall and CPU time per
// tree; BOOST_A9A=lattice likewise on the lattice path (a dealt lattice
// key, decryption shares made in process) and checks that the model is
// the one in the clear. BOOST_A9A_OUT=DIR also writes a9a and a9a.t in LIBSVM's format
// there (for testdata/compare_a9a.py) with the parties' tables as CSV
// (guest.csv, host.csv, and -test for the test set, for a job over nodes); BOOST_A9A_EVERY=N trains on every
// N-th training row only (a subsample, for profiles).
func TestA9A(t *testing.T) {
	mode := os.Getenv("BOOST_A9A")
	if mode != "clear" && mode != "paillier" && mode != "lattice" {
		t.Skip("BOOST_A9A=clear, paillier or lattice to measure")
	}
	g, train, test := a9aData(t, os.Getenv("BOOST_A9A_OUT"))
	p := boost.DefaultParams()
	p.MaxDepth, p.Bins = 6, 32
	if mode != "clear" {
		p.Trees = 1
	}
	if v, err := strconv.Atoi(os.Getenv("BOOST_TREES")); err == nil {
		p.Trees = v
	}
	if v, err := strconv.Atoi(os.Getenv("BOOST_DEPTH")); err == nil {
		p.MaxDepth = v
	}
	rows := train["guest"].NumRows()
	var m *boost.Model
	var err error
	var lc boost.LatticeCrypto
	if mode == "lattice" {
		lc = latticeCrypto(t, g) // the key dealt before the clock starts
	}
	cpu0, t0 := cpuTime(t), time.Now()
	what := "sums in the clear"
	if mode == "paillier" {
		c, decs := countingCrypto(t, 2048, uint64(rows), rows) // packed for the join's rows, as the job packs
		m, err = boost.TrainWith(g, train, p, c)
		defer func() { t.Logf("%d decryptions per tree", decs.Load()/int64(p.Trees)) }()
		what = "2048-bit Paillier (packed, pooled randomisers, one process)"
	} else if mode == "lattice" {
		m, err = boost.TrainLattice(g, train, p, lc)
		what = "the lattice path (one process)"
	} else {
		m, err = boost.Train(g, train, p)
	}
	if err != nil {
		t.Fatal(err)
	}
	wall, cpu := time.Since(t0)/time.Duration(p.Trees), (cpuTime(t)-cpu0)/time.Duration(p.Trees)
	if mode == "lattice" {
		want, err := boost.Train(g, train, p)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := modelJSON(t, *m), modelJSON(t, *want); a != b {
			t.Fatal("the lattice path's model differs from the one in the clear")
		}
	}
	ms, ys := margins(t, m, test)
	correct := 0
	for i, x := range ms {
		if (x > 0) == ys[i] {
			correct++
		}
	}
	t.Logf("a9a, %d training rows, %d trees of depth %d, %d bins, %s: %v per tree, CPU %v per tree; test accuracy %.4f AUC %.4f on %d rows",
		rows, p.Trees, p.MaxDepth, p.Bins, what, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(correct)/float64(len(ms)), auc(ms, ys), len(ms))
}
