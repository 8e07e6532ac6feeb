package sjc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
)

// TestChooseTieRule: equal gains go to the smallest (party, table), not to
// the table met first in the join graph, and within a table to the
// frontier's first entry within Eps of the best.
func TestChooseTieRule(t *testing.T) {
	t.Parallel()
	g, err := sjc.NewGraph(chainSpec()) // tables L (lea), S, P (exchange)
	if err != nil {
		t.Fatal(err)
	}
	offers := []sjc.Offer{{Gains: []float64{0.5}}, {Gains: []float64{0.5}}, {Gains: []float64{0.1, 0.5}}}
	// exchange < lea, and P < S: table P (index 2), its entry 1.
	if tb, i, gain, ok := sjc.Choose(g, offers); !ok || tb != 2 || i != 1 || gain != 0.5 {
		t.Fatalf("Choose = %d %d %v %v, want P's second entry", tb, i, gain, ok)
	}
	// Within Eps counts as equal; beyond it, the larger gain wins.
	offers = []sjc.Offer{{Gains: []float64{0.5 + 5e-13}}, {Gains: []float64{0.5}}, {}}
	if tb, _, _, _ := sjc.Choose(g, offers); tb != 1 {
		t.Fatalf("within Eps: table %d won, want S", tb)
	}
	offers = []sjc.Offer{{Gains: []float64{0.5 + 1e-9}}, {Gains: []float64{0.5}}, {}}
	if tb, _, _, _ := sjc.Choose(g, offers); tb != 0 {
		t.Fatalf("beyond Eps: table %d won, want L", tb)
	}
	if _, _, _, ok := sjc.Choose(g, []sjc.Offer{{}, {}, {}}); ok {
		t.Fatal("nothing offered, yet a winner")
	}
}

// csvTables builds tables from CSV text with the spec's schema.
func csvTables(t *testing.T, spec *job.Spec, csv map[string]string) (map[string]*table.Table, error) {
	t.Helper()
	out := map[string]*table.Table{}
	for name, text := range csv {
		schema := map[string]table.Kind{}
		for c, k := range spec.Schema[name] {
			schema[c] = table.Kind(k)
		}
		tb, err := table.Read(strings.NewReader(text), name+".csv", name, schema)
		if err != nil {
			return nil, err
		}
		out[name] = tb
	}
	return out, nil
}

