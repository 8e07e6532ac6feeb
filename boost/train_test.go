package boost_test

import (
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
	for seed := uint64(1); seed <= 3; seed++ {
		checkAgainstReference(t, starCase(t, seed, 90), testParams())
	}
}

// TestChainReference: a chain whose first edge is many-to-many.
func TestChainReference(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		checkReference(t, chainCase(t, seed, 90), testParams(), "V")
	}
}
