package coherence

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// figure10 is the running example of Xu, ch. 4 (Figure 10): activities a-g
// public, illnesses s1-s3 private; h = 50 %, k = 3, p = 3.
const figure10 = `tid,item
T1,a
T1,b
T1,e
T1,f
T1,s1
T2,c
T2,e
T2,f
T2,g
T2,s2
T3,a
T3,b
T3,g
T3,s3
T4,a
T4,b
T4,f
T4,g
T4,s2
T5,a
T5,b
T5,d
T5,g
T5,s2
T6,e
T6,f
T6,g
T6,s1
T7,b
T7,e
T7,f
T7,g
T7,s3
`

var figure10Params = Params{H: 0.5, K: 3, P: 3}

func loadFigure10(t *testing.T) *Labelled {
	t.Helper()
	db, err := ReadCSV(strings.NewReader(figure10))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Label(db, RoleSpec{Private: []string{"s1", "s2", "s3"}}, CSV)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func labels(db *Database, items []int32) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = db.Items[it]
	}
	return out
}

func setLabels(db *Database, sets [][]int32) []string {
	var out []string
	for _, s := range sets {
		out = append(out, strings.Join(slices.Sorted(slices.Values(labels(db, s))), ""))
	}
	slices.Sort(out)
	return out
}

// The minimal moles of Figure 10 (the report's corrected Example 10: ag is
// one, by its breach probability 2/3) and the size-1 moles c and d
// (Example 9; Figure 11 strikes them out).
func TestFigure10MinimalMoles(t *testing.T) {
	db := loadFigure10(t)
	pr, res, moles, err := start(context.Background(), db, figure10Params)
	if err != nil {
		t.Fatal(err)
	}
	_ = pr
	if got := labels(db.Database, res.Suppressed); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("size-1 moles %v, want [c d]", got)
	}
	if got, want := setLabels(db.Database, moles.All()), []string{"ae", "af", "ag", "be", "bfg"}; !slices.Equal(got, want) {
		t.Errorf("minimal moles %v, want %v", got, want)
	}
}

// Tree-Cohesion suppresses c and d, then a (MM/IL = 3/4), then b.
func TestFigure10TreeCohesion(t *testing.T) {
	db := loadFigure10(t)
	res, err := TreeCohesion(context.Background(), db, figure10Params)
	if err != nil {
		t.Fatal(err)
	}
	if got := labels(db.Database, res.Suppressed); !slices.Equal(got, []string{"c", "d", "a", "b"}) {
		t.Errorf("suppressed %v, want [c d a b]", got)
	}
}

// moleBorderOf builds the mole border of Figure 10 once c and d are gone.
func figure10Border(t *testing.T) (*Labelled, *border) {
	t.Helper()
	db := loadFigure10(t)
	pr, res, moles, err := start(context.Background(), db, figure10Params)
	if err != nil {
		t.Fatal(err)
	}
	b := moleBorder(pr, res.Suppressed, moles)
	for _, v := range res.Suppressed {
		b.suppress(v)
	}
	return db, b
}

func edgeLabels(db *Database, es []edge) []string {
	var out []string
	for _, e := range es {
		a, b := labels(db, e.a), labels(db, e.b)
		slices.Sort(a)
		slices.Sort(b)
		out = append(out, "<"+strings.Join(a, "")+","+strings.Join(b, "")+">")
	}
	slices.Sort(out)
	return out
}

