package kinds

import (
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/policy"
)

// The default policy takes part in exactly the kinds a node runs: a kind
// added here and not there would be refused by every default node, and a
// name there and not here is a typo nothing would catch.
func TestDefaultPolicyNamesEveryKind(t *testing.T) {
	got := All().Names()
	want := slices.Sorted(maps.Keys(policy.Default().Kinds))
	if !slices.Equal(got, want) {
		t.Errorf("registry %v, default policy's kinds %v", got, want)
	}
}

// The package doc's table names every kind with its package (go doc is
// where a reader looks for the mapping), and no kind that is gone.
func TestDocTableListsEveryKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kinds.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if fields := strings.Fields(line); strings.HasPrefix(line, "\t") && len(fields) >= 2 && fields[0] != "kind" {
			listed = append(listed, fields[0])
		}
	}
	slices.Sort(listed)
	if got := All().Names(); !slices.Equal(listed, got) {
		t.Errorf("the doc's table lists %v, the registry %v", listed, got)
	}
}
