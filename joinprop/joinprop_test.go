package joinprop_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

func schema3() (map[string]string, map[string]map[string]table.Kind) {
	owners := map[string]string{"C": "alice", "U": "bob", "V": "carol"}
	schema := map[string]map[string]table.Kind{
		"C": {"k": table.Key, "x": table.Numeric, "y": table.Class},
		"U": {"k": table.Key, "j": table.Key, "d": table.Key, "s": table.Numeric},
		"V": {"j": table.Key, "d": table.Key, "z": table.Numeric},
	}
	return owners, schema
}

// TestChainGraph: a chain rooted at the class table, a composite edge
// merged from two entries, and the schedules every party derives.
func TestChainGraph(t *testing.T) {
	owners, schema := schema3()
	g, err := joinprop.BuildGraph(owners, schema, []string{"V.j = U.j", "C.k = U.k", "U.d = V.d"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range g.Tables {
		names = append(names, ti.Name)
	}
	if !slices.Equal(names, []string{"C", "U", "V"}) || g.Class != "y" || g.Target() != "C" {
		t.Fatalf("tables %v, class %q", names, g.Class)
	}
	if got := g.EdgeName(1); got != "U.j = V.j AND U.d = V.d" {
		t.Fatalf("edge 1 is %q", got)
	}
	want := []joinprop.Transfer{{Edge: 0, From: 0, To: 1, Forward: true}, {Edge: 1, From: 1, To: 2, Forward: true}, {Edge: 1, From: 2, To: 1}, {Edge: 0, From: 1, To: 0}}
	if got := joinprop.ClassSchedule(g); !slices.Equal(got, want) {
		t.Fatalf("class schedule %v, want %v", got, want)
	}
	if got := g.PartiesBut("bob"); !slices.Equal(got, []string{"alice", "carol"}) {
		t.Fatalf("parties but bob: %v", got)
	}
	if !g.TableBefore(0, 2) || g.TableBefore(2, 1) {
		t.Fatal("tie order is not by party")
	}
}

// TestGraphErrors: the errors name the problem and wrap ErrJoin.
func TestGraphErrors(t *testing.T) {
	owners, schema := schema3()
	for join, want := range map[string]string{
		"C.k = U.k|U.j = V.j|C.k = V.j": "cycle",
		"C.k = U.s":                     "U.s = C.k",
		"C.k = U.k":                     `table "V" is not connected`,
		"C.k = U.k|U.j = W.j":           `unknown table "W"`,
		"C.k = U.k|U.j = V.z":           "must be of kind key",
		"C.k U.k":                       "not of the form",
		"C.k = U.k|U.j = V.j AND ":      "",
	} {
		_, err := joinprop.BuildGraph(owners, schema, strings.Split(join, "|"))
		if err == nil || !errors.Is(err, joinprop.ErrJoin) || !strings.HasPrefix(err.Error(), "invalid join: ") {
			t.Fatalf("%q: %v", join, err)
		}
		if want == "U.s = C.k" {
			want = "join column must be of kind key"
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %v, want %q", join, err, want)
		}
	}
}

// TestEdgeKey: composite join values are encoded component by component,
// so ("a", "bc") and ("ab", "c") differ; rows index the sorted values.
func TestEdgeKey(t *testing.T) {
	tb, err := table.Read(strings.NewReader("p,q\na,bc\nab,c\na,bc\n"), "t.csv", "t", map[string]table.Kind{"p": table.Key, "q": table.Key})
	if err != nil {
		t.Fatal(err)
	}
	ek, err := joinprop.NewEdgeKey(tb, []string{"p", "q"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ek.Vals, []string{"1:a2:bc", "2:ab1:c"}) || !slices.Equal(ek.Row, []int32{0, 1, 0}) {
		t.Fatalf("values %q rows %v", ek.Vals, ek.Row)
	}
	if _, err := joinprop.NewEdgeKey(tb, []string{"r"}); !errors.Is(err, joinprop.ErrColumn) {
		t.Fatalf("missing column: %v", err)
	}
	for j, v := range map[int]string{0: "1:a2:bc", 1: "2:ab1:c", 2: "3"} {
		if got := joinprop.Gallop(ek.Vals, 0, v); got != j {
			t.Fatalf("gallop %q = %d, want %d", v, got, j)
		}
	}
}
