package anonymize

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// Hand-computed NCP, DM and C_AVG on a four-record table (Xu et al.'s NCP;
// Sun §3.6 for DM and C_AVG).
func TestMetricsByHand(t *testing.T) {
	_, tax := seed003(t)
	tab := mkTable([]string{"gender", "education", "age"},
		"M,Civil,20", "M,Mechanical,30", "F,Life Sc.,40", "F,Fine Arts,60")
	ds, err := Encode(tab, []string{"gender", "education", "age"}, tax)
	if err != nil {
		t.Fatal(err)
	}
	// Publish: gender raw; education Non-Computers for the first two, Non-Engineering
	// for the others; age as the leaf intervals [1-22], [26-60], [26-60], [26-60].
	find := func(col, label string) int32 {
		id, ok := tax[col].Find(label)
		if !ok {
			t.Fatalf("no %q", label)
		}
		return int32(id)
	}
	g := &Generalisation{Node: [][]int32{
		{find("gender", "M"), find("gender", "M"), find("gender", "F"), find("gender", "F")},
		{find("education", "Non-Computers"), find("education", "Non-Computers"), find("education", "Non-Engineering"), find("education", "Non-Engineering")},
		{find("age", "[1-22]"), find("age", "[26-60]"), find("age", "[26-60]"), find("age", "[26-60]")},
	}}
	// gender: 0; education: 2/7 twice, 4/7 twice -> mean 3/7;
	// age: data range 20..60 = 40; [1-22] width 21 -> 21/40; [26-60] width 34 -> 34/40.
	want := (0 + 3.0/7 + (21.0/40+3*34.0/40)/4) / 3
	if got := ds.NCP(g); math.Abs(got-want) > 1e-12 {
		t.Fatalf("NCP %v, want %v", got, want)
	}
	sizes := ds.GroupSizes(g)
	// classes: (M,NC,[1-22]) (M,NC,[26-60]) (F,NE,[26-60])x2 -> sizes 1,1,2
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 2 {
		t.Fatalf("sizes %v", sizes)
	}
	if dm := Discernibility(sizes); dm != 6 {
		t.Fatalf("DM %v", dm)
	}
	if c := AvgClassSize(sizes, 2); math.Abs(c-4.0/3/2) > 1e-15 {
		t.Fatalf("C_AVG %v", c)
	}
	if err := tax["education"].CheckCovers([]string{"Civil", "Law"}); err == nil {
		t.Fatal("Law covered")
	}
}

func TestSummarise(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	res, err := OptimalFullDomain(ds, 4)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []Requirement{{qid, 4}, {[]string{"gender"}, 2}}
	s, err := Summarise(ds, res.Gen, reqs)
	if err != nil {
		t.Fatal(err)
	}
	pub := ds.Publish(res.Gen)
	want := min(naiveMinGroup(pub, qid), naiveMinGroup(pub, []string{"gender"}))
	if s.MinGroup != want || s.MinGroup < 4 || s.NCP != res.NCP || s.Classes != res.Classes {
		t.Fatalf("summary %+v, naive min %d, search %+v", s, want, res)
	}
	if _, err := Summarise(ds, res.Gen, []Requirement{{[]string{"zip"}, 2}}); err == nil {
		t.Fatal("unknown QID accepted")
	}
}

// ClassSizes counts the classes a reader of the publication sees: rows
// sharing their values on the columns asked, whatever else they hold.
func TestClassSizes(t *testing.T) {
	p := CompactCounts([]string{"age", "sex", "disease"},
		[][]string{{"[20-29]", "M", "flu"}, {"[20-29]", "M", "hiv"}, {"[20-25]", "M", "flu"}, {"[30-39]", "F", "flu"}},
		[]int{2, 1, 4, 3})
	got, err := p.ClassSizes([]string{"age", "sex"})
	if err != nil || !slices.Equal(got, []int{4, 3, 3}) {
		t.Errorf("ClassSizes(age, sex) = %v, %v; want [4 3 3]", got, err)
	}
	if got, _ := p.ClassSizes([]string{"sex"}); !slices.Equal(got, []int{7, 3}) {
		t.Errorf("ClassSizes(sex) = %v, want [7 3]", got)
	}
	if _, err := p.ClassSizes([]string{"zip"}); !errors.Is(err, ErrRequirement) {
		t.Errorf("an unpublished column: %v", err)
	}
}
