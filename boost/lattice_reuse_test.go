package boost_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// TestHostileHolderRefsAnotherValue: a class holder whose down message
// re-uses, for an entry, the kept first-level chunk of another join value
// (its first re-used entry's reference moved to the next first-level
// entry) would have the table's rows of one value counted with another
// value's gradients: the table's party refuses the level naming the edge
// and the reason, never a value, and the job fails instead of training on
// those sums.
func TestHostileHolderRefsAnotherValue(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	secrets := dealtSecrets(t, c.spec.PartyNames())
	addLatticeKeys(t, secrets)
	spec := writeSpec(t, c, "refs.yaml", map[string]any{"trees": 1, "max_depth": 3, "bins": 8, "backend": boost.BackendLattice})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var moved atomic.Int32
	_, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{
		Leader: "alice", Secrets: secrets, StepTimeout: time.Minute,
		OnStep: func(e jobtest.Event) jobtest.Fault {
			if e.Kind != jobtest.Starting || e.Step.Phase != "level" || e.Step.Round != 1 {
				return jobtest.Fault{}
			}
			e.Net.Intercept("alice", func(to string, m *wire.Message) *wire.Message {
				var w latticeMsg
				if m.Type != boost.TypeLatticeDown || wire.Unmarshal(m.Body, &w) != nil || w.Part != 0 || w.At == nil {
					return m
				}
				for e, y := range w.At {
					if y >= 0 {
						w.Refs[e]++
						break
					}
				}
				b, err := wire.Marshal(&w)
				if err != nil {
					t.Error(err)
					return m
				}
				moved.Add(1)
				cp := *m
				cp.Body = b
				return &cp
			})
			return jobtest.Fault{}
		},
	})
	if moved.Load() == 0 {
		t.Fatal("no re-used entry was sent at the second level: the test checks nothing")
	}
	if err == nil || !strings.Contains(err.Error(), "names another join value's first-level entry") {
		t.Fatalf("a re-use of another value's chunk: %v", err)
	}
	for _, tb := range c.data {
		for _, col := range tb.ColumnsOfKind(table.Key) {
			for _, v := range col.Str {
				if strings.Contains(err.Error(), v) {
					t.Fatalf("the failure quotes a value of %s.%s: %v", tb.Name, col.Name, err)
				}
			}
		}
	}
}