func TestBadData(t *testing.T) {
	t.Parallel()
	spec := chainSpec()
	good := map[string]string{
		"L": "ssn,org,class\n1,a,yes\n2,b,no\n",
		"S": "dealer,day,gain\n1,mon,3\n2,tue,4\n",
		"P": "callee,day,len\n1,mon,10\n2,tue,20\n",
	}
	g, err := sjc.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := csvTables(t, spec, good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sjc.Build(g, data, sjc.DefaultParams()); err != nil {
		t.Fatalf("good data: %v", err)
	}

	// Text in a numeric column: the loader names file, line and column.
	bad := map[string]string{"S": "dealer,day,gain\n1,mon,high\n"}
	if _, err := csvTables(t, spec, bad); err == nil || !strings.Contains(err.Error(), `S.csv:2: column "gain"`) {
		t.Fatalf("text in numeric column: %v", err)
	}

	// A key with no match at all on one edge: empty intersection, named.
	c := map[string]string{"L": good["L"], "S": good["S"], "P": "callee,day,len\n7,mon,10\n8,tue,20\n"}
	data, _ = csvTables(t, spec, c)
	_, err = sjc.Build(g, data, sjc.DefaultParams())
	if !errors.Is(err, sjc.ErrEmptyJoin) || !strings.Contains(err.Error(), "S.dealer = P.callee AND S.day = P.day") {
		t.Fatalf("no common join value: %v", err)
	}
	// Every edge has common values, but no row joins along the whole tree.
	c = map[string]string{"L": "ssn,org,class\n1,a,yes\n", "S": "dealer,day,gain\n1,mon,3\n2,tue,4\n", "P": "callee,day,len\n2,tue,20\n"}
	data, _ = csvTables(t, spec, c)
	if _, err = sjc.Build(g, data, sjc.DefaultParams()); !errors.Is(err, sjc.ErrEmptyJoin) || !strings.Contains(err.Error(), `"L"`) {
		t.Fatalf("empty join: %v", err)
	}

	// A table loaded with another kind than the spec's.
	data, _ = csvTables(t, spec, good)
	other, _ := table.Read(strings.NewReader(good["S"]), "S.csv", "S", map[string]table.Kind{"dealer": table.Key, "day": table.Key, "gain": table.Categorical})
	data["S"] = other
	if _, err = sjc.Build(g, data, sjc.DefaultParams()); !errors.Is(err, sjc.ErrData) || !strings.Contains(err.Error(), `table "S" column "gain"`) {
		t.Fatalf("kind mismatch: %v", err)
	}
	data, _ = csvTables(t, spec, good)
	delete(data, "P")
	if _, err = sjc.Build(g, data, sjc.DefaultParams()); !errors.Is(err, sjc.ErrData) || !strings.Contains(err.Error(), `"P"`) {
		t.Fatalf("missing table: %v", err)
	}

	// Spec params: unknown or out of range, named.
	spec.Params = map[string]any{"max_depth": 100}
	if _, err := sjc.ParseParams(spec); err == nil || !strings.Contains(err.Error(), "params.max_depth") {
		t.Fatalf("max_depth 100: %v", err)
	}
	spec.Params = map[string]any{"depth": 3}
	if _, err := sjc.ParseParams(spec); err == nil || !strings.Contains(err.Error(), "params.depth") {
		t.Fatalf("unknown param: %v", err)
	}
	spec.Params = map[string]any{"psi": "fast"}
	if _, err := sjc.ParseParams(spec); err == nil || !strings.Contains(err.Error(), "params.psi") || !strings.Contains(err.Error(), "auto, ot, vole or ecdh") {
		t.Fatalf("unknown PSI mode: %v", err)
	}
	for _, m := range []string{"auto", "ot", "vole", "ecdh"} {
		spec.Params = map[string]any{"psi": m}
		if p, err := sjc.ParseParams(spec); err != nil || p.PSI != m {
			t.Fatalf("psi %s: %+v %v", m, p, err)
		}
	}
}

// TestOverflowDetected: a chain of 7 tables of 1024 rows sharing one join
// value has 2^70 join rows; the class counts must be refused, not wrapped.
// With a target of 2 rows (one per class) and 7 more tables of 512 rows,
// each class has exactly 2^63 join rows, which fit, but their total 2^64
// does not.
func TestOverflowDetected(t *testing.T) {
	t.Parallel()
	t.Run("class count", func(t *testing.T) { overflowChain(t, 7, 1024, 1024) })
	t.Run("node total", func(t *testing.T) { overflowChain(t, 8, 2, 512) })
}

func overflowChain(t *testing.T, k, targetRows, n int) {
	spec := &job.Spec{Kind: "sjc", Schema: map[string]map[string]string{}}
	csv := map[string]string{}
	for i := 0; i < k; i++ {
		name := fmt.Sprintf("T%d", i)
		spec.Parties = append(spec.Parties, job.PartySpec{Name: "p" + name, Tables: []job.TableSpec{{Name: name, Path: name}}})
		spec.Schema[name] = map[string]string{"j": "key", "x": "numeric"}
		if i == 0 {
			spec.Schema[name]["c"] = "class"
		} else {
			spec.Join = append(spec.Join, fmt.Sprintf("T%d.j = %s.j", i-1, name))
		}
		var b strings.Builder
		b.WriteString("j,x,c\n")
		rows := n
		if i == 0 {
			rows = targetRows
		}
		for r := 0; r < rows; r++ {
			fmt.Fprintf(&b, "a,%d,%c\n", r, 'p'+r%2)
		}
		csv[name] = b.String()
	}
	g, err := sjc.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := csvTables(t, spec, csv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sjc.Build(g, data, sjc.DefaultParams())
	if !errors.Is(err, sjc.ErrOverflow) || !strings.Contains(err.Error(), "table \"T") {
		t.Fatalf("%d tables of %d rows on one join value: %v, want ErrOverflow naming the table", k, n, err)
	}
}
