package sjc_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// randomCase is a random acyclic schema with its data as CSV text.
type randomCase struct {
	spec  *job.Spec
	csv   map[string]string // table -> CSV text
	test  map[string]string // an independent test set
	shape string
	p     sjc.Params
}

// randomCol is a column of a random case's table: its name, its kind in
// the schema, and the generator of its cells.
type randomCol struct {
	name, kind string
	gen        func() string
}

// newRandomCase draws 2-6 tables in a random join tree (chain, star or
// any tree), held by 1-3 parties, with composite keys now and then, integer,
// decimal and categorical attributes, small join domains (many-to-many,
// dangling rows) and 2-3 classes.
func newRandomCase(rng *rand.Rand) *randomCase {
	k := 2 + rng.IntN(5)
	shape := []string{"chain", "star", "tree"}[rng.IntN(3)]
	names := rng.Perm(k) // table i is called T<names[i]>, so the target is not always first by name
	tn := func(i int) string { return fmt.Sprintf("T%d", names[i]) }
	parent := make([]int, k)
	for i := 1; i < k; i++ {
		switch shape {
		case "chain":
			parent[i] = i - 1
		case "star":
			parent[i] = 0
		default:
			parent[i] = rng.IntN(i)
		}
	}
	nparties := 1 + rng.IntN(3)
	spec := &job.Spec{Kind: "sjc", Schema: map[string]map[string]string{}}
	owners := map[int][]job.TableSpec{}
	for i := 0; i < k; i++ {
		p := rng.IntN(nparties)
		owners[p] = append(owners[p], job.TableSpec{Name: tn(i), Path: tn(i) + ".csv"})
	}
	for p := 0; p < nparties; p++ {
		if len(owners[p]) > 0 {
			spec.Parties = append(spec.Parties, job.PartySpec{Name: fmt.Sprintf("p%d", (p*7+3)%10), Tables: owners[p]})
		}
	}
	// Columns: for each edge, 1 or 2 key columns on each side.
	cols := make([][]randomCol, k)
	joinDom := 2 + rng.IntN(3)
	keyGen := func() string { return string(rune('a' + rng.IntN(joinDom))) }
	for i := 1; i < k; i++ {
		parts := 1 + rng.IntN(2)
		var terms []string
		for c := 0; c < parts; c++ {
			pc := fmt.Sprintf("k%d_%d", i, c)
			cc := fmt.Sprintf("j%d_%d", i, c)
			cols[parent[i]] = append(cols[parent[i]], randomCol{pc, "key", keyGen})
			cols[i] = append(cols[i], randomCol{cc, "key", keyGen})
			if rng.IntN(2) == 0 {
				terms = append(terms, fmt.Sprintf("%s.%s = %s.%s", tn(parent[i]), pc, tn(i), cc))
			} else {
				terms = append(terms, fmt.Sprintf("%s.%s = %s.%s", tn(i), cc, tn(parent[i]), pc))
			}
		}
		spec.Join = append(spec.Join, strings.Join(terms, " AND "))
	}
	nclass := 2 + rng.IntN(2)
	cols[0] = append(cols[0], randomCol{"cls", "class", func() string { return []string{"no", "yes", "maybe"}[rng.IntN(nclass)] }})
	for i := 0; i < k; i++ {
		for a, na := 0, 1+rng.IntN(4); a < na; a++ {
			switch rng.IntN(3) {
			case 0: // integers
				cols[i] = append(cols[i], randomCol{fmt.Sprintf("n%d", a), "numeric", func() string { return strconv.Itoa(rng.IntN(7) - 2) }})
			case 1: // decimals
				cols[i] = append(cols[i], randomCol{fmt.Sprintf("d%d", a), "numeric", func() string {
					return strconv.FormatFloat(float64(rng.IntN(9))*0.1-0.3, 'f', -1, 64)
				}})
			default:
				cols[i] = append(cols[i], randomCol{fmt.Sprintf("c%d", a), "categorical", func() string { return []string{"red", "green", "blue", "x y"}[rng.IntN(4)] }})
			}
		}
	}
	rc := &randomCase{spec: spec, csv: map[string]string{}, test: map[string]string{}, shape: shape}
	for i := 0; i < k; i++ {
		spec.Schema[tn(i)] = map[string]string{}
		for _, cl := range cols[i] {
			spec.Schema[tn(i)][cl.name] = cl.kind
		}
	}
	rc.csv = randomCSV(rng, cols, tn)
	rc.test = randomCSV(rng, cols, tn)
	rc.p = sjc.Params{MaxDepth: 1 + rng.IntN(10), MinSplit: uint64(1 + rng.IntN(4)), Prune: rng.IntN(3) == 0, JoinSplits: rng.IntN(4) == 0}
	return rc
}

