package anonymize

import (
	"testing"

	"github.com/cohortdm/cohort/table"
)

// occupationCategories orders Adult's occupations in four categories, most
// sensitive first, for the p⁺ and (p, α) models on Adult.
var occupationCategories = [][]string{
	{"Exec-managerial", "Prof-specialty", "Tech-support"},
	{"Sales", "Adm-clerical", "Protective-serv", "Armed-Forces"},
	{"Craft-repair", "Machine-op-inspct", "Transport-moving"},
	{"Other-service", "Handlers-cleaners", "Farming-fishing", "Priv-house-serv"},
}

// adult5000 is the first 5,000 complete records of adult.data on Sun's
// seven quasi-identifiers with ARX's hierarchies, and their occupations.
func adult5000(t *testing.T) (*Dataset, []string) {
	tab := loadUCIAdult(t, false)
	_, tax := loadARXAdult(t)
	small := &table.Table{Name: "adult"}
	for _, c := range tab.Columns {
		small.Columns = append(small.Columns, &table.Column{Name: c.Name, Kind: c.Kind, Str: c.Str[:5000]})
	}
	ds, err := Encode(small, sunQID, tax)
	if err != nil {
		t.Fatal(err)
	}
	occ, _ := small.Column("occupation")
	return ds, occ.Str
}

// Issue 32, item 5: top-down local recoding for k alone must not lose more
// than a publication under a stricter model (k and a sensitive model) on
// the same data, whichever algorithm made that one. On 5,000 Adult
// records at k = 5 it lost 0.311 (NCP) where Mondrian under p⁺ = 3 lost
// 0.256: records moved back to a parent were published at its level on
// every attribute, never specialised on the others.
func TestLocalRecodingNotWorseThanStricter(t *testing.T) {
	ds, occ := adult5000(t)
	const k = 5
	res, err := LocalRecoding(ds, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkGroups(localRows(res), ds.N, k); err != nil {
		t.Fatal(err)
	}
	for a, at := range ds.Attrs { // every published node covers its record's value
		for r, leaf := range at.Leaf {
			if n := int(res.Gen.Node[a][r]); at.Tax.LCA(int(leaf), n) != n {
				t.Fatalf("record %d: %s %q published as %q", r, at.Name, at.Tax.Nodes[leaf].Label, at.Tax.Nodes[n].Label)
			}
		}
	}
	kOnly := ds.NCP(res.Gen)
	for name, m := range map[string]SensitiveModel{
		"p = 3":           {L: 3},
		"p⁺ = 3":          {PPlus: 3, Categories: occupationCategories},
		"(3, 1)":          {L: 3, Alpha: 1, Categories: occupationCategories},
		"entropy l = 2":   {EntropyL: 2},
		"recursive (3,2)": {RecursiveC: 3, RecursiveL: 2},
	} {
		sens, err := m.Code(occ)
		if err != nil {
			t.Fatal(err)
		}
		loc, err := LocalRecoding(ds, k, sens)
		if err != nil {
			t.Fatal(err)
		}
		mon, err := MondrianModel(ds, k, sens)
		if err != nil {
			t.Fatal(err)
		}
		pub := ds.Publish(loc.Gen)
		pub.Columns = append(pub.Columns, &table.Column{Name: "occupation", Kind: table.Categorical, Str: occ})
		cp := Compact(pub)
		reqs := []Requirement{{QID: sunQID, K: k}}
		if m, err := cp.MinGroups(reqs); err != nil || m[0] < k {
			t.Errorf("%s: published smallest class %v, %v", name, m, err)
		}
		if err := cp.CheckModel(reqs, "occupation", m); err != nil {
			t.Errorf("%s: the publication: %v", name, err)
		}
		t.Logf("%s: local %.4f, Mondrian %.4f (k alone: local %.4f)", name, ds.NCP(loc.Gen), mon.NCP, kOnly)
		if kOnly > ds.NCP(loc.Gen)+1e-12 || kOnly > mon.NCP+1e-12 {
			t.Errorf("k = %d alone: NCP %.4f; with %s local recoding %.4f, Mondrian %.4f", k, kOnly, name, ds.NCP(loc.Gen), mon.NCP)
		}
	}
}

// localRows is the records of each class of a local recoding.
func localRows(res *LocalResult) [][]int {
	var out [][]int
	for _, c := range res.Classes {
		var g []int
		for _, r := range c.Rows {
			g = append(g, int(r))
		}
		out = append(out, g)
	}
	return out
}
