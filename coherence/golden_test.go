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
