package anonymize

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var sunCategories = [][]string{{"HIV", "Cancer"}, {"Phthisis", "Hepatitis"}, {"Obesity", "Asthma"}, {"Flu", "Indigestion"}}

func okOn(t *testing.T, m SensitiveModel, vals ...string) bool {
	t.Helper()
	c, err := m.Code(vals)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int32, len(vals))
	for i := range all {
		all[i] = int32(i)
	}
	return c.Diverse(all)
}

// Sun TV-3 (Tables 3.2, 3.4, 3.5 under Table 3.3's categories), each group
// checked as one class: (size, distinct values, distinct categories, weight).
func TestSensitiveModelsSunTV3(t *testing.T) {
	cases := []struct {
		name string
		vals []string
		m    SensitiveModel
		want bool
	}{
		// Table 3.2, group 1: (4, 2, 1, 0): 2-sensitive, not 2⁺.
		{"3.2 g1 p=2", []string{"HIV", "HIV", "Cancer", "Cancer"}, SensitiveModel{L: 2}, true},
		{"3.2 g1 p+=2", []string{"HIV", "HIV", "Cancer", "Cancer"}, SensitiveModel{PPlus: 2, Categories: sunCategories}, false},
		// Table 3.4, group 3: (4, 3, 2, 2): 2⁺-sensitive.
		{"3.4 g3 p+=2", []string{"HIV", "Cancer", "Flu", "Flu"}, SensitiveModel{PPlus: 2, Categories: sunCategories}, true},
		// Table 3.5, group 1: (4, 4, 3, 1): (3, 1) holds, (3, 1.5) does not.
		{"3.5 g1 (3,1)", []string{"HIV", "Cancer", "Obesity", "Hepatitis"}, SensitiveModel{L: 3, Alpha: 1, Categories: sunCategories}, true},
		{"3.5 g1 (3,1.5)", []string{"HIV", "Cancer", "Obesity", "Hepatitis"}, SensitiveModel{L: 3, Alpha: 1.5, Categories: sunCategories}, false},
		// Table 3.5, group 3: weight 3 only with the duplicate Flu counted.
		{"3.5 g3 α=3", []string{"Cancer", "Flu", "Flu", "Indigestion"}, SensitiveModel{Alpha: 3, Categories: sunCategories}, true},
		{"3.5 g3 (3⁺,1)", []string{"Cancer", "Flu", "Flu", "Indigestion"}, SensitiveModel{PPlus: 3, Alpha: 1, Categories: sunCategories}, false},
		// TV-2: (person, 437*) = {Cancer, Cancer, Chest Pain, Obesity} has entropy 1.5 bits.
		{"entropy 2", []string{"Cancer", "Cancer", "Chest Pain", "Obesity"}, SensitiveModel{EntropyL: 2}, true},
		{"entropy 3", []string{"Cancer", "Cancer", "Chest Pain", "Obesity"}, SensitiveModel{EntropyL: 3}, false},
		// recursive (c, l): counts 3, 1, 1: r₁ = 3 < c·(1 + 1) for c = 2, not c = 1.5.
		{"recursive (2,2)", []string{"a", "a", "a", "b", "c"}, SensitiveModel{RecursiveC: 2, RecursiveL: 2}, true},
		{"recursive (1.5,2)", []string{"a", "a", "a", "b", "c"}, SensitiveModel{RecursiveC: 1.5, RecursiveL: 2}, false},
		{"recursive (4,3)", []string{"a", "a", "a", "b", "c"}, SensitiveModel{RecursiveC: 4, RecursiveL: 3}, true},
		{"recursive (3,3)", []string{"a", "a", "a", "b", "c"}, SensitiveModel{RecursiveC: 3, RecursiveL: 3}, false},
	}
	for _, c := range cases {
		if got := okOn(t, c.m, c.vals...); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Every model is a function of the histogram, and monotone: the union of
// two satisfying classes satisfies it (what the lattice pruning and the
// top-down algorithms rely on). Checked on random classes against a naive
// evaluation written here.
func TestSensitiveModelsMonotoneAndNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []string{"HIV", "Cancer", "Phthisis", "Hepatitis", "Obesity", "Asthma", "Flu", "Indigestion"}
	models := []SensitiveModel{{L: 3}, {EntropyL: 2.5}, {RecursiveC: 2, RecursiveL: 3}, {PPlus: 3, Categories: sunCategories},
		{L: 2, Alpha: 2, Categories: sunCategories}, {PPlus: 2, Alpha: 1.5, Categories: sunCategories}}
	for _, m := range models {
		for range 300 {
			a := make([]string, 1+rng.IntN(8))
			b := make([]string, 1+rng.IntN(8))
			for i := range a {
				a[i] = vals[rng.IntN(3+rng.IntN(6))]
			}
			for i := range b {
				b[i] = vals[rng.IntN(len(vals))]
			}
			oa, ob, oab := okOn(t, m, a...), okOn(t, m, b...), okOn(t, m, append(slices.Clone(a), b...)...)
			if oa && ob && !oab {
				t.Fatalf("%s: %v and %v satisfy it, their union not", m, a, b)
			}
			if oa != naiveModel(m, a) {
				t.Fatalf("%s on %v: %v, naive %v", m, a, oa, !oa)
			}
		}
	}
}

func naiveModel(m SensitiveModel, vals []string) bool {
	count := map[string]int{}
	cats := map[int]bool{}
	weight := 0.0
	for _, v := range vals {
		count[v]++
		for i, c := range m.Categories {
			if slices.Contains(c, v) {
				cats[i] = true
				if i < len(m.Categories)-1 {
					weight += float64(i) / float64(len(m.Categories)-1)
				} else {
					weight++
				}
			}
		}
	}
	if len(count) < m.L || len(cats) < m.PPlus || weight < m.Alpha-1e-9 {
		return false
	}
	if m.EntropyL > 1 && naiveEntropy(vals) < math.Log2(m.EntropyL)-1e-12 {
		return false
	}
	if m.RecursiveL > 1 {
		var rs []int
		for _, c := range count {
			rs = append(rs, c)
		}
		slices.Sort(rs)
		slices.Reverse(rs)
		if len(rs) < m.RecursiveL {
			return false
		}
		tail := 0
		for _, x := range rs[m.RecursiveL-1:] {
			tail += x
		}
		return float64(rs[0]) < m.RecursiveC*float64(tail)
	}
	return true
}

// sunTV1 is Sun's Table 2.1 (TV-1) with the hierarchies of Fig. 2.1:
// Gender → person, Zip 4370 → 437* → 43**.
func sunTV1(t *testing.T) (*Dataset, []string) {
	t.Helper()
	gender, err := ReadYAML(strings.NewReader("column: gender\nroot: {label: person, children: [{label: Male}, {label: Female}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	zip, err := ReadYAML(strings.NewReader("column: zip\nroot: {label: '43**', children: [{label: '437*', children: [{label: '4370'}, {label: '4373'}]}, {label: '435*', children: [{label: '4350'}, {label: '4352'}]}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tab := mkTable([]string{"gender", "zip", "disease"},
		"Male,4370,Cancer", "Male,4370,Cancer", "Male,4352,Cancer", "Female,4373,Chest Pain", "Female,4373,Obesity", "Female,4350,Flu")
	ds, err := Encode(tab, []string{"gender", "zip"}, map[string]*Taxonomy{"gender": gender, "zip": zip})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tab.Column("disease")
	return ds, c.Str
}

// Sun TV-2 (Fig. 2.4): the minimal nodes of the lattice ⟨G, Z⟩ found with
// the privacy hash table, and at every node of the lattice the hash table
// agrees with the lattice search's own check (roll-up from memoised classes).
func TestPrivacyHashTableSunTV2(t *testing.T) {
	ds, disease := sunTV1(t)
	code := func(m SensitiveModel) *Coded {
		c, err := m.Code(disease)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		k    int
		sens *Coded
		want [][]int
	}{
		{2, nil, [][]int{{1, 1}, {0, 2}}},
		{3, nil, [][]int{{0, 2}}},
		{2, code(SensitiveModel{L: 2}), [][]int{{1, 1}}},
		{2, code(SensitiveModel{EntropyL: 2}), [][]int{{1, 1}}},
	}
	for _, c := range cases {
		got, err := MinimalFullDomain(ds, c.k, c.sens)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("k=%d %s: minimal %v, want %v", c.k, c.sens.modelName(), got, c.want)
		}
		L, err := newLattice(ds, c.sens)
		if err != nil {
			t.Fatal(err)
		}
		if err := L.require([]Requirement{{QID: []string{"gender", "zip"}, K: c.k}}); err != nil {
			t.Fatal(err)
		}
		for i := range L.size() {
			lv := L.levelsOf(i)
			if h, l := HashTableSatisfies(ds, lv, c.k, c.sens), L.satisfies(L.classes(i)); h != l {
				t.Errorf("k=%d %s at %v: hash table %v, lattice %v", c.k, c.sens.modelName(), lv, h, l)
			}
		}
	}
	// strategy 1 of the thesis's example: ⟨G0,Z0⟩ → ⟨G1,Z0⟩ → ⟨G1,Z1⟩ → ⟨G1,Z2⟩: height 2
	if h := StrategyLevel(ds, [][]int{{0, 0}, {1, 0}, {1, 1}, {1, 2}}, 2, nil); h != 2 {
		t.Errorf("strategy 1: height %d, want 2", h)
	}
}

// Sun TV-4 (Table 3.6, Fig. 3.1): local recoding of Zip for (2, 1)-sensitive
// 2-anonymity: tuples 1 and 2 keep 14248, tuples 3 and 4 become 1424*.
func TestLocalRecodingSunTV4(t *testing.T) {
	zip, err := ReadYAML(strings.NewReader("column: zip\nroot: {label: '*****', children: [{label: '1****', children: [{label: '14***', children: [{label: '142**', children: [{label: '1424*', children: [{label: '14248'}, {label: '14247'}]}]}]}]}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tab := mkTable([]string{"zip", "disease"}, "14248,HIV", "14248,Indigestion", "14248,Flu", "14247,Cancer")
	ds, err := Encode(tab, []string{"zip"}, map[string]*Taxonomy{"zip": zip})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tab.Column("disease")
	sens, err := SensitiveModel{L: 2, Alpha: 1, Categories: sunCategories}.Code(c.Str)
	if err != nil {
		t.Fatal(err)
	}
	res, err := LocalRecoding(ds, 2, sens)
	if err != nil {
		t.Fatal(err)
	}
	pub := ds.Publish(res.Gen)
	z, _ := pub.Column("zip")
	if want := []string{"14248", "14248", "1424*", "1424*"}; !slices.Equal(z.Str, want) {
		t.Fatalf("published %v, want %v", z.Str, want)
	}
	pub.Columns = append(pub.Columns, c)
	if err := CheckPAlphaSensitive(pub, []string{"zip"}, "disease", 2, 1, 2, CategoryWeights(sunCategories)); err != nil {
		t.Fatal(err)
	}
}

// TDS with a sensitive model of the shared class (recursive (c, l) and
// (p, α) over a three-valued class): every class of every QID of the final
// state satisfies it (checked naively), and it binds (plain TDS leaves a
// class that does not).
func TestTDSClassModel(t *testing.T) {
	attrs, cols, class := synthetic(t, 600, 3)
	rng := rand.New(rand.NewPCG(9, 9))
	for r := range class {
		if rng.IntN(4) == 0 {
			class[r] = "maybe"
		}
	}
	reqs := []Requirement{{[]string{"a0", "a2", "a4"}, 5}, {[]string{"a1", "a3", "a5"}, 5}}
	cats := [][]string{{"yes"}, {"maybe"}, {"no"}}
	for _, m := range []SensitiveModel{{RecursiveC: 2, RecursiveL: 2}, {L: 2, Alpha: 2, Categories: cats}} {
		pub, err := NewTDSPublic(attrs, reqs, class)
		if err != nil {
			t.Fatal(err)
		}
		plain := pub
		if pub, err = pub.WithClassModel(m, class); err != nil {
			t.Fatal(err)
		}
		run := func(pub *TDSPublic) *TDSResult {
			var parties []*TDSParty
			for _, n := range []string{"p1", "p2", "p3"} {
				own := map[string][]string{}
				for _, a := range attrs {
					if a.Owner == n {
						own[a.Name] = cols[a.Name]
					}
				}
				p, err := NewTDSParty(n, pub, own)
				if err != nil {
					t.Fatal(err)
				}
				parties = append(parties, p)
			}
			res, err := RunTDS(parties, pub)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		violations := func(res *TDSResult) int {
			v := 0
			for _, r := range reqs {
				classes := map[string][]string{}
				for row := range class {
					key := ""
					for _, q := range r.QID {
						a := slices.IndexFunc(attrs, func(x TDSAttr) bool { return x.Name == q })
						key += itoa(int(res.Public.Gen[a][row])) + ","
					}
					classes[key] = append(classes[key], class[row])
				}
				for _, vals := range classes {
					if !naiveModel(m, vals) {
						v++
					}
				}
			}
			return v
		}
		if v := violations(run(pub)); v > 0 {
			t.Errorf("%s: %d classes violate it", m, v)
		}
		if v := violations(run(plain)); v == 0 {
			t.Errorf("%s: plain TDS satisfies it already; the test exercises nothing", m)
		}
	}
}
