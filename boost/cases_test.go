package boost_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

// joinCase is a schema, its tables (as CSV text and loaded) and the spec
// of a job over them.
type joinCase struct {
	spec *job.Spec
	csv  map[string]string
	g    *joinprop.Graph
	data map[string]*table.Table
	// test, when set, is the spec's test set (the same schema): simRun
	// writes its tables as NAME_test.csv.
	test *joinCase
}

// caseTable is one generated table: its party, columns (name: kind) and
// rows.
type caseTable struct {
	party string
	cols  []string
	kinds map[string]string
	rows  [][]string
}

func newCase(t *testing.T, tables map[string]*caseTable, join []string) *joinCase {
	t.Helper()
	c := &joinCase{spec: &job.Spec{Kind: "boost", Schema: map[string]map[string]string{}, Join: join}, csv: map[string]string{}, data: map[string]*table.Table{}}
	byParty := map[string][]job.TableSpec{}
	var parties []string
	for _, name := range sortedNames(tables) {
		ct := tables[name]
		if _, ok := byParty[ct.party]; !ok {
			parties = append(parties, ct.party)
		}
		byParty[ct.party] = append(byParty[ct.party], job.TableSpec{Name: name, Path: name + ".csv"})
		c.spec.Schema[name] = ct.kinds
		var b strings.Builder
		b.WriteString(strings.Join(ct.cols, ",") + "\n")
		for _, r := range ct.rows {
			b.WriteString(strings.Join(r, ",") + "\n")
		}
		c.csv[name] = b.String()
		schema := map[string]table.Kind{}
		for col, k := range ct.kinds {
			schema[col], _ = table.ParseKind(k)
		}
		tb, err := table.Read(strings.NewReader(c.csv[name]), name+".csv", name, schema)
		if err != nil {
			t.Fatal(err)
		}
		c.data[name] = tb
	}
	for _, p := range parties {
		c.spec.Parties = append(c.spec.Parties, job.PartySpec{Name: p, Tables: byParty[p]})
	}
	g, err := joinprop.NewGraph(c.spec)
	if err != nil {
		t.Fatal(err)
	}
	c.g = g
	return c
}

func sortedNames(m map[string]*caseTable) []string { return joinprop.SortedKeys(m) }

func num(x float64) string { return fmt.Sprintf("%.2f", x) }

// starCase: the class table T (party alice) joins A (bob) on a and B
// (carol) on b; T's keys repeat and A's and B's rows share keys, so both
// edges are many-to-many. The label depends on columns of all three. A's
// binary column s shares a group of positions with another of A's
// columns on the lattice path (lattice_pack.go) when bins leave room.
func starCase(t *testing.T, seed uint64, n int) *joinCase {
	rng := rand.New(rand.NewPCG(seed, 1))
	srng := rand.New(rand.NewPCG(seed, 3)) // s's own, so that the other columns keep their draws
	A := &caseTable{party: "bob", cols: []string{"a", "u", "v", "s"}, kinds: map[string]string{"a": "key", "u": "numeric", "v": "numeric", "s": "numeric"}}
	ua := map[string]float64{}
	for k := 0; k < n/3; k++ {
		key := fmt.Sprintf("a%d", k)
		for range 1 + rng.IntN(3) {
			u := math.Round(rng.Float64()*40) / 4
			A.rows = append(A.rows, []string{key, num(u), num(rng.NormFloat64()), num(float64(srng.IntN(2)))})
			ua[key] += u
		}
	}
	B := &caseTable{party: "carol", cols: []string{"b", "w"}, kinds: map[string]string{"b": "key", "w": "numeric"}}
	for k := 0; k < n/4; k++ {
		B.rows = append(B.rows, []string{fmt.Sprintf("b%d", k), num(float64(rng.IntN(7)))})
	}
	T := &caseTable{party: "alice", cols: []string{"a", "b", "x", "y"}, kinds: map[string]string{"a": "key", "b": "key", "x": "numeric", "y": "class"}}
	for range n {
		a, b := fmt.Sprintf("a%d", rng.IntN(n/3+2)), fmt.Sprintf("b%d", rng.IntN(n/4))
		x := rng.NormFloat64()
		y := "no"
		if x+ua[a]/10+rng.NormFloat64() > 1 {
			y = "yes"
		}
		T.rows = append(T.rows, []string{a, b, num(x), y})
	}
	return newCase(t, map[string]*caseTable{"T": T, "A": A, "B": B}, []string{"T.a = A.a", "T.b = B.b"})
}

// chainCase: the class table C (alice) joins U (bob) on k, many to many,
// and U joins V (carol) on j, many to one.
func chainCase(t *testing.T, seed uint64, n int) *joinCase {
	rng := rand.New(rand.NewPCG(seed, 2))
	V := &caseTable{party: "carol", cols: []string{"j", "z"}, kinds: map[string]string{"j": "key", "z": "numeric"}}
	zs := map[string]float64{}
	for k := 0; k < n/5; k++ {
		z := float64(rng.IntN(20))
		V.rows = append(V.rows, []string{fmt.Sprintf("j%d", k), num(z)})
		zs[fmt.Sprintf("j%d", k)] = z
	}
	U := &caseTable{party: "bob", cols: []string{"j", "k", "s"}, kinds: map[string]string{"j": "key", "k": "key", "s": "numeric"}}
	zk := map[string]float64{}
	for k := 0; k < n/3; k++ {
		key := fmt.Sprintf("k%d", k)
		for range 1 + rng.IntN(3) {
			j := fmt.Sprintf("j%d", rng.IntN(n/5))
			U.rows = append(U.rows, []string{j, key, num(rng.Float64() * 5)})
			zk[key] += zs[j]
		}
	}
	C := &caseTable{party: "alice", cols: []string{"k", "x", "y"}, kinds: map[string]string{"k": "key", "x": "numeric", "y": "class"}}
	for range n {
		key := fmt.Sprintf("k%d", rng.IntN(n/3))
		x := rng.NormFloat64()
		y := "0"
		if x+zk[key]/15+rng.NormFloat64() > 1.5 {
			y = "1"
		}
		C.rows = append(C.rows, []string{key, num(x), y})
	}
	return newCase(t, map[string]*caseTable{"C": C, "U": U, "V": V}, []string{"C.k = U.k", "U.j = V.j"})
}
