package boost_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
)

func testParams() boost.Params {
	p := boost.DefaultParams()
	p.Trees, p.MaxDepth, p.Bins = 4, 3, 8
	return p
}

// TestStarReference: a star of three parties, both edges many-to-many.
func TestStarReference(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		checkAgainstReference(t, starCase(t, seed, 90), testParams())
	}
}

// TestChainReference: a chain whose first edge is many-to-many.
func TestChainReference(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		checkReference(t, chainCase(t, seed, 90), testParams(), "V")
	}
}

// TestModelJSON: result.json's model form, read back.
func TestModelJSON(t *testing.T) {
	t.Parallel()
	m, err := boost.Train(starCase(t, 1, 60).g, starCase(t, 1, 60).data, testParams())
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"op":"<="`) || !strings.HasPrefix(string(b), `{"base_score":`) {
		t.Fatalf("model JSON %s", b)
	}
	var back boost.Model
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, err := back.JSON()
	if err != nil || string(b2) != string(b) {
		t.Fatalf("read back: %v\n%s\n%s", err, b2, b)
	}
}
