package sjc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
)

func TestParsePredicate(t *testing.T) {
	t.Parallel()
	p, err := sjc.ParsePredicate("A.x = B.y and B.w=A.z")
	if err != nil {
		t.Fatal(err)
	}
	if p.Left != "A" || p.Right != "B" || strings.Join(p.LeftCols, ",") != "x,z" || strings.Join(p.RightCols, ",") != "y,w" {
		t.Fatalf("parsed %+v", p)
	}
	for _, bad := range []string{"", "A.x", "A.x = B", "A.x = A.y", "A.x = B.y AND", "A.x = B.y AND A.z = C.w", "A.x = B.y = C.z", "A x = B.y"} {
		if _, err := sjc.ParsePredicate(bad); !errors.Is(err, sjc.ErrJoin) {
			t.Errorf("ParsePredicate(%q) = %v, want ErrJoin", bad, err)
		}
	}
}

// chainSpec is L(class) - S - P with composite S-P key.
func chainSpec() *job.Spec {
	return &job.Spec{
		Kind: "sjc",
		Parties: []job.PartySpec{
			{Name: "lea", Tables: []job.TableSpec{{Name: "L", Path: "L.csv"}}},
			{Name: "exchange", Tables: []job.TableSpec{{Name: "S", Path: "S.csv"}, {Name: "P", Path: "P.csv"}}},
		},
		Schema: map[string]map[string]string{
			"L": {"ssn": "key", "org": "categorical", "class": "class"},
			"S": {"dealer": "key", "day": "key", "gain": "numeric"},
			"P": {"callee": "key", "day": "key", "len": "numeric"},
		},
		Join: []string{"L.ssn = S.dealer", "P.callee = S.dealer AND S.day = P.day"},
	}
}

func TestGraphChain(t *testing.T) {
	t.Parallel()
	g, err := sjc.NewGraph(chainSpec())
	if err != nil {
		t.Fatal(err)
	}
	if g.Target() != "L" || g.Class != "class" || len(g.Tables) != 3 || len(g.Edges) != 2 {
		t.Fatalf("graph %+v", g)
	}
	if g.Tables[1].Name != "S" || g.Tables[2].Name != "P" || g.Tables[1].Party != "exchange" {
		t.Fatalf("pre-order %v %v", g.Tables[1], g.Tables[2])
	}
	e := g.Edges[1]
	if e.Parent != "S" || e.Child != "P" || strings.Join(e.ParentCols, ",") != "dealer,day" || strings.Join(e.ChildCols, ",") != "callee,day" {
		t.Fatalf("edge S-P %+v", e)
	}
	if g.Tables[0].Parent != -1 || g.Tables[2].Parent != 1 || len(g.Tables[1].Children) != 1 {
		t.Fatalf("links %+v", g.Tables)
	}
}

// TestGraphErrors: every bad input is refused with an error naming the
// table (and column) at fault.
func TestGraphErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(s *job.Spec)
		want []string
	}{
		{"cycle", func(s *job.Spec) {
			s.Schema["L"]["org"] = "key"
			s.Schema["P"]["org"] = "key"
			s.Join = append(s.Join, "L.org = P.org")
		}, []string{"cycle", "L - S - P - L"}},
		{"unreachable", func(s *job.Spec) { s.Join = s.Join[:1] }, []string{`table "P"`, "not connected"}},
		{"empty join", func(s *job.Spec) { s.Join = nil }, []string{"join is empty", "L, P, S"}},
		{"no class", func(s *job.Spec) { s.Schema["L"]["class"] = "categorical" }, []string{"no class column", "L, P, S"}},
		{"two classes", func(s *job.Spec) { s.Schema["S"]["gain"] = "class" }, []string{"two class columns", `table "L" column "class"`, `table "S" column "gain"`}},
		{"unknown column", func(s *job.Spec) { s.Join[0] = "L.ssn = S.trader" }, []string{`table "S" has no column "trader"`}},
		{"unknown table", func(s *job.Spec) { s.Join[0] = "L.ssn = Q.dealer" }, []string{`unknown table "Q"`}},
		{"not a key", func(s *job.Spec) { s.Join[0] = "L.org = S.dealer" }, []string{`table "L" column "org" is categorical`}},
		{"bad kind", func(s *job.Spec) { s.Schema["S"]["gain"] = "float" }, []string{`table "S" column "gain"`, "float"}},
		{"no owner", func(s *job.Spec) { s.Parties[1].Tables = s.Parties[1].Tables[:1] }, []string{`table "P"`, "no party"}},
		{"no schema", func(s *job.Spec) { delete(s.Schema, "P") }, []string{`table "P"`, "no schema"}},
		{"syntax", func(s *job.Spec) { s.Join[1] = "P.callee == S.dealer" }, []string{"P.callee == S.dealer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := chainSpec()
			c.edit(s)
			_, err := sjc.NewGraph(s)
			if !errors.Is(err, sjc.ErrJoin) {
				t.Fatalf("err = %v, want ErrJoin", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestGraphSingleTable(t *testing.T) {
	t.Parallel()
	g, err := sjc.BuildGraph(map[string]string{"T": "p"}, map[string]map[string]table.Kind{"T": {"c": table.Class, "x": table.Numeric}}, nil)
	if err != nil || len(g.Tables) != 1 || len(g.Edges) != 0 {
		t.Fatalf("single table: %v %+v", err, g)
	}
}
