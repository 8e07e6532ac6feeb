package anonymize

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Sun TV-1 (the thesis's Tables 2.1 and 2.2): Table 2.1 is 1-anonymous,
// its generalisation 3-anonymous.
func TestKAnonymitySunTV1(t *testing.T) {
	raw := mkTable([]string{"gender", "age", "zip", "disease"},
		"M,25,4370,Cancer", "M,25,4370,Cancer", "M,22,4352,Cancer",
		"F,28,4373,Chest Pain", "F,28,4373,Obesity", "F,34,4350,Flu")
	gen := mkTable([]string{"gender", "age", "zip", "disease"},
		"Male,[22-25],43**,Cancer", "Male,[22-25],43**,Cancer", "Male,[22-25],43**,Cancer",
		"Female,[28-34],43**,Chest Pain", "Female,[28-34],43**,Obesity", "Female,[28-34],43**,Flu")
	qid := []string{"gender", "age", "zip"}
	if m, _ := MinGroup(raw, qid); m != 1 || naiveMinGroup(raw, qid) != 1 {
		t.Fatalf("raw min group %d", m)
	}
	if err := CheckK(raw, []Requirement{{qid, 2}}); !errors.Is(err, ErrViolation) {
		t.Fatalf("raw 2-anonymous? %v", err)
	}
	if err := CheckK(gen, []Requirement{{qid, 3}, {[]string{"zip"}, 6}}); err != nil {
		t.Fatal(err)
	}
	// Male group is all Cancer: not distinct 2-diverse, Female group is 3-diverse.
	if err := CheckDistinctL(gen, qid, "disease", 2); !errors.Is(err, ErrViolation) {
		t.Fatalf("distinct l: %v", err)
	}
	if err := CheckDistinctL(gen, []string{"zip"}, "disease", 4); err != nil {
		t.Fatal(err)
	}
}

// Sun TV-3: the (size, distinct, weight) of Tables 3.2 and 3.5 under the
// category weights of Table 3.3.
func TestPAlphaSunTV3(t *testing.T) {
	w := CategoryWeights([][]string{{"HIV", "Cancer"}, {"Phthisis", "Hepatitis"}, {"Obesity", "Asthma"}, {"Flu", "Indigestion"}})
	if w["Cancer"] != 0 || math.Abs(w["Hepatitis"]-1.0/3) > 1e-15 || w["Indigestion"] != 1 {
		t.Fatalf("weights %v", w)
	}
	// Table 3.5, the (3,1)-sensitive 4-anonymous view: totals 1, 2, 3.
	t35 := mkTable([]string{"q", "s"},
		"a,HIV", "a,Cancer", "a,Obesity", "a,Hepatitis", // 0+0+2/3+1/3 = 1
		"b,Cancer", "b,Phthisis", "b,Asthma", "b,Indigestion", // 0+1/3+2/3+1 = 2
		"c,Cancer", "c,Flu", "c,Flu", "c,Indigestion") // 0+1+1+1 = 3 (duplicates count)
	q := []string{"q"}
	if err := CheckPAlphaSensitive(t35, q, "s", 3, 1, 4, w); err != nil {
		t.Fatal(err)
	}
	if err := CheckPAlphaSensitive(t35, q, "s", 3, 1.5, 4, w); !errors.Is(err, ErrViolation) {
		t.Fatalf("alpha 1.5: %v", err)
	}
	if err := CheckPAlphaSensitive(t35, q, "s", 4, 1, 4, w); !errors.Is(err, ErrViolation) {
		t.Fatalf("p 4: %v", err)
	}
	if err := CheckPSensitive(t35, q, "s", 3, 5); !errors.Is(err, ErrViolation) {
		t.Fatalf("k 5: %v", err)
	}
	delete(w, "Flu")
	if err := CheckPAlphaSensitive(t35, q, "s", 3, 1, 4, w); !errors.Is(err, ErrRequirement) {
		t.Fatalf("missing weight: %v", err)
	}
}

// The checkers agree with the naive pairwise checker on random tables.
func TestCheckersAgreeWithNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cols := []string{"a", "b", "s"}
	for it := 0; it < 200; it++ {
		n := 1 + rng.IntN(25)
		rows := make([]string, n)
		for i := range rows {
			rows[i] = fmt.Sprintf("%d,%d,%d", rng.IntN(2), rng.IntN(3), rng.IntN(4))
		}
		tab := mkTable(cols, rows...)
		qid := []string{"a", "b"}
		m := naiveMinGroup(tab, qid)
		for k := 1; k <= 5; k++ {
			err := CheckK(tab, []Requirement{{qid, k}})
			if (err == nil) != (m >= k) {
				t.Fatalf("k=%d naive min %d, CheckK %v", k, m, err)
			}
		}
		sens := naiveSensitive(tab, qid, "s")
		for l := 1; l <= 4; l++ {
			okD, okE := true, true
			for _, vs := range sens {
				okD = okD && naiveDistinct(vs) >= l
				okE = okE && naiveEntropy(vs) >= math.Log2(float64(l))-1e-9
			}
			if (CheckDistinctL(tab, qid, "s", l) == nil) != okD {
				t.Fatalf("distinct l=%d disagrees", l)
			}
			if (CheckEntropyL(tab, qid, "s", float64(l)) == nil) != okE {
				t.Fatalf("entropy l=%d disagrees", l)
			}
			if (CheckPSensitive(tab, qid, "s", l, 2) == nil) != (okD && m >= 2) {
				t.Fatalf("p-sensitive p=%d disagrees", l)
			}
		}
	}
}

func TestPruneRequirements(t *testing.T) {
	reqs := []Requirement{{[]string{"a"}, 5}, {[]string{"a", "b"}, 5}, {[]string{"b"}, 10}, {[]string{"b", "a"}, 5}}
	got := PruneRequirements(reqs)
	if len(got) != 2 || got[0].String() != "<{a,b}, 5>" || got[1].String() != "<{b}, 10>" {
		t.Fatalf("%v", got)
	}
}
