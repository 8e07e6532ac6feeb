package coherence

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// sameCounts fails unless counting b (CountFIMI or CountCSV) gives the
// reader's verdict: its error, or the loaded database's transactions and
// supports (nil for a CSV whose transactions are apart).
func sameCounts(t *testing.T, b []byte, f Format) {
	t.Helper()
	read, count := ReadFIMI, CountFIMI
	if f == CSV {
		read, count = ReadCSV, CountCSV
	}
	db, rerr := read(bytes.NewReader(b))
	s, cerr := count(bytes.NewReader(b))
	switch {
	case rerr != nil || cerr != nil:
		if rerr == nil || cerr == nil || rerr.Error() != cerr.Error() {
			t.Fatalf("%q: count error %v, read error %v", b, cerr, rerr)
		}
		return
	case s == nil:
		if f != CSV {
			t.Fatalf("%q: no counts of a FIMI file", b)
		}
		return
	}
	want := map[string]int{}
	for v, n := range db.Supports() {
		if n > 0 {
			want[db.Items[v]] = n
		}
	}
	if s.N != len(db.Trans) || !maps.Equal(s.Items, want) {
		t.Fatalf("%q: counted %d transactions %v, loaded %d %v", b, s.N, s.Items, len(db.Trans), want)
	}
}

// TestCountsAreTheLoadedSupports: counting a file parses it as reading
// does (the same parser) and finds the loaded database's transactions
// and supports, a repeated item once; a CSV whose transaction comes back
// after another is not counted.
func TestCountsAreTheLoadedSupports(t *testing.T) {
	for _, s := range []string{"1 2 3 \n4 5\n", "", "\n\n", "7 7 07\r\n8", "1 -2\n", "3 1 3 3\n\n1\n"} {
		sameCounts(t, []byte(s), FIMI)
	}
	for _, s := range []string{figure10, "tid,item\n1,a\n1,b\n1,a\n2,b\n3,\n", "x,\n", "1,a,b\n", ",a\n", "1,a\n2,a\n1,b\n"} {
		sameCounts(t, []byte(s), CSV)
	}
	if s, err := CountCSV(strings.NewReader("1,a\n2,a\n1,b\n")); s != nil || err != nil {
		t.Fatalf("a transaction apart: %v, %v", s, err)
	}
}

// TestEligibleIsTheorem3: on random databases and roles, the counted
// supports refuse exactly the databases the algorithms' test of the
// loaded, labelled database (newProblem, eligible) refuses, with the
// same error; with the thesis's private items, those with too few
// transactions, and nothing it cannot tell.
func TestEligibleIsTheorem3(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	refused := 0
	for range 400 {
		var b strings.Builder
		n := 1 + rng.IntN(12)
		for range n {
			for range rng.IntN(5) {
				fmt.Fprintf(&b, "%d ", rng.IntN(6))
			}
			b.WriteString("\n")
		}
		db, err := ReadFIMI(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		s, err := CountFIMI(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		prm := Params{H: []float64{0.2, 0.5, 0.75, 1}[rng.IntN(4)], K: 2 + rng.IntN(5), P: 1 + rng.IntN(3)}
		spec := RoleSpec{Private: []string{fmt.Sprint(rng.IntN(6)), fmt.Sprint(rng.IntN(6))}}
		if rng.IntN(4) == 0 {
			spec = RoleSpec{ThesisRule: true}
		}
		l, err := Label(db, spec, FIMI)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := newProblem(l, prm)
		if err != nil {
			t.Fatal(err)
		}
		want, got := pr.eligible(), Eligible(s, spec, prm)
		if spec.ThesisRule && !errors.Is(want, ErrTooFew) {
			want = nil // made per transaction: the counts cannot tell
		}
		if got != want {
			t.Fatalf("%q, %+v, %+v: counted %v, loaded %v", b.String(), spec, prm, got, want)
		}
		if got != nil {
			refused++
		}
	}
	if refused < 40 {
		t.Fatalf("%d of 400 refused: the case does not test refusals", refused)
	}
}

func FuzzCountFIMI(f *testing.F) {
	for _, s := range []string{"1 2 3 \n4 5\n", "", "\n\n", "7 7 07\r\n8", "1 -2\n", "a b\n", "1\t2 \t3\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameCounts(t, b, FIMI) })
}

func FuzzCountCSV(f *testing.F) {
	for _, s := range []string{figure10, "tid,item\n1,a\n2,b\n1,c\n1,a\n", "x,\n", "1,a,b\n", "\"1\",\"a,b\"\n", ",a\n", "tid,item\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameCounts(t, b, CSV) })
}
