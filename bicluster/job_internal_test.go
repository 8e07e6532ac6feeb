package bicluster

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// The coordinator's merge bookkeeping on public descriptions: candidate
// pairs by column overlap across parties only, in Merge's order; similar
// pairs joined transitively; small groups dropped; sums only on the
// groups' published columns.
func TestMergeBookkeeping(t *testing.T) {
	t.Parallel()
	locals := [][]LocalDesc{
		{{Cols: []int{0, 1, 2, 3}, Count: 3}, {Cols: []int{0, 1, 2}, Count: 1}}, // party 0: two overlapping locals
		{{Cols: []int{1, 2, 3}, Count: 2}, {Cols: []int{7, 8}, Count: 2}},
		{{Cols: []int{7, 8, 9}, Count: 1}, {Cols: []int{5}, Count: 9}},
	}
	pairs := candidatePairs(locals)
	want := []pairDesc{
		{A: Ref{0, 0}, B: Ref{1, 0}, Cols: []int{0, 1, 2, 3}},
		{A: Ref{0, 1}, B: Ref{1, 0}, Cols: []int{0, 1, 2, 3}},
		{A: Ref{1, 1}, B: Ref{2, 0}, Cols: []int{7, 8, 9}},
	}
	if !reflect.DeepEqual(pairs, want) {
		t.Fatalf("pairs %v, want %v", pairs, want)
	}
	// Only the first and third pairs test similar: {0,1} stays alone
	// although its columns overlap {1,0}'s.
	groups := joinPairs(locals, pairs, []bool{true, false, true})
	wantG := [][]Ref{{{0, 0}, {1, 0}}, {{0, 1}}, {{1, 1}, {2, 0}}, {{2, 1}}}
	if !reflect.DeepEqual(groups, wantG) {
		t.Fatalf("groups %v, want %v", groups, wantG)
	}
	// Round 0 tests each column component's first local against the
	// others: {0,0}–{1,0} and {1,1}–{2,0}, not {0,1}–{1,0}.
	r0 := testRound(locals, pairs, nil, nil, 0)
	if want := []pairDesc{pairs[0], pairs[2]}; !reflect.DeepEqual(r0, want) {
		t.Fatalf("round 0 %v, want %v", r0, want)
	}
	// {0,0}–{1,0} similar: {0,1}–{1,0} crosses groups and is tested in
	// round 1; then nothing is left.
	r1 := testRound(locals, pairs, r0, []bool{true, true}, 1)
	if want := []pairDesc{pairs[1]}; !reflect.DeepEqual(r1, want) {
		t.Fatalf("round 1 %v, want %v", r1, want)
	}
	if r2 := testRound(locals, pairs, append(r0, r1...), []bool{true, true, false}, 2); len(r2) != 0 {
		t.Fatalf("round 2 %v", r2)
	}
	// Four matching locals of one bicluster: 3 pairs, not 6.
	star := [][]LocalDesc{{{Cols: []int{0, 1}, Count: 2}}, {{Cols: []int{0, 1}, Count: 2}}, {{Cols: []int{0, 1}, Count: 2}}, {{Cols: []int{0, 1}, Count: 2}}}
	sp := candidatePairs(star)
	s0 := testRound(star, sp, nil, nil, 0)
	if len(sp) != 6 || len(s0) != 3 {
		t.Fatalf("four matching locals: %d candidate pairs, %d in round 0; want 6 and 3", len(sp), len(s0))
	}
	if s1 := testRound(star, sp, s0, []bool{true, true, true}, 1); len(s1) != 0 {
		t.Fatalf("round 1 after a star of similar pairs: %v", s1)
	}
	// With the centre dissimilar to the others, round 1 tests all their
	// pairs: the groups are those of testing everything.
	if s1 := testRound(star, sp, s0, []bool{false, false, false}, 1); len(s1) != 3 {
		t.Fatalf("round 1 after a dissimilar centre: %v", s1)
	}
	// {0,0}+{1,0} hold 5 rows of two parties; {2,1} holds 9, but of one
	// party (its sums would be its representative); the others are under
	// min_rows 5.
	kept := keepGroups(groups, locals, groupKeep{rows: 5, parties: 2})
	if want := [][]Ref{groups[0]}; !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	// With min_group_parties 3, the group of two parties is left out too;
	// a least below minContributors still leaves out a lone party's group.
	if kept3 := keepGroups(groups, locals, groupKeep{rows: 5, parties: 3}); len(kept3) != 0 {
		t.Fatalf("min_group_parties 3 kept %v", kept3)
	}
	if kept0 := keepGroups(groups, locals, groupKeep{rows: 5}); !reflect.DeepEqual(kept0, kept) {
		t.Fatalf("a zero least kept %v, want %v", kept0, kept)
	}
	// Two locals of one party joined through a third party's are a
	// group of two contributors.
	if c := contributors([]Ref{{0, 0}, {1, 0}, {0, 1}}); c != 2 {
		t.Fatalf("%d contributors, want 2", c)
	}
	slots, n := groupSlots(kept, locals)
	if want := [][]int{{0, 1, 2, 3}}; !reflect.DeepEqual(slots, want) || n != 4 {
		t.Fatalf("slots %v (%d), want %v", slots, n, want)
	}
	// Columns held by members with half of a group's rows: of {0,1,2,3}
	// (3 rows) and {1,2,3} (2 rows), column 0 has 3 of 5: all four.
	rep := groupRep(kept[0], locals, []float64{5, 10, 15, 20}, slots[0], 10)
	if want := []float64{1, 2, 3, 4, 0, 0, 0, 0, 0, 0}; !reflect.DeepEqual(rep, want) {
		t.Fatalf("representative %v, want %v", rep, want)
	}
	// A column held by fewer than half the rows is neither published nor
	// aggregated.
	odd := [][]LocalDesc{{{Cols: []int{0, 1, 2}, Count: 4}}, {{Cols: []int{0, 1, 2, 3}, Count: 1}}}
	if s, _ := groupSlots([][]Ref{{{0, 0}, {1, 0}}}, odd); !reflect.DeepEqual(s, [][]int{{0, 1, 2}}) {
		t.Fatalf("slots %v include a minority column", s)
	}
}

