package bicluster_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
)

// asked is what the parties asked their node's policy (Guard.Aggregate).
type asked struct {
	mu     sync.Mutex
	calls  map[string][]job.Aggregate // by party
	phases map[string][]string
	slots  map[string][][]string // the parties of each merge group asked about, by party
	refuse string                // the party whose guard refuses
}

// guarded runs the kind with every party's guard recorded.
type guarded struct {
	bicluster.Kind
	a *asked
}

func (k guarded) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	return k.Kind.Open(ctx, &spied{Participant: p, a: k.a})
}

type spied struct {
	job.Participant
	a *asked
}

func (p *spied) Guard() job.Guard {
	return spyGuard{Guard: p.Participant.Guard(), self: p.Self(), a: p.a}
}

type spyGuard struct {
	job.Guard
	self string
	a    *asked
}

func (g spyGuard) Aggregate(step job.Step, agg job.Aggregate) error {
	if agg.Table == "" { // a merge group's floor (slots)
		g.a.mu.Lock()
		g.a.slots[g.self] = append(g.a.slots[g.self], agg.Parties)
		g.a.mu.Unlock()
		return g.Guard.Aggregate(step, agg)
	}
	g.a.mu.Lock()
	g.a.calls[g.self] = append(g.a.calls[g.self], agg)
	g.a.phases[g.self] = append(g.a.phases[g.self], step.Phase)
	g.a.mu.Unlock()
	if g.self == g.a.refuse {
		return errors.New("refused by " + g.self + "'s policy: rule floors.min_parties")
	}
	return g.Guard.Aggregate(step, agg)
}

// TestJobAsksPolicy: each party asks its node's policy at every step of
// its aggregations (the iterations' sums over all its rows, the merge's
// over its locals' rows in the kept groups), naming its table, the table's
// numeric columns (Column "") and every party, and at the merge about
// each group's contributors on their own (no table: the floor); a refusal
// takes the party out and fails the job naming it and the rule.
func TestJobAsksPolicy(t *testing.T) {
	t.Parallel()
	seed := seedN(5)
	m, _, err := synth.Paper(0).Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	path, names, parts := consortium(t, m, 3, seed, "")
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	a := &asked{calls: map[string][]job.Aggregate{}, phases: map[string][]string{}, slots: map[string][][]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, guarded{a: a}, spec, dealt(t, names))
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Result["iterations"].(int)
	if n < 2 {
		t.Fatalf("%d iterations: the every-step rule is not exercised", n)
	}
	want := strings.Repeat("iterate,", n) + "merge"
	for i, p := range names {
		if got := strings.Join(a.phases[p], ","); got != want {
			t.Fatalf("%s asked for %s, want %s", p, got, want)
		}
		it, mg := a.calls[p][0], a.calls[p][n]
		for _, c := range a.calls[p] {
			if c.Table != "m" || c.Column != "" || strings.Join(c.Parties, ",") != strings.Join(names, ",") || c.Noised {
				t.Errorf("%s asked %+v", p, c)
			}
		}
		if it.Rows != parts[i].Matrix.Rows || mg.Rows < 1 || mg.Rows > it.Rows {
			t.Errorf("%s: rows %d and %d, holds %d", p, it.Rows, mg.Rows, parts[i].Matrix.Rows)
		}
		groups := rep.Result["biclusters"].([]bicluster.GlobalResult)
		if len(a.slots[p]) < len(groups) {
			t.Errorf("%s asked about %d merge groups' contributors, the job published %d", p, len(a.slots[p]), len(groups))
		}
		for _, ps := range a.slots[p] {
			if len(ps) < 2 {
				t.Errorf("%s asked about a group of %v", p, ps)
			}
		}
	}
	a = &asked{calls: map[string][]job.Aggregate{}, phases: map[string][]string{}, slots: map[string][][]string{}, refuse: "org02"}
	_, err = jobtest.Run(ctx, guarded{a: a}, spec, dealt(t, names))
	if err == nil || !strings.Contains(err.Error(), "party org02: refused by org02's policy: rule floors.min_parties") {
		t.Fatalf("a refusal: %v", err)
	}
}
