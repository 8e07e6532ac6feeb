package pgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/tree"
)

// TestForestSize: a forest whose JSON is above the limit is refused,
// naming params.random_forest and params.max_depth; at its exact size it
// passes.
func TestForestSize(t *testing.T) {
	t.Parallel()
	leaf := &tree.Tree{Labels: []string{"no", "yes"}, Root: &tree.Node{Counts: []uint64{3, 4}}}
	f := &Forest{Labels: leaf.Labels, Features: 1, Trees: []*tree.Tree{leaf, leaf}}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkForestSize(f, len(b)); err != nil {
		t.Errorf("at its size: %v", err)
	}
	err = checkForestSize(f, len(b)-1)
	if err == nil || !strings.Contains(err.Error(), "params.random_forest") || !strings.Contains(err.Error(), "params.max_depth") {
		t.Errorf("a byte above the limit: %v", err)
	}
}
