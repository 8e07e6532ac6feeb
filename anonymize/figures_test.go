package anonymize

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/table"
)

// The figures of docs/anonymize.md for issue 23 (COHORT_ADULT=1): all
// 45,222 complete Adult records, the thesis's seven quasi-identifiers
// (Sun, Table 3.7: age, workclass, education, native-country,
// marital-status, race, sex) with ARX's hierarchies.
//
//	COHORT_ADULT=1 go test ./anonymize -run TestAdultFigures -v -count=1 -timeout 30m
var sunQID = []string{"age", "workclass", "education", "native-country", "marital-status", "race", "sex"}

func sunAdult(t *testing.T) (*Dataset, map[string]*Taxonomy) {
	tab := loadUCIAdult(t, true)
	_, tax := loadARXAdult(t)
	ds, err := Encode(tab, sunQID, tax)
	if err != nil {
		t.Fatal(err)
	}
	return ds, tax
}

// every algorithm for k ∈ {2, 5, 10, 50, 100}: NCP, DM, C_AVG, distortion
// ratio and time (one run each; the machine is shared).
func TestAdultFigures(t *testing.T) {
	needAdultRun(t)
	ds, _ := sunAdult(t)
	if ds.N != 45222 {
		t.Fatalf("%d records", ds.N)
	}
	cols := make([][]string, len(sunQID))
	for a, at := range ds.Attrs {
		for _, leaf := range at.Leaf {
			cols[a] = append(cols[a], at.Tax.Nodes[leaf].Label)
		}
	}
	t.Logf("| k | algorithm | NCP | DM | C_AVG | distortion | classes | time |")
	for _, k := range []int{2, 5, 10, 50, 100} {
		for _, alg := range []string{"optimal", "mondrian", "local", "datafly"} {
			start := time.Now()
			var g *Generalisation
			var pub *table.Table // Mondrian's, with its ranges
			ncp := 0.0
			var sizes []int
			switch alg {
			case "optimal":
				res, err := OptimalFullDomain(ds, k)
				if err != nil {
					t.Fatal(err)
				}
				g, ncp = res.Gen, res.NCP
			case "mondrian":
				res, err := Mondrian(ds, k)
				if err != nil {
					t.Fatal(err)
				}
				g, ncp, pub = res.Generalisation(ds), res.NCP, res.Publish(ds)
			case "local":
				res, err := LocalRecoding(ds, k, nil)
				if err != nil {
					t.Fatal(err)
				}
				g = res.Gen
				ncp = ds.NCP(g)
			case "datafly":
				res, err := Datafly(cols, k, DataflyOrder(cols))
				if err != nil {
					t.Fatal(err)
				}
				ncp = 1 - float64(res.Kept)/float64(len(cols)*ds.N)
				count := map[string]int{}
				for r := range ds.N {
					key := ""
					for a := range cols {
						key += res.Cells[a][r] + "\x00"
					}
					count[key]++
				}
				for _, n := range count {
					sizes = append(sizes, n)
				}
			}
			el := time.Since(start)
			dist := -1.0
			if g != nil { // classes on the published table
				if pub == nil {
					pub = ds.Publish(g)
				}
				cp := Compact(pub)
				sizes, _ = cp.ClassSizes(sunQID)
				dist = ds.DistortionRatio(g)
			}
			if slices.Min(sizes) < k {
				t.Fatalf("%s k=%d: class of %d", alg, k, slices.Min(sizes))
			}
			t.Logf("| %d | %s | %.2f %% | %.3g | %.2f | %.3f | %d | %v |", k, alg, ncp*100, Discernibility(sizes), AvgClassSize(sizes, k), dist, len(sizes), el.Round(time.Millisecond))
		}
	}
}

// Sun §3.7's counts on Adult: minimal 2-sensitive 2-anonymous full-domain
// tables (the thesis: 21) and minimal (2, 1)-sensitive 2-anonymous tables
// (30), with a uniformly random "Health Condition" of eight values in
// Table 3.3's four categories (seed 1; the thesis's draw is unknown).
func TestAdultMinimalCounts(t *testing.T) {
	needAdultRun(t)
	ds, _ := sunAdult(t)
	vals := []string{"HIV", "Cancer", "Phthisis", "Hepatitis", "Obesity", "Asthma", "Flu", "Indigestion"}
	rng := rand.New(rand.NewPCG(1, 1))
	health := make([]string, ds.N)
	for r := range health {
		health[r] = vals[rng.IntN(len(vals))]
	}
	for _, m := range []SensitiveModel{{L: 2}, {L: 2, Alpha: 1, Categories: sunCategories}} {
		c, err := m.Code(health)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		min, err := MinimalFullDomain(ds, 2, c)
		if err != nil {
			t.Fatal(err)
		}
		vulnerable := 0 // a class whose values all fall in one category (the similarity attack)
		for _, v := range min {
			if similarityVulnerable(ds, v, health) {
				vulnerable++
			}
		}
		var vs []string
		for _, v := range min {
			vs = append(vs, strconv.Quote(itoaSlice(v)))
		}
		t.Logf("%s, k = 2: %d minimal tables, %d vulnerable to the similarity attack (%v): %v", m, len(min), vulnerable, time.Since(start).Round(time.Millisecond), vs)
	}
}

func itoaSlice(v []int) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ","
		}
		s += itoa(x)
	}
	return s
}

