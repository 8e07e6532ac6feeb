package coherence

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// roundTrip checks that db holds each item once per transaction and that
// writing it in format f and reading it back gives the same transactions.
func roundTrip(t *testing.T, db *Database, f Format) {
	t.Helper()
	for i, tr := range db.Trans {
		seen := map[int32]bool{}
		for _, it := range tr {
			if it < 0 || int(it) >= len(db.Items) || seen[it] {
				t.Fatalf("transaction %d: bad or repeated item", i)
			}
			seen[it] = true
		}
	}
	var buf bytes.Buffer
	if err := db.Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	read := ReadFIMI
	if f == CSV {
		read = ReadCSV
	}
	back, err := read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("reading back what Write wrote: %v", err)
	}
	if len(back.Trans) != len(db.Trans) {
		t.Fatalf("%d transactions read back, %d written", len(back.Trans), len(db.Trans))
	}
	for i := range db.Trans {
		if !slices.Equal(labels(back, back.Trans[i]), labels(db, db.Trans[i])) {
			t.Fatalf("transaction %d differs after a round trip", i)
		}
	}
}

func FuzzReadFIMI(f *testing.F) {
	for _, s := range []string{"1 2 3 \n4 5\n", "", "\n\n", "7 7 07\r\n8", "1 -2\n", "18446744073709551615 0\n", "a b\n", "1\t2 \t3\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		db, err := ReadFIMI(bytes.NewReader(b))
		if err != nil {
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error names no line: %v", err)
			}
			return
		}
		roundTrip(t, db, FIMI)
	})
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{figure10, "tid,item\n1,a\n2,b\n1,c\n1,a\n", "x,\n", "1,a,b\n", "\"1\",\"a,b\"\n", ",a\n", "tid,item\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		db, err := ReadCSV(bytes.NewReader(b))
		if err != nil {
			if !strings.Contains(err.Error(), "row ") {
				t.Fatalf("error names no row: %v", err)
			}
			return
		}
		roundTrip(t, db, CSV)
	})
}
