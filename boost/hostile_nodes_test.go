package boost_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// claimValue makes every combo summary a member sends also name join
// value v (sorted in, with one combo of the first entry's), as a hostile
// neighbour asking whether the receiving table holds v.
func claimValue(v string) func(*wire.Message) *wire.Message {
	return func(m *wire.Message) *wire.Message {
		if m.Type != boost.TypeCombos {
			return m
		}
		var cs boost.ComboSummary
		if err := wire.Unmarshal(m.Body, &cs); err != nil || len(cs.Entries) == 0 {
			panic("test: not a combo summary")
		}
		at, _ := slices.BinarySearch(cs.Values, v)
		cs.Values = slices.Insert(cs.Values, at, v)
		cs.Entries = slices.Insert(cs.Entries, at, []boost.ComboCount{{Combo: cs.Entries[0][0].Combo, Count: 1}})
		cp := *m
		var err error
		if cp.Body, err = wire.Marshal(&cs); err != nil {
			panic(err)
		}
		return &cp
	}
}

// A member (bob) whose combo summary names a join value outside its
// edge's intersection is refused by the class holder over real nodes with
// one answer whether or not the class holder's table holds the value
// (its dangling row's, or nobody's): refusing the one and summing the
// other would answer bob's membership queries beyond the private set
// intersection. The value is in no failure text.
func TestHostileMemberClaimsAJoinValueNodes(t *testing.T) {
	t.Parallel()
	checkClaims(t, "bob", "alice", "kZonlyTa", claimValue) // alice's dangling row's a
}

// checkClaims runs the star's job over real nodes twice with corrupter's
// messages corrupted by claim(v), for v the join value held (held only
// by victim's table) and for one no table holds: each time victim must
// refuse naming the edge's intersection, never the value, and with the
// same text both times.
func checkClaims(t *testing.T, corrupter, victim, held string, claim func(string) func(*wire.Message) *wire.Message) {
	t.Helper()
	c := starCase(t, 1, 60)
	tables, _ := markStar(t, c)
	dir := t.TempDir()
	for name, text := range tables {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := *c.spec
	spec.Dir, spec.Source = dir, "train.yaml"
	spec.Params = map[string]any{"trees": 1, "max_depth": 2, "bins": 8}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	failures := map[string]string{}
	heldV, nobody := joinprop.KeyEncode([]string{held}), joinprop.KeyEncode([]string{"kZnobody"})
	for _, v := range []string{heldV, nobody} {
		r := simtest.RunWatched(t, append([]string{hub}, c.spec.PartyNames()...), hub, "boost",
			nodewatch.Watch{Kind: boost.Kind{}, Corrupter: corrupter, Corrupt: claim(v)}, raw,
			sim.ClusterOptions{TablesDir: dir, Timing: lieTiming, Policy: policy.Default(), Setup: simtest.ThresholdKeys(keyBits)})
		why := r.Rec.Failures[victim]
		if r.Rec.Status == node.StatusDone || !strings.Contains(why, "outside the edge's intersection") {
			t.Fatalf("%s claiming %s: %s, %s's failure %q; want a refusal naming the intersection", corrupter, v, r.Rec.Status, victim, why)
		}
		if strings.Contains(r.Rec.Error, "kZonly") || strings.Contains(r.Rec.Error, "kZnobody") || strings.Contains(why, "kZ") {
			t.Fatalf("the failure names the claimed value %s: %q", v, r.Rec.Error)
		}
		failures[v] = why
	}
	if failures[heldV] != failures[nobody] {
		t.Fatalf("%s answers a value it holds %q and one it does not %q: a membership oracle", victim, failures[heldV], failures[nobody])
	}
}

// claimDownValue makes every gradient message the class holder sends past
// a tree's first level also name join value v (sorted in, as one entry
// re-using the first level's first entry in node 0: no ciphertext), as a
// hostile class holder asking whether the receiving table holds v.
func claimDownValue(v string) func(*wire.Message) *wire.Message {
	return func(m *wire.Message) *wire.Message {
		var w wireDown
		if m.Type != boost.TypeGradients || wire.Unmarshal(m.Body, &w) != nil || w.First || len(w.Values) == 0 {
			return m
		}
		at, _ := slices.BinarySearch(w.Values, v)
		w.Values = slices.Insert(w.Values, at, v)
		w.Combos = slices.Insert(w.Combos, at, []string{w.Combos[0][0]})
		w.N = slices.Insert(w.N, at, []uint64{1})
		w.Ref = slices.Insert(w.Ref, at, []int{0})
		w.Node = slices.Insert(w.Node, at, []int{0})
		cp := *m
		var err error
		if cp.Body, err = wire.Marshal(&w); err != nil {
			panic(err)
		}
		return &cp
	}
}

// The class holder (alice) whose gradient sums down name a join value
// outside the edge's intersection is refused by the table's party (bob)
// with one answer whether or not bob's table holds the value (its
// dangling row's, or nobody's), and the value is in no failure text: the
// down direction of TestHostileMemberClaimsAJoinValueNodes.
func TestHostileHolderClaimsAJoinValueNodes(t *testing.T) {
	t.Parallel()
	checkClaims(t, "alice", "bob", "kZonlyAa", claimDownValue) // bob's dangling row's a
}