// numBits: the later iterations' bound on a party's Num from the public
// ΣDen, with two bits to spare, never above the configured bound.
func TestNumBits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		den        []float64
		frac, want int
	}{
		{[]float64{0, 3.5, 1000}, 16, 28}, // 1000·2^16 < 2^26
		{[]float64{0, 0}, 16, 3},
		{[]float64{0.25}, 0, 3},
		{[]float64{1 << 50}, 16, 62}, // capped
		{[]float64{1e308}, 16, 62},   // 2^16·1e308 overflows: capped
	} {
		if got := numBits(c.den, c.frac, 62); got != c.want {
			t.Errorf("numBits(%v, %d) = %d, want %d", c.den, c.frac, got, c.want)
		}
	}
}

// TestTestRoundsGiveMergeGroups: on random column sets and a random
// similarity of every pair, the groups joined from the two rounds' bits
// are the groups of testing every candidate pair (Merge's).
func TestTestRoundsGiveMergeGroups(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		locals := make([][]LocalDesc, 2+rng.IntN(5))
		for p := range locals {
			for range rng.IntN(4) {
				var cols []int
				for j := range 6 {
					if rng.IntN(2) == 0 {
						cols = append(cols, j)
					}
				}
				if len(cols) == 0 {
					cols = []int{rng.IntN(6)}
				}
				locals[p] = append(locals[p], LocalDesc{Cols: cols, Count: 1})
			}
		}
		pairs := candidatePairs(locals)
		truth := make(map[[2]Ref]bool, len(pairs))
		all := make([]bool, len(pairs))
		for i, p := range pairs {
			truth[[2]Ref{p.A, p.B}] = rng.IntN(3) > 0
			all[i] = truth[[2]Ref{p.A, p.B}]
		}
		var tested []pairDesc
		var bits []bool
		for round := 0; round < 5; round++ {
			next := testRound(locals, pairs, tested, bits, round)
			if round >= 2 && len(next) > 0 {
				t.Fatalf("trial %d: round %d tests %d pairs", trial, round, len(next))
			}
			for _, p := range next {
				tested = append(tested, p)
				bits = append(bits, truth[[2]Ref{p.A, p.B}])
			}
		}
		if got, want := joinPairs(locals, tested, bits), joinPairs(locals, pairs, all); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: rounds give %v, all pairs %v", trial, got, want)
		}
	}
}