func ids(t *testing.T, db *Database, s string) []int32 {
	t.Helper()
	idx := labelIndex(db)
	var out []int32
	for _, r := range s {
		id, ok := idx[string(r)]
		if !ok {
			t.Fatalf("no item %q", r)
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// The mole border of Figure 10 (Example 13, Figure 17, corrected: ⟨ag,
// abfg⟩ is one of its edges) and, after a is suppressed, Figure 19
// (Example 18): ⟨be, befg⟩ and ⟨bfg, befg⟩.
func TestFigure10MoleBorder(t *testing.T) {
	db, b := figure10Border(t)
	want := []string{"<ae,abef>", "<af,abef>", "<af,abfg>", "<ag,abfg>", "<be,abef>", "<be,befg>", "<bfg,abfg>", "<bfg,befg>"}
	if got := edgeLabels(db.Database, b.edges()); !slices.Equal(got, want) {
		t.Fatalf("mole border %v, want %v", got, want)
	}
	cnt := newCounter(context.Background(), len(db.Items))
	// Example 14: W_{ag,3}(B_M) = 3 (ag, afg, abg); here through a's count.
	if err := cnt.count(b, ids(t, db.Database, "a")[0], 3); err != nil {
		t.Fatal(err)
	}
	if g := cnt.delta[ids(t, db.Database, "g")[0]]; g != CountOf(3) {
		t.Errorf("moles holding a and g: %v, want 3", g)
	}
	// The report's list: 12 moles once c and d are gone.
	if err := cnt.count(b, -1, 3); err != nil || cnt.total != CountOf(12) {
		t.Errorf("moles counted %v (%v), want 12", cnt.total, err)
	}
	b.suppress(ids(t, db.Database, "a")[0])
	if got, want := edgeLabels(db.Database, b.edges()), []string{"<be,befg>", "<bfg,befg>"}; !slices.Equal(got, want) {
		t.Errorf("after a: %v, want %v", got, want)
	}
}

// Examples 15 and 16: edge intersection and difference.
func TestEdgeOperations(t *testing.T) {
	db, _ := figure10Border(t)
	e := func(a, b string) edge { return edge{ids(t, db.Database, a), ids(t, db.Database, b)} }
	if g := e("ae", "abef").meet(e("ab", "abeg")); !slices.Equal(g.a, ids(t, db.Database, "abe")) || !slices.Equal(g.b, ids(t, db.Database, "abe")) {
		t.Errorf("⟨ae,abef⟩ ∩ ⟨ab,abeg⟩ = %v", g)
	}
	if e("ae", "abef").meets(e("bg", "abeg")) {
		t.Errorf("⟨ae,abef⟩ meets ⟨bg,abeg⟩")
	}
	got := edgeLabels(db.Database, e("ae", "adefg").minus(e("ae", "ade"), 0))
	if want := []string{"<aef,adefg>", "<aeg,adefg>"}; !slices.Equal(got, want) {
		t.Errorf("⟨ae,adefg⟩ − ⟨ae,ade⟩ = %v, want %v", got, want)
	}
}

// Example 17: the losers covered by ⟨ae, adefg⟩ and by neither ⟨ae, ade⟩
// nor ⟨a, abe⟩, holding ae, of at most 4 items: 3 + 2 = 5.
func TestExample17(t *testing.T) {
	db, _ := figure10Border(t)
	e := func(a, b string) edge { return edge{ids(t, db.Database, a), ids(t, db.Database, b)} }
	cnt := newCounter(context.Background(), len(db.Items))
	cnt.reset(ids(t, db.Database, "a")[0], 4)
	cnt.bin.grow(8)
	cnt.computeDelta([]edge{e("ae", "adefg")}, []edge{e("ae", "ade"), e("a", "abe")})
	if err := cnt.finish(); err != nil {
		t.Fatal(err)
	}
	if got := cnt.delta[ids(t, db.Database, "e")[0]]; got != CountOf(5) {
		t.Errorf("losers holding ae: %v, want 5", got)
	}
}

// Example 8: with k' = 4 and p' = ∞ the nuggets are a, b, e, f, g, ab, bg,
// ef, fg, and IL(b) = |N(b)| = 3.
func TestExample8Nuggets(t *testing.T) {
	db := loadFigure10(t)
	pr, err := newProblem(db, figure10Params)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newNuggetFamily(context.Background(), pr, nil, Nuggets{K: 4})
	if err != nil {
		t.Fatal(err)
	}
	total, per, err := f.counts(len(db.Items))
	if err != nil {
		t.Fatal(err)
	}
	if total != CountOf(9) || per[ids(t, db.Database, "b")[0]] != CountOf(3) {
		t.Errorf("%v nuggets, %v holding b; want 9 and 3", total, per[ids(t, db.Database, "b")[0]])
	}
}

// Border-Cohesion on Figure 10 (k' = 4) suppresses c, d, a, b as
// Tree-Cohesion does (report §4.7).
func TestFigure10BorderCohesion(t *testing.T) {
	db := loadFigure10(t)
	res, err := BorderCohesion(context.Background(), db, figure10Params, Nuggets{K: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := labels(db.Database, res.Suppressed); !slices.Equal(got, []string{"c", "d", "a", "b"}) {
		t.Errorf("suppressed %v, want [c d a b]", got)
	}
	// Nuggets a, b, e, f, g, ab, bg, ef, fg; left: e, f, g, ef, fg.
	if res.NuggetsBefore != CountOf(9) || res.NuggetsAfter != CountOf(5) {
		t.Errorf("nuggets %v → %v, want 9 → 5", res.NuggetsBefore, res.NuggetsAfter)
	}
}

// Examples 11 and 12: the MOLE-tree of M* = {db, da, dg, dc, ba, bg, bf};
// suppressing d lowers MM of b, a, g and c by one and clears d and c.
func TestMoleTreeExample11(t *testing.T) {
	// Numbered so that ties in MM go as in Figure 14: d, b, a, g, c, f.
	items := map[string]int32{"d": 0, "b": 1, "a": 2, "g": 3, "c": 4, "f": 5}
	moles := &Itemsets{}
	for _, m := range []string{"db", "da", "dg", "dc", "ba", "bg", "bf"} {
		moles.Add([]int32{items[m[:1]], items[m[1:]]})
	}
	tr := buildMoleTree(moles, 6)
	mm := func(s string) uint64 { return tr.mm[items[s]] }
	if mm("d") != 4 || mm("b") != 4 || mm("a") != 2 || mm("g") != 2 || mm("c") != 1 || mm("f") != 1 {
		t.Fatalf("MM %v", tr.mm)
	}
	// ⟨b:3⟩ hangs under the root: ba, bg, bf.
	found := false
	for x := 1; x < len(tr.label); x++ {
		if tr.parent[x] == 0 && tr.label[x] == items["b"] && tr.num[x] == 3 {
			found = true
		}
	}
	if !found {
		t.Errorf("no node ⟨b:3⟩ under the root")
	}
	tr.suppress(items["d"])
	if mm("d") != 0 || mm("c") != 0 || mm("b") != 3 || mm("a") != 1 || mm("g") != 1 || mm("f") != 1 {
		t.Errorf("after d: MM %v", tr.mm)
	}
	tr.suppress(items["b"])
	for v, n := range tr.mm {
		if n != 0 {
			t.Errorf("after b: MM of item %d is %d", v, n)
		}
	}
}

// edges lists every edge of b.
func (b *border) edges() []edge {
	var out []edge
	for j, l := range b.low {
		if l == nil {
			continue
		}
		for _, i := range b.under[j] {
			out = append(out, edge{b.up[i], l})
		}
	}
	return out
}
