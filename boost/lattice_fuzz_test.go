package boost

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// fuzzKey is a lattice key dealt once for the fuzz target.
var fuzzKey = sync.OnceValues(func() (*lattice.PublicKey, error) {
	k, err := keyring.DealLattice([]string{"a", "b"}, 0)
	if err != nil {
		return nil, err
	}
	return k["a"].PublicKey, nil
})

// FuzzLatticeHead: the head of a lattice down message from a peer decodes
// and is checked (latticeHead, entryRows) or refused with an error, never
// a panic; what is accepted names only join values the table holds and
// takes as many ciphertexts as its layouts say, laid out for the bins the
// log commits (4 here; the table's widest column has 3).
func FuzzLatticeHead(f *testing.F) {
	pk, err := fuzzKey()
	if err != nil {
		f.Fatal(err)
	}
	schemas := map[string]map[string]table.Kind{
		"T": {"k": table.Key, "y": table.Class},
		"A": {"k": table.Key, "u": table.Numeric},
	}
	g, err := joinprop.BuildGraph(map[string]string{"T": "a", "A": "b"}, schemas, []string{"T.k = A.k"})
	if err != nil {
		f.Fatal(err)
	}
	tb, err := table.Read(strings.NewReader("k,u\nx,1\nx,2\ny,3\n"), "A.csv", "A", schemas["A"])
	if err != nil {
		f.Fatal(err)
	}
	l, err := NewLocal(g, "A", tb, 4, LossLogistic, "")
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range []latticeMsg{
		{Edge: 0, Parts: 1, Values: []string{"x", "y"}, Combos: [][]string{{"|"}, {"|"}}, Nodes: []int{1}, Bins: 4},
		{Edge: 0, Parts: 1, Values: []string{"z"}, Combos: [][]string{{"|"}}, Nodes: []int{2, 1}, Bins: 4},
		{Edge: 0, Parts: 1, Values: []string{"x"}, Combos: [][]string{{"|"}}, Nodes: []int{1}, Bins: 3},
		{Edge: 0, Parts: 1, Values: []string{"x", "y"}, Combos: [][]string{{"|"}, {"|"}}, Nodes: []int{1}, Bins: 4, First: true},
		{Edge: 0, Parts: 1, Values: []string{"x", "y"}, Combos: [][]string{{"0|", "1|"}, {"0|"}}, Nodes: []int{1}, Bins: 4,
			Kept: 2, At: []int{0, atFresh, atNone}, Refs: []int{0, -1, -1}},
		{Edge: 0, Parts: 1, Values: []string{"x", "y"}, Combos: [][]string{{"0|"}, {"1|"}}, Bins: 4, Kept: 1, At: []int{0, 0}, Refs: []int{0, 1}},
	} {
		b, err := wire.Marshal(&m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m latticeMsg
		if wire.Unmarshal(b, &m) != nil {
			return
		}
		ds, n, want, err := l.latticeHead(pk, 4, &m)
		if err != nil {
			return
		}
		if m.Bins != 4 {
			t.Fatalf("a head laid out for %d bins accepted for 4", m.Bins)
		}
		if want < 0 || (len(m.Nodes) > 0 && n > 0 && want < len(m.Nodes)) {
			t.Fatalf("%d ciphertexts for %d entries in %d layouts", want, n, len(m.Nodes))
		}
		if m.At != nil {
			fresh := 0
			for e, y := range m.At {
				if y < atNone || y >= m.Kept || (y >= 0) != (m.Refs[e] >= 0) {
					t.Fatalf("re-use mark %d (first-level entry %d) of %d kept nodes accepted", y, m.Refs[e], m.Kept)
				}
				if y == atFresh {
					fresh++
				}
			}
			if m.First || fresh != n || len(m.At) != entryCount(&ds) {
				t.Fatalf("%d places (first %v) for %d entries, %d fresh, accepted as %d", len(m.At), m.First, entryCount(&ds), fresh, n)
			}
		} else if m.Kept != 0 || m.Refs != nil {
			t.Fatalf("re-use counts without marks accepted")
		}
		if _, err := l.entryRows(ds); err != nil {
			return
		}
		for _, v := range ds.Values {
			if v != "x" && v != "y" {
				t.Fatalf("join value %q accepted", v)
			}
		}
	})
}

// TestSplitRuns: encodings split into runs within the limit, in order,
// none lost; an encoding past the limit alone; none: one empty run.
func TestSplitRuns(t *testing.T) {
	c := [][]byte{make([]byte, 3), make([]byte, 4), make([]byte, 2), make([]byte, 9), make([]byte, 1)}
	runs := splitRuns(c, 6)
	var lens [][]int
	for _, r := range runs {
		var l []int
		for _, b := range r {
			l = append(l, len(b))
		}
		lens = append(lens, l)
	}
	if fmt.Sprint(lens) != "[[3] [4 2] [9] [1]]" {
		t.Fatalf("runs %v", lens)
	}
	if r := splitRuns(nil, 6); len(r) != 1 || len(r[0]) != 0 {
		t.Fatalf("no encodings: %v", r)
	}
}

// TestEachRuns: the parts the class holder makes a part at a time
// (sendLatticeEach) are splitRuns' parts of the whole list, for encodings
// of one size below, at and over the limit, and for none.
func TestEachRuns(t *testing.T) {
	for _, size := range []int{1, 3, 6, 7} {
		for count := range 14 {
			c := make([][]byte, count)
			for i := range c {
				c[i] = make([]byte, size)
			}
			var want [][2]int
			lo := 0
			for _, r := range splitRuns(c, 6) {
				want = append(want, [2]int{lo, lo + len(r)})
				lo += len(r)
			}
			if got := eachRuns(count, size, 6); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%d encodings of %d bytes: runs %v, splitRuns' %v", count, size, got, want)
			}
		}
	}
}

// FuzzReadKept: a kept file of first-level chunks (the party's own job
// scratch, but a torn or stale one after a crash) is read or refused with
// an error, never a panic or an allocation its length does not back.
func FuzzReadKept(f *testing.F) {
	pk, err := fuzzKey()
	if err != nil {
		f.Fatal(err)
	}
	head, err := wire.Marshal(&keptHead{Tree: 1, Values: []string{"x"}, Count: 0, Size: pk.Params.CiphertextBytes()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(head))), head...))
	f.Add([]byte{0, 0, 0, 1, 0x80})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := readKept(bytes.NewReader(b), pk, 1)
		if err == nil && (k.tree != 1 || len(k.cts) != 0 && k.cts[0] == nil) {
			t.Fatalf("a kept file read as tree %d", k.tree)
		}
	})
}
