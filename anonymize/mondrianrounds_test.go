package anonymize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// partyDatasets encodes each party's columns (cols[p]) of t as its own
// dataset, with public ranges, and numbers the attributes in party order.
func partyDatasets(t *testing.T, tab *table.Table, tax map[string]*Taxonomy, cols [][]string, k int, sens *Coded) []*MondrianParty {
	t.Helper()
	var parties []*MondrianParty
	g := 0
	for i, cs := range cols {
		ds, err := Encode(tab, cs, tax)
		if err != nil {
			t.Fatal(err)
		}
		ds.UsePublicRanges()
		p := &MondrianParty{Name: fmt.Sprintf("p%d", i), Own: ds, K: k, Sens: sens}
		for range cs {
			p.Global = append(p.Global, g)
			g++
		}
		parties = append(parties, p)
	}
	return parties
}

func sortedClasses(groups [][]int32) [][]int32 {
	out := make([][]int32, len(groups))
	for i, g := range groups {
		out[i] = slices.Sorted(slices.Values(g))
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// Mondrian over columns held by three parties ends at exactly central
// Mondrian's partition (the same attribute order, public ranges), with and
// without l-diversity of a column every party holds; on Reddy et al.'s
// table (a numeric age) and on random tables with wider taxonomies.
func TestMondrianRoundsEqualCentral(t *testing.T) {
	seedTab, seedTax := seed003(t)
	attrs, cols, _ := synthetic(t, 400, 9)
	syn := &table.Table{Name: "syn"}
	synTax := map[string]*Taxonomy{}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, a := range attrs {
		syn.Columns = append(syn.Columns, &table.Column{Name: a.Name, Kind: table.Categorical, Str: cols[a.Name]})
		synTax[a.Name] = a.Tax
	}
	synClass := make([]string, 400)
	for r := range synClass {
		synClass[r] = string(rune('A' + rng.IntN(3)))
	}
	seedClass, _ := seedTab.Column("class")
	cases := []struct {
		name  string
		tab   *table.Table
		tax   map[string]*Taxonomy
		split [][]string
		class []string
		ks    []int
	}{
		{"reddy", seedTab, seedTax, [][]string{{"gender"}, {"education"}, {"age"}}, seedClass.Str, []int{2, 3, 4}},
		{"random", syn, synTax, [][]string{{"a0", "a1"}, {"a2", "a3"}, {"a4", "a5"}}, synClass, []int{3, 5, 10}},
	}
	for _, c := range cases {
		for _, k := range c.ks {
			for _, l := range []int{0, 2} {
				var sens *Coded
				if l > 0 {
					var err error
					if sens, err = (SensitiveModel{L: l}).Code(c.class); err != nil {
						t.Fatal(err)
					}
				}
				parties := partyDatasets(t, c.tab, c.tax, c.split, k, sens)
				st, err := RunMondrianRounds(parties, c.tab.NumRows(), nil)
				if err != nil {
					t.Fatal(err)
				}
				all := slices.Concat(c.split...)
				ds, err := Encode(c.tab, all, c.tax)
				if err != nil {
					t.Fatal(err)
				}
				ds.UsePublicRanges()
				central, err := MondrianModel(ds, k, sens)
				if err != nil {
					t.Fatal(err)
				}
				var cg [][]int32
				for _, cl := range central.Classes {
					cg = append(cg, cl.Rows)
				}
				got, want := sortedClasses(st.Groups), sortedClasses(cg)
				if !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("%s k=%d l=%d: %d classes over three parties, %d central", c.name, k, l, len(got), len(want))
				}
				if len(got) < 2 {
					t.Errorf("%s k=%d l=%d: nothing was cut", c.name, k, l)
				}
			}
		}
	}
}

// A forged cut (a part left empty, a group not open, a group cut twice) is
// refused by Apply, and a proposal for a closed group by ChooseCuts.
func TestMondrianRoundsRefuseForgeries(t *testing.T) {
	st := NewMondrianState(4)
	for _, cuts := range [][]Cut{
		{{Group: 0, Parts: 2, Part: []uint16{0, 0, 0, 0}}},
		{{Group: 0, Parts: 2, Part: []uint16{0, 1, 2, 1}}},
		{{Group: 1, Parts: 2, Part: []uint16{0, 1, 0, 1}}},
		{{Group: 0, Parts: 2, Part: []uint16{0, 1}}},
		{{Group: 0, Parts: 2, Part: []uint16{0, 1, 0, 1}}, {Group: 0, Parts: 2, Part: []uint16{0, 1, 0, 1}}},
	} {
		if _, err := st.Apply(cuts); err == nil {
			t.Errorf("cuts %v applied", cuts)
		}
	}
	next, err := st.Apply([]Cut{{Group: 0, Parts: 2, Part: []uint16{0, 1, 0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ChooseCuts(next, []PartyProposals{{Party: "p", Proposals: []Proposal{{Group: 5, Attr: 0, Width: 0.5}}}}); err == nil {
		t.Error("a proposal for a group that does not exist was chosen")
	}
}

// A sensitive column held by a party that holds no quasi-identifier: the
// attribute owners cut for k only, the column's owner answers one bit per
// cut (DiverseParts), refused cuts are not made and their attribute is not
// proposed for that group again. Every class ends l-diverse (checked
// naively), and the rounds still cut.
func TestMondrianRoundsPrivateSensitive(t *testing.T) {
	attrs, cols, _ := synthetic(t, 400, 9)
	syn := &table.Table{Name: "syn"}
	tax := map[string]*Taxonomy{}
	for _, a := range attrs {
		syn.Columns = append(syn.Columns, &table.Column{Name: a.Name, Kind: table.Categorical, Str: cols[a.Name]})
		tax[a.Name] = a.Tax
	}
	// the sensitive values follow a0, so cuts on a0 tend to be refused
	a0, _ := syn.Column("a0")
	sensCol := make([]string, 400)
	for r := range sensCol {
		sensCol[r] = string(rune('A' + (int(a0.Str[r][len(a0.Str[r])-1])+r%2)%3))
	}
	for _, l := range []int{2, 3} {
		sens, err := (SensitiveModel{L: l}).Code(sensCol)
		if err != nil {
			t.Fatal(err)
		}
		parties := partyDatasets(t, syn, tax, [][]string{{"a0", "a1"}, {"a2", "a3"}, {"a4", "a5"}}, 4, nil)
		refused := 0
		st, err := RunMondrianRounds(parties, 400, func(st *MondrianState, c Cut) bool {
			ok := DiverseParts(st, c, sens)
			if !ok {
				refused++
			}
			return ok
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Groups) < 4 {
			t.Errorf("l=%d: %d classes", l, len(st.Groups))
		}
		for _, g := range st.Groups {
			distinct := map[string]bool{}
			for _, r := range g {
				distinct[sensCol[r]] = true
			}
			if len(g) < 4 || len(distinct) < l {
				t.Errorf("l=%d: class of %d records with %d distinct values", l, len(g), len(distinct))
			}
		}
		if l == 3 && refused == 0 {
			t.Errorf("l=%d: no cut was refused: the test exercises nothing", l)
		}
		t.Logf("l=%d: %d classes, %d cuts refused", l, len(st.Groups), refused)
	}
}
