package boost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// PredictKind is `kind: boost-predict`: it scores the join rows of new
// tables with a model a boost job trained earlier, each party applying
// only its own predicates. A kind of its own rather than sjc-predict:
// sjc-predict routes join rows down one classification tree by sjc's
// class and split propagation and reads sjc's kept model parts, while a
// boosted model is many regression trees whose leaf weights are summed at
// the class holder, kept in boost's form; one up pass of boost's combo
// summaries over the new tables (every row signed with all its table's
// splits) gives the class holder every join row's leaves in every tree at
// once. The spec is written like the training spec (same tables, schema
// and join; the class column may be absent from the class table's file)
// with params {model: JOBID, psi, timeout_ms}; every party must hold its
// part of that model (ModelSecret(JOBID)).
//
// Steps: "load" (each party reads its tables and its model part and
// reports how many splits it kept per table, which is committed: the
// training log already made it public) and "predict" (a private set
// intersection per edge, each party signs its rows with its kept
// predicates, one up pass of combo summaries; the class holder walks each
// group through its skeletons, keeps per group its row, join rows, margin
// and probability in PredictionsSecret, and reports the number of join
// rows and of those predicted positive, which are committed).
//
// Leakage: as a training level's up pass (split-summary: per shared join
// value, how many partial join rows carry each combination of the
// sender's subtree's split outcomes), over the new tables, and the PSI's
// shared join values; the log holds the split counts per table and the
// two row counts. No threshold, weight or margin leaves its holder.
type PredictKind struct{}

// PredictionsSecret is where the class holder keeps a boost-predict job's
// predictions: a CSV of row (of the class table, from 0), join_rows,
// margin and probability (logistic loss) per group of alike join rows.
func PredictionsSecret(id string) string { return "predictions/" + id + "/boost.csv" }

// PredictParams are boost-predict's params.
type PredictParams struct {
	// Model is the job id of the boost job that trained the model.
	Model string `yaml:"model"`
	// PSI is the edges' PSI protocol, as boost's params.psi.
	PSI string `yaml:"psi"`
	// TimeoutMS is each step's timeout (the node's default when 0).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

var (
	predictLoadRound = job.Round[struct{}, predictLoad, predictLoad]{Phase: "load"}
	predictRound     = job.Round[struct{}, predictOutput, predictOutput]{Phase: "predict"}
)

// predictLoad is a party's kept split count per own table; committed, the
// counts of every table.
type predictLoad struct {
	Splits map[string]int `msgpack:"splits"`
}

// predictOutput is the class holder's count of the join rows scored and
// of those predicted positive (logistic loss).
type predictOutput struct {
	Holder   bool   `msgpack:"holder"`
	Rows     uint64 `msgpack:"rows"`
	Positive uint64 `msgpack:"positive"`
}

func parsePredict(spec *job.Spec) (*joinprop.Graph, PredictParams, error) {
	var p PredictParams
	if err := spec.DecodeParams(&p); err != nil {
		return nil, p, err
	}
	if p.Model == "" || !filepath.IsLocal(p.Model) || strings.ContainsAny(p.Model, `/\`) {
		return nil, p, spec.Errorf("params.model", "must name the job id of a trained boost model")
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, p, err
	}
	if _, err := psiMode(spec, p.PSI); err != nil {
		return nil, p, err
	}
	if len(spec.Test) > 0 {
		return nil, p, spec.Errorf("test", "boost-predict takes no test set")
	}
	g, err := joinprop.NewGraph(spec)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %s: %w", job.ErrSpec, spec.Source, err)
	}
	return g, p, nil
}

// Validate checks the spec.
func (PredictKind) Validate(spec *job.Spec) error {
	_, _, err := parsePredict(spec)
	return err
}

// UsesThresholdKey: nothing is encrypted (job.KeyUser).
func (PredictKind) UsesThresholdKey() bool { return false }

// OutputDisclosure: every step's output is what the log commits.
func (PredictKind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Uses declares the disclosure of a party's data: join keys into a PSI
// and as the join values of combo summaries; attributes as split
// outcomes (combo summaries).
func (PredictKind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	g, _, err := parsePredict(spec)
	if err != nil {
		return nil, err
	}
	var out []job.Use
	for i, t := range g.Tables {
		if t.Party != party {
			continue
		}
		peers := g.NeighbourParties(i)
		for _, c := range t.Columns {
			switch c.Kind {
			case table.Key:
				out = append(out,
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DisclosePSIBlinded, To: peers},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DiscloseSplitSummary, To: peers})
			case table.Numeric:
				out = append(out, job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseSplitSummary, To: peers})
			}
		}
	}
	return out, nil
}

// Coordinate runs load and predict.
func (PredictKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	g, p, err := parsePredict(c.Spec())
	if err != nil {
		return nil, err
	}
	call := job.Call[struct{}]{Parties: c.Spec().PartyNames(), TimeoutMS: p.TimeoutMS}
	if _, err := predictLoadRound.Run(ctx, c, call, func(o *job.Outcome[predictLoad]) (predictLoad, error) {
		return decidePredictLoad(o, g)
	}); err != nil {
		return nil, err
	}
	holder := g.Tables[0].Party
	done, err := predictRound.Run(ctx, c, call, func(o *job.Outcome[predictOutput]) (predictOutput, error) {
		if err := o.Err(); err != nil {
			return predictOutput{}, err
		}
		r, ok := o.Results[holder]
		if !ok || !r.Holder || r.Positive > r.Rows {
			return predictOutput{}, fmt.Errorf("%w: no prediction report from party %s", ErrHolder, holder)
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	return job.Result{"model": p.Model, "rows": done.Decision.Rows, "positive": done.Decision.Positive,
		"predictions": PredictionsSecret(c.JobID()), "predictions_party": holder}, nil
}

// decidePredictLoad commits every table's split count, each reported by
// the table's party only.
func decidePredictLoad(o *job.Outcome[predictLoad], g *joinprop.Graph) (predictLoad, error) {
	if err := o.Err(); err != nil {
		return predictLoad{}, err
	}
	d := predictLoad{Splits: map[string]int{}}
	for _, party := range slices.Sorted(maps.Keys(o.Results)) {
		for name, n := range o.Results[party].Splits {
			i := g.Index(name)
			if i < 0 || g.Tables[i].Party != party || n < 0 {
				return predictLoad{}, fmt.Errorf("%w: party %s reports splits of a table it does not hold", ErrModel, party)
			}
			d.Splits[name] = n
		}
	}
	for _, t := range g.Tables {
		if _, ok := d.Splits[t.Name]; !ok {
			return predictLoad{}, fmt.Errorf("%w: no split count for table %q", ErrModel, t.Name)
		}
	}
	return d, nil
}

// Assemble writes the class holder's predictions to DIR/predictions.csv
// in `cohort sim`, where one operator owns every party.
func (PredictKind) Assemble(_ context.Context, _ *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	return job.AssemblePredictions("boost-predict", result, parties, dir)
}

// errNoPart: a party holding a table has no part of the named model.
var errNoPart = errors.New("boost-predict: no part of the model")