// histOnly is a participant that has only a name, a seed and a history.
type histOnly struct {
	job.Participant
	hist []*job.Record
}

func (h histOnly) Self() string           { return "org02" }
func (h histOnly) Seed() []byte           { return []byte("seed") }
func (h histOnly) History() []*job.Record { return h.hist }

// TestTestStepRefusesForeignPairs: a party refuses a merge test step
// whose pairs are not the ones the committed history gives, so a
// coordinator cannot choose which representatives are compared and
// decrypted (blinded) at its node.
func TestTestStepRefusesForeignPairs(t *testing.T) {
	t.Parallel()
	locals := [][]LocalDesc{
		{{Cols: []int{0, 1, 2}, Count: 3}},
		{{Cols: []int{0, 1, 2}, Count: 3}},
		{{Cols: []int{0, 1, 2}, Count: 3}},
	}
	dec, err := wire.Marshal(localsDecision{Locals: locals})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMatrix(1, 3, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{p: histOnly{hist: []*job.Record{{Step: job.Step{Phase: localsRound.Phase}, Decision: dec}}}, cfg: &jobConfig{p: DefaultParams()}, m: m, index: 1}
	pairs := candidatePairs(locals)
	for _, c := range []struct {
		name  string
		pairs []pairDesc
	}{
		{"a pair round 0 does not test", pairs[2:]},
		{"all pairs", pairs},
		{"other columns", []pairDesc{{A: pairs[0].A, B: pairs[0].B, Cols: []int{0, 1, 2, 3}}, pairs[1]}},
	} {
		args, err := wire.Marshal(testArgs{Pairs: c.pairs})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Step(context.Background(), job.Step{Phase: pairTestRound.Phase, Args: args, Coordinator: "org01"})
		if err == nil || !strings.Contains(err.Error(), "not the ones the committed history gives") || !strings.Contains(err.Error(), "coordinator org01") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// The right pairs pass the check (and fail later: this party has no
	// iterations committed).
	args, _ := wire.Marshal(testArgs{Pairs: pairs[:2]})
	if _, err := s.Step(context.Background(), job.Step{Phase: pairTestRound.Phase, Args: args}); err == nil || strings.Contains(err.Error(), "not the ones") {
		t.Errorf("the derived pairs: %v", err)
	}
}

// TestMergeStepRefusesLoneSlot: a party refuses a merge step whose groups
// give a slot contributions from fewer than two parties (a lone local's
// sums are its representative times its count), naming the coordinator
// and the step, before it reads the history or its data.
func TestMergeStepRefusesLoneSlot(t *testing.T) {
	t.Parallel()
	s := &session{p: histOnly{}, cfg: &jobConfig{p: DefaultParams()}, index: 1}
	for _, groups := range [][][]Ref{
		{{{2, 1}}},
		{{{0, 0}, {1, 0}}, {{1, 1}}},
		{{{0, 0}, {1, 0}}, {{2, 0}, {2, 1}}},
		{{}},
	} {
		args, err := wire.Marshal(mergeArgs{Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Step(context.Background(), job.Step{Phase: mergeRound.Phase, Args: args, Coordinator: "org01"})
		if err == nil || !strings.Contains(err.Error(), "refuses merge round 0: coordinator org01") || !strings.Contains(err.Error(), "of the 2 parties a decrypted slot needs") {
			t.Errorf("groups %v: %v", groups, err)
		}
	}
}
