package secureagg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// formedGuard is a guard that admits everything and records the steps a
// party told it it saw formed.
type formedGuard struct {
	mu     sync.Mutex
	formed []job.Step
}

func (g *formedGuard) Aggregate(job.Step, job.Aggregate) error        { return nil }
func (g *formedGuard) Spend(job.Step, job.Spend) error                { return nil }
func (g *formedGuard) Bounds(string, string) (float64, float64, bool) { return 0, 0, false }
func (g *formedGuard) Release(job.Step, job.Release) error            { return nil }
func (g *formedGuard) Publish(job.Step, job.Publication) error        { return nil }
func (g *formedGuard) MinK() (int, error)                             { return 0, nil }
func (g *formedGuard) Synthetic(job.Step, string) error               { return nil }
func (g *formedGuard) Formed(s job.Step) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.formed = append(g.formed, s)
	return nil
}
func (g *formedGuard) saw() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.formed) > 0 }

// guarded is a party of a jobtest network with its own guard: the part of
// job.Participant that Contribute uses.
type guarded struct {
	job.Party
	guard job.Guard
}

func (p guarded) Guard() job.Guard { return p.guard }
func (guarded) JobID() string      { return "job-1" }
func (guarded) Spec() *job.Spec    { return nil }
func (guarded) Seed() []byte       { return nil }
func (guarded) TableSource(job.TableSpec) (table.Source, error) {
	return table.Source{}, errors.New("no tables")
}
func (guarded) Secrets() job.Secrets   { return nil }
func (guarded) Log() *slog.Logger      { return slog.New(slog.DiscardHandler) }
func (guarded) History() []*job.Record { return nil }

// A root that decrypts the total and then reports an error to the others
// (issue 30, finding 8): every party that held the total still tells its
// guard the total was formed, so that no later step of the job may leave
// one of them out; before, ErrRoot went back to the kind and nothing was
// recorded.
func TestContributeRecordsFormedWhenTheRootErrs(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	net.Intercept("org01", func(to string, m *wire.Message) *wire.Message {
		if m.Type == TypeResult {
			m.Body, _ = wire.Marshal(&resultBody{Error: "the root says it failed"})
		}
		return m
	})
	guards := map[string]*formedGuard{}
	for _, n := range c.names {
		guards[n] = &formedGuard{}
	}
	in := testInputs(c, 2)
	outs := runEach(step.Parties, func(ctx context.Context, name string) (*Result, error) {
		res, _, err := Contribute(ctx, guarded{Party: net.Party(name), guard: guards[name]}, step, testConfig(c, name), Contribution{Vector: in[name]})
		return res, err
	})
	for _, n := range slices.DeleteFunc(slices.Clone(c.names), func(p string) bool { return p == "org01" }) {
		if o := outs[n]; !errors.Is(o.err, ErrRoot) {
			t.Fatalf("%s: %v, want the root's error", n, o.err)
		}
		if !guards[n].saw() {
			t.Errorf("%s held the total but did not record it formed", n)
		}
	}
}

// A root that withholds the total from a party (issue 30, "Formed totals
// and a lying root"): org04, which the root never passes the total to,
// still reports the total formed and tells its guard so, having heard
// from the decryptors themselves; before, it ended for want of its parent
// with nothing recorded, and a coordinator colluding with the root could
// re-run the step without a victim and have org04 help decrypt that too.
func TestContributeRecordsFormedWhenTheRootWithholdsTheTotal(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5)
	lattice := testLattice(t, c)
	for _, backend := range []Backend{BackendPaillier, BackendLattice} {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			step := testStep(c, "org01")
			const kept = "org04"
			in := testInputs(c, 2)
			var guards map[string]*formedGuard
			testkit.RetryLonger(t, raceSlowdown*time.Second, func(hop time.Duration) error {
				net := jobtest.NewNetwork(c.names...)
				net.Intercept("org01", func(to string, m *wire.Message) *wire.Message {
					if to == kept && (m.Type == TypeDown || m.Type == TypeResult) {
						return nil
					}
					return m
				})
				guards = map[string]*formedGuard{}
				for _, n := range c.names {
					guards[n] = &formedGuard{}
				}
				cfg := func(name string) Config {
					cfg := testConfig(c, name)
					cfg.Decryptors = c.pk.Threshold + 1 // org04 is not asked for a share up front
					if backend == BackendLattice {
						cfg = latticeConfig(lattice, name)
					}
					cfg.Timeout = hop
					return cfg
				}
				var mu sync.Mutex
				reports := map[string]*Outcome{}
				outs := runEach(step.Parties, func(ctx context.Context, name string) (*Result, error) {
					res, o, err := Contribute(ctx, guarded{Party: net.Party(name), guard: guards[name]}, step, cfg(name), Contribution{Vector: in[name]})
					mu.Lock()
					reports[name] = o
					mu.Unlock()
					return res, err
				})
				if outs["org01"].err != nil || outs["org01"].res == nil {
					return fmt.Errorf("root: %v, want its result", outs["org01"].err)
				}
				if o := reports[kept]; outs[kept].err != nil || o == nil || !slices.Equal(o.Missing, []string{"org01"}) || !o.Formed {
					return fmt.Errorf("%s: %+v, %v; want the root named missing and the total formed", kept, o, outs[kept].err)
				}
				return nil
			})
			if !guards[kept].saw() {
				t.Errorf("%s never held the total and did not record it formed", kept)
			}
		})
	}
}