// randomCSV draws the CSV text of every table of a random case: a header
// of cols' names, then 1-20 rows of their generators' cells (table i is
// named tn(i)). newRandomCase calls it twice, training set then test set;
// its draws from rng are in the order they were inline.
func randomCSV(rng *rand.Rand, cols [][]randomCol, tn func(int) string) map[string]string {
	out := map[string]string{}
	for i := range cols {
		var b strings.Builder
		for c, cl := range cols[i] {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(cl.name)
		}
		b.WriteByte('\n')
		rows := 1 + rng.IntN(20)
		for r := 0; r < rows; r++ {
			for c, cl := range cols[i] {
				if c > 0 {
					b.WriteByte(',')
				}
				b.WriteString(cl.gen())
			}
			b.WriteByte('\n')
		}
		out[tn(i)] = b.String()
	}
	return out
}

func loadTables(t testing.TB, spec *job.Spec, csv map[string]string) map[string]*table.Table {
	t.Helper()
	out := map[string]*table.Table{}
	for name, text := range csv {
		schema := map[string]table.Kind{}
		for c, k := range spec.Schema[name] {
			schema[c] = table.Kind(k)
		}
		tb, err := table.Read(strings.NewReader(text), name+".csv", name, schema)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = tb
	}
	return out
}

// TestRandomSchemasEqualReference: on random acyclic schemas the join-aware
// algorithm grows exactly the tree grown on the materialised join, and
// classifies an independent test join exactly as the reference does.
func TestRandomSchemasEqualReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 2026))
	const want = 400
	nonEmpty, empty, splits := 0, 0, 0
	shapes := map[string]int{}
	for attempt := 0; nonEmpty < want; attempt++ {
		if attempt > 5*want {
			t.Fatalf("only %d non-empty joins in %d attempts", nonEmpty, attempt)
		}
		rc := newRandomCase(rng)
		g, err := sjc.NewGraph(rc.spec)
		if err != nil {
			t.Fatalf("case %d: %v\n%+v", attempt, err, rc.spec)
		}
		data := loadTables(t, rc.spec, rc.csv)
		ref, rerr := reftree.Build(g, data, rc.p)
		got, err := sjc.Build(g, data, rc.p)
		if rerr != nil {
			// The reference refuses only an empty join; so must sjc.
			if !errors.Is(err, sjc.ErrEmptyJoin) {
				t.Fatalf("case %d: reference: %v; sjc: %v", attempt, rerr, err)
			}
			empty++
			continue
		}
		if err != nil {
			t.Fatalf("case %d (%s, %d tables): %v\njoin %q\ndata %v", attempt, rc.shape, len(g.Tables), err, rc.spec.Join, rc.csv)
		}
		if d := tree.Diff(ref, got); d != "" {
			t.Fatalf("case %d (%s, %d tables, params %+v): trees differ: %s\njoin %q\ndata %v", attempt, rc.shape, len(g.Tables), rc.p, d, rc.spec.Join, rc.csv)
		}
		rj, _ := ref.MarshalJSON()
		gj, _ := got.MarshalJSON()
		if string(rj) != string(gj) {
			t.Fatalf("case %d: JSON differs:\n%s\n%s", attempt, rj, gj)
		}
		n, _ := got.Size()
		splits += (n - 1) / 2
		nonEmpty++
		shapes[fmt.Sprintf("%s/%d", rc.shape, len(g.Tables))]++

		test := loadTables(t, rc.spec, rc.test)
		rc1, rt, rerr := reftree.Accuracy(ref, g, test)
		c, tot, err := sjc.Evaluate(got, g, test)
		if rerr != nil || (rt == 0) != errors.Is(err, sjc.ErrEmptyJoin) {
			t.Fatalf("case %d: test join: reference %d rows, %v; sjc %v", attempt, rt, rerr, err)
		}
		if rt > 0 && (uint64(rc1) != c || uint64(rt) != tot) {
			t.Fatalf("case %d: accuracy reference %d/%d, sjc %d/%d", attempt, rc1, rt, c, tot)
		}
	}
	if splits < 2*want {
		t.Fatalf("only %d splits over %d trees: the cases are too easy to tell anything", splits, nonEmpty)
	}
	t.Logf("%d schemas equal (%d empty joins refused by both), %d internal nodes; shapes %v", nonEmpty, empty, splits, shapes)
}
