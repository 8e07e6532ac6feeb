package boost_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// loadReport and loadCommit mirror the load step's output and decision.
type loadReport struct {
	Holder   bool   `msgpack:"holder"`
	Positive string `msgpack:"positive"`
	Lattice  bool   `msgpack:"lattice"`
	Bins     int    `msgpack:"bins"`
}

type loadCommit struct {
	Positive string         `msgpack:"positive"`
	Backend  string         `msgpack:"backend"`
	Bins     map[string]int `msgpack:"bins"`
}

// lyingBins is boost.Kind whose coordinator drives the job as boost's
// does but lies about the lattice layouts' bins at the load step: report
// rewrites a party's announcement before the coordinator decides (as if
// the party had announced it), commit the bins it commits. The parties'
// sessions are the honest ones.
type lyingBins struct {
	boost.Kind
	report func(party string, bins int) int
	commit func(bins map[string]int)
}

func (k lyingBins) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	return k.Kind.Coordinate(ctx, &binsCoordinator{Coordinator: c, k: k})
}

type binsCoordinator struct {
	job.Coordinator
	k lyingBins
}

func (c *binsCoordinator) Start(ctx context.Context, step job.Step) (job.Attempt, error) {
	a, err := c.Coordinator.Start(ctx, step)
	if err != nil || step.Phase != "load" {
		return a, err
	}
	return &binsAttempt{Attempt: a, k: c.k}, nil
}

type binsAttempt struct {
	job.Attempt
	k lyingBins
}

func (a *binsAttempt) Wait(ctx context.Context) (*job.Outputs, error) {
	outs, err := a.Attempt.Wait(ctx)
	if err != nil || a.k.report == nil {
		return outs, err
	}
	for p, b := range outs.Results {
		var r loadReport
		if err := wire.Unmarshal(b, &r); err != nil {
			return nil, err
		}
		r.Bins = a.k.report(p, r.Bins)
		if outs.Results[p], err = wire.Marshal(&r); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

func (a *binsAttempt) Commit(ctx context.Context, outs *job.Outputs, decision []byte, failure string) (*job.Record, error) {
	if failure == "" && a.k.commit != nil {
		var d loadCommit
		if err := wire.Unmarshal(decision, &d); err != nil {
			return nil, err
		}
		a.k.commit(d.Bins)
		var err error
		if decision, err = wire.Marshal(&d); err != nil {
			return nil, err
		}
	}
	return a.Attempt.Commit(ctx, outs, decision, failure)
}

// otherBins is rehead's edit that names other bins than the head's.
func otherBins(_ string, w *latticeMsg) bool { w.Bins++; return true }

// rehead rewrites part 0 of a lattice message of type typ from a party
// (its head) with edit, where edit says it changed it; it counts what it
// changed.
func rehead(typ string, changed *atomic.Int32, edit func(to string, w *latticeMsg) bool) jobtest.Tamper {
	return func(to string, m *wire.Message) *wire.Message {
		var w latticeMsg
		if m.Type != typ || wire.Unmarshal(m.Body, &w) != nil || w.Part != 0 || !edit(to, &w) {
			return m
		}
		b, err := wire.Marshal(&w)
		if err != nil {
			return m
		}
		changed.Add(1)
		cp := *m
		cp.Body = b
		return &cp
	}
}

// TestLyingBins: on the three-party star over real nodes, a coordinator
// that commits other bins than a party announced, bins outside 1 to
// params.bins or bins of other parties, a party that announces bins
// outside that range, and lattice messages whose heads name other bins
// than the log (the class holder's down message, a table's bin sums)
// each make the job fail naming the field, before anyone reads sums laid
// out for other bins than the log's; so do bin sums that name to the
// class holder columns' bins their layouts cannot hold, or name them to
// a decryptor, which must not learn them (lattice_pack.go).
func TestLyingBins(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	p := testParams()
	p.Trees = 1
	secrets := dealtSecrets(t, c.spec.PartyNames())
	addLatticeKeys(t, secrets)
	spec := writeSpec(t, c, "lying.yaml", map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins,
		"backend": boost.BackendLattice})
	var downs, sums, cols, toDecryptor atomic.Int32
	id := 0
	for _, tc := range []struct {
		name    string
		kind    lyingBins
		tamper  string // the party whose lattice heads are rewritten
		typ     string
		changed *atomic.Int32
		edit    func(to string, w *latticeMsg) bool // the head's rewrite (rehead)
		want    string
	}{
		{name: "coordinator commits other bins than announced", kind: lyingBins{commit: func(b map[string]int) { b["carol"]++ }},
			want: "the committed bins of party carol are not what it announced"},
		{name: "coordinator commits bins past params.bins", kind: lyingBins{commit: func(b map[string]int) { b["bob"] = p.Bins + 1 }},
			want: "the committed bins of party bob lie outside 1 to params.bins"},
		{name: "coordinator commits no bins of a party", kind: lyingBins{commit: func(b map[string]int) { delete(b, "carol") }},
			want: "the committed bins name other parties than those that announce"},
		{name: "party announces bins past params.bins", kind: lyingBins{report: func(q string, b int) int {
			if q == "bob" {
				return p.Bins + 1
			}
			return b
		}}, want: "party bob announced bins outside 1 to params.bins"},
		{name: "down message names other bins", tamper: "alice", typ: boost.TypeLatticeDown, changed: &downs, edit: otherBins,
			want: "not laid out for the bins the log commits"},
		{name: "bin sums name other bins", tamper: "carol", typ: boost.TypeLatticeBins, changed: &sums, edit: otherBins,
			want: `the lattice bin sums of table "B" are not laid out for the bins the log commits`},
		{name: "bin sums name columns' bins that do not fit", tamper: "bob", typ: boost.TypeLatticeBins, changed: &cols,
			edit: func(to string, w *latticeMsg) bool {
				if to != "alice" || len(w.Cols) == 0 {
					return false
				}
				w.Cols[len(w.Cols)-1] = w.Bins + 1
				return true
			}, want: `the lattice bin sums of table "A": the bins of its columns do not fit its layouts`},
		{name: "bin sums name columns' bins to a decryptor", tamper: "bob", typ: boost.TypeLatticeBins, changed: &toDecryptor,
			edit: func(to string, w *latticeMsg) bool {
				w.Cols = []int{2, 2, 2}
				return to == "carol"
			}, want: `the lattice bin sums of table "A" name its columns' bins to a decryptor`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id++
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			opts := jobtest.Options{JobID: fmt.Sprintf("lying-%d", id), Leader: "alice", Secrets: secrets, StepTimeout: time.Minute}
			if tc.typ != "" {
				opts.OnStep = func(e jobtest.Event) jobtest.Fault {
					if e.Kind == jobtest.Starting && e.Step.Phase == "level" && e.Step.Round == 0 {
						e.Net.Intercept(tc.tamper, rehead(tc.typ, tc.changed, tc.edit))
					}
					return jobtest.Fault{}
				}
			}
			sp := spec
			_, err := jobtest.Run(ctx, tc.kind, &sp, opts)
			t.Log(err)
			if tc.changed != nil && tc.changed.Load() == 0 {
				t.Fatalf("no %s head was changed: the test checks nothing", tc.typ)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}
