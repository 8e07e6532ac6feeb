package anonymize

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func trunc2(x float64) string { return fmt.Sprintf("%g", math.Floor(x*100+1e-9)/100) }

// Reddy et al.'s Table 3 with its errata corrected (swapped strengths, mislabelled rows, one anonymity value):
// labels, P, I (truncated to two decimals as printed), Anony, #Recs.
var table3 = []string{
	"Any-Gender,Any-Education,2,7,0,0,3,34", "Any-Gender,Non-Engineering,2,4,0,0.33,3,16",
	"Any-Gender,Engineering,2,3,0,0.33,6,18", "Any-Gender,Science,2,2,0,0.66,3,7",
	"Any-Gender,Arts,2,2,0,0.66,4,9", "Any-Gender,Computers,2,1,0,1,3,9",
	"Any-Gender,Non-Computers,2,2,0,0.66,9,9", "Any-Gender,Life Sc.,2,1,0,1,3,3",
	"Any-Gender,Physical Sc.,2,1,0,1,4,4", "Any-Gender,Fine Arts,2,1,0,1,5,5",
	"Any-Gender,Journalism,2,1,0,1,4,4", "Any-Gender,Civil,2,1,0,1,6,6",
	"Any-Gender,Mechanical,2,1,0,1,3,3", "M,Any-Education,1,7,1,0,3,17",
	"M,Non-Engineering,1,4,1,0.33,3,12", "M,Engineering,1,3,1,0.33,5,5",
	"M,Science,1,2,1,0.66,3,7", "M,Arts,1,2,1,0.66,5,5",
	"M,Non-Computers,1,2,1,0.66,5,5", "M,Life Sc.,1,1,1,1,3,3",
	"M,Physical Sc.,1,1,1,1,4,4", "M,Fine Arts,1,1,1,1,5,5",
	"M,Civil,1,1,1,1,3,3", "F,Any-Education,1,7,1,0,4,17",
	"F,Non-Engineering,1,4,1,0.33,4,4", "F,Engineering,1,3,1,0.33,6,13",
	"F,Arts,1,2,1,0.66,4,4", "F,Computers,1,1,1,1,3,9",
	"F,Non-Computers,1,2,1,0.66,4,4", "F,Journalism,1,1,1,1,4,4",
	"F,Civil,1,1,1,1,3,3",
}

func TestEnumerateCellsTable3(t *testing.T) {
	raw, tax := seed003(t)
	ds, err := Encode(raw, []string{"gender", "education", "age"}, tax)
	if err != nil {
		t.Fatal(err)
	}
	age, _ := raw.Column("age")
	cells, err := EnumerateCells(ds, []string{"gender", "education"}, [][]string{age.Str}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cells {
		got = append(got, strings.Join([]string{c.Labels[0], c.Labels[1], trunc2(c.P[0]), trunc2(c.P[1]),
			trunc2(c.I[0]), trunc2(c.I[1]), fmt.Sprint(c.Anony), fmt.Sprint(c.Records)}, ","))
	}
	want := slices.Sorted(slices.Values(slices.Clone(table3)))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Table 3: got %d cells\n%s\nwant %d\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	// Table 2 (F003-2): the root cell has 6 age classes, the smallest of 3.
	if cells[0].Labels[0] != "Any-Gender" || cells[0].Labels[1] != "Any-Education" || cells[0].Anony != 3 {
		t.Fatalf("first cell %+v", cells[0])
	}
}

// Set1 (their set, with its one wrong member corrected): (Gender, Age) cells with ≥ 3 records.
func TestEnumerateCellsSet1(t *testing.T) {
	raw, tax := seed003(t)
	ds, err := Encode(raw, []string{"gender", "age"}, tax)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := EnumerateCells(ds, []string{"gender", "age"}, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cells {
		got = append(got, c.Labels[0]+" "+c.Labels[1])
	}
	want := []string{
		"Any-Gender [1-60]", "Any-Gender [1-25]", "Any-Gender [26-60]", "Any-Gender [1-22]", "Any-Gender [23-25]",
		"M [1-60]", "M [1-25]", "M [26-60]", "M [1-22]",
		"F [1-60]", "F [1-25]", "F [26-60]", "F [23-25]",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Set1 = %v\nwant %v", got, want)
	}
}

// Our subset DP on Reddy et al.'s Table 1 (a fixture we computed): optimum 32.5 with seven cells.
func TestSubsetDPFixture(t *testing.T) {
	raw, tax := seed003(t)
	ds, err := Encode(raw, []string{"gender", "education"}, tax)
	if err != nil {
		t.Fatal(err)
	}
	res, err := SubsetDP(ds, []string{"gender", "education"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Value-32.5) > 1e-9 {
		t.Fatalf("value %v", res.Value)
	}
	var got []string
	total := 0
	for _, c := range res.Cells {
		got = append(got, fmt.Sprintf("%s/%s/%d", c.Labels[0], c.Labels[1], c.Records))
		total += c.Records
	}
	want := []string{"M/Non-Computers/5", "M/Life Sc./3", "M/Physical Sc./4", "M/Fine Arts/5", "F/Computers/9", "F/Non-Computers/4", "F/Journalism/4"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || total != 34 {
		t.Fatalf("cells %v, want %v", got, want)
	}
	if _, err := SubsetDP(ds, []string{"gender", "education"}, 35); err == nil {
		t.Fatal("k > n accepted")
	}
}