// similarityVulnerable reports whether some class of the full-domain
// generalisation levels holds sensitive values of one category only.
func similarityVulnerable(ds *Dataset, levels []int, health []string) bool {
	cat := map[string]int{}
	for i, c := range sunCategories {
		for _, v := range c {
			cat[v] = i
		}
	}
	cats := map[string]map[int]bool{}
	for r := range ds.N {
		key := ""
		for a, at := range ds.Attrs {
			key += itoa(at.Tax.Ancestor(int(at.Leaf[r]), levels[a])) + ","
		}
		if cats[key] == nil {
			cats[key] = map[int]bool{}
		}
		cats[key][cat[health[r]]] = true
	}
	for _, c := range cats {
		if len(c) == 1 {
			return true
		}
	}
	return false
}

// adultNumeric is Adult's six numeric columns (age, fnlwgt, education-num,
// capital-gain, capital-loss, hours-per-week) of the first n records (all
// if n is 0 or more than there are), standardised, with their projection
// on the dependency tree's key attributes (AMA's grouping space).
func adultNumeric(tab *table.Table, n int) (z, proj [][]float64, keys []int) {
	num := []string{"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
	if n <= 0 || n > tab.NumRows() {
		n = tab.NumRows()
	}
	x := make([][]float64, n)
	var raw [][]string
	for j, q := range num {
		c, _ := tab.Column(q)
		raw = append(raw, c.Str[:n])
		for r, v := range c.Str[:n] {
			if j == 0 {
				x[r] = make([]float64, len(num))
			}
			x[r][j], _ = strconv.ParseFloat(v, 64)
		}
	}
	z = Standardise(x)
	keys = KeyAttributes(DependencyTree(VIMatrix(raw)), len(num))
	proj = make([][]float64, len(z))
	for r := range z {
		for _, j := range keys {
			proj[r] = append(proj[r], z[r][j])
		}
	}
	return z, proj, keys
}

// MDAV and the thesis's approximate microaggregation on Adult's numeric
// columns, standardised: SSE/SST and time at k = 3, 5, 10.
func TestAdultMDAV(t *testing.T) {
	needAdultRun(t)
	z, proj, keys := adultNumeric(loadUCIAdult(t, true), 0)
	t.Logf("key attributes %v", keys)
	for _, k := range []int{3, 5, 10} {
		for _, c := range []struct {
			name string
			x    [][]float64
			v    MDAVVariant
		}{{"MDAV", z, MDAVStandard}, {"MDAV (thesis)", z, MDAVThesis}, {"AMA", proj, MDAVStandard}} {
			start := time.Now()
			groups, err := MDAV(c.x, k, c.v)
			if err != nil {
				t.Fatal(err)
			}
			el := time.Since(start)
			_, sse, sst, err := Microaggregate(z, groups)
			if err != nil {
				t.Fatalf("k=%d %s: %v", k, c.name, err)
			}
			t.Logf("| %d | %s | %.4f | %d | %v |", k, c.name, sse/sst, len(groups), el.Round(time.Millisecond))
		}
	}
}

// ARX's anonbench anchor for a sensitive model: (4, 3)-recursive
// l-diversity on its Adult configuration (the eight other columns as
// quasi-identifiers, occupation sensitive; Flash 36.5 ms), here as the
// optimal full-domain search with the model (k = 1: the model alone).
//
//	COHORT_ADULT=1 go test ./anonymize -run TestAdultRecursiveL -v -count=1
func TestAdultRecursiveL(t *testing.T) {
	needAdultRun(t)
	tab, tax := loadARXAdult(t)
	var qid []string
	for _, q := range arxQID {
		if q != "occupation" {
			qid = append(qid, q)
		}
	}
	ds, err := Encode(tab, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	occ, _ := tab.Column("occupation")
	sens, err := SensitiveModel{RecursiveC: 4, RecursiveL: 3}.Code(occ.Str)
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Duration
	var res *FullDomainResult
	for range 11 {
		start := time.Now()
		if res, err = OptimalFullDomainModel(ds, []Requirement{{QID: qid, K: 1}}, sens); err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	t.Logf("(4,3)-recursive l-diversity on occupation: levels %v NCP %.2f %% classes %d checked %d of %d; 11 runs: min %v median %v",
		res.Levels, res.NCP*100, res.Classes, res.Checked, res.Lattice, times[0].Round(100*time.Microsecond), times[5].Round(100*time.Microsecond))
}

// Chaytor's comparison (her Table 3: percent of cells not suppressed,
// Datafly against Datafly+OGF) on the 45,222 records and the thesis's seven
// quasi-identifiers (she used 32,561 records with "?" kept and eight
// columns).
//
//	COHORT_ADULT=1 go test ./anonymize -run TestAdultOGF -v -count=1
func TestAdultOGF(t *testing.T) {
	needAdultRun(t)
	ds, _ := sunAdult(t)
	cols := make([][]string, len(sunQID))
	for a, at := range ds.Attrs {
		for _, leaf := range at.Leaf {
			cols[a] = append(cols[a], at.Tax.Nodes[leaf].Label)
		}
	}
	cells := float64(len(cols) * ds.N)
	for _, k := range []int{5, 10, 50, 100} {
		start := time.Now()
		d, err := Datafly(cols, k, DataflyOrder(cols))
		if err != nil {
			t.Fatal(err)
		}
		td := time.Since(start)
		start = time.Now()
		o, err := OGF(cols, k, OGFOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("| %d | %.2f %% | %.2f %% | %v | %v (%d generations, %d evaluations) |", k, 100*float64(d.Kept)/cells, 100*float64(o.Best.Kept)/cells,
			td.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), o.Generations, o.Evaluations)
	}
}
