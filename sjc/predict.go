package sjc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// PredictKind is `kind: sjc-predict`: it classifies the join rows of new
// tables with a model an sjc job trained earlier, each party answering for
// its own predicates. The spec is written like the training spec (same
// tables, schema and join; the target table's class column may be absent
// from its file) with params {model: JOBID}. Every party must hold its part
// of that model (ModelSecret(JOBID)), kept by the training job.
//
// Steps: "load" (each party reads its tables and its model part and
// reports the model's public skeleton, which must be the same everywhere)
// and "classify" (PSI per edge, class propagation counting join rows,
// split propagation down the skeleton with each party's own predicates;
// the target table's party counts, per row and per predicted label, the
// join rows reaching each leaf). The result holds the number of join rows
// predicted per label; the target's party keeps the per-row predictions
// (PredictionsSecret). Leakage: the training job's profile for class
// propagation and split summaries (over the new tables, with one class),
// the skeleton (already public), and the predicted label counts.
//
// Memory: no party loads its tables. Each streams a table once
// (table.Scan) and holds one row per way its rows are routed: their join
// values and, for each column its model part splits on, the side of each
// predicate a value falls (predict_rows.go, router), weighted by how many
// rows share it, so that every count is the row-by-row one (the weights
// of Local, as in training). That is at most the distinct join values
// times the cells the party's predicates cut, however many rows the
// table has; max_table_rows bounds it. The target's party then streams
// its table a second time and writes each row's line as it reads it
// (job.WriteSecretFrom): a row's join rows are its key's over the key's
// rows. A table that changes between the two reads fails the step
// (ErrData), never a line for a row the classification did not see.
type PredictKind struct{}

// The rounds of sjc-predict: load (every party reports the public
// skeleton of its model part, which must be the same everywhere) and
// classify (each party's share of routing the new join rows down it).
var (
	predictLoadRound = job.Round[struct{}, predictLoadOutput, predictLoadDecision]{Phase: "load"}
	classifyRound    = job.Round[struct{}, classifyOutput, classifyDecision]{Phase: "classify"}
)

// PredictionsSecret is where the target table's party keeps the per-row
// predictions of an sjc-predict job.
func PredictionsSecret(id string) string { return "predictions/" + id + "/sjc.csv" }

// predictLabel is the one class of prediction: every join row counts once.
const predictLabel = "join-rows"

// PredictParams are sjc-predict's params.
type PredictParams struct {
	// Model is the job id of the sjc job that trained the model.
	Model string `yaml:"model"`
	// PSI is the edges' PSI protocol, as sjc's params.psi (default auto).
	PSI string `yaml:"psi"`
	// TimeoutMS is each step's timeout (the node's default when 0).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

func parsePredict(spec *job.Spec) (*Graph, PredictParams, error) {
	var p PredictParams
	if err := spec.DecodeParams(&p); err != nil {
		return nil, p, err
	}
	if p.Model == "" || !filepath.IsLocal(p.Model) || strings.ContainsAny(p.Model, `/\`) {
		return nil, p, spec.Errorf("params.model", "must name the job id of a trained sjc model, not %q", p.Model)
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, p, err
	}
	if len(spec.Test) > 0 {
		return nil, p, spec.Errorf("test", "sjc-predict takes no test set")
	}
	if _, err := psiMode(spec, p.PSI); err != nil {
		return nil, p, err
	}
	g, err := NewGraph(spec)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %s: %w", job.ErrSpec, spec.Source, err)
	}
	return g, p, nil
}

// Validate checks the join graph and params.
func (PredictKind) Validate(spec *job.Spec) error {
	_, _, err := parsePredict(spec)
	return err
}

// OutputDisclosure: the outputs are the public skeleton and the counts
// of predicted join rows per label.
func (PredictKind) OutputDisclosure(job.Step) wire.Disclosure {
	return wire.DisclosePublicResult
}

// predictLoadOutput is a party's model part's public skeleton (nothing
// from a party holding no table of the join).
type predictLoadOutput struct {
	Labels []string    `msgpack:"labels"`
	Nodes  []ModelNode `msgpack:"nodes"`
}

// predictLoadDecision is the model's skeleton, the same at every party.
type predictLoadDecision struct {
	Labels []string    `msgpack:"labels"`
	Nodes  []ModelNode `msgpack:"nodes"`
}

// classifyOutput is the target table's party's count of join rows per
// predicted label.
type classifyOutput struct {
	Target bool     `msgpack:"target"`
	Counts []uint64 `msgpack:"counts"`
}

// classifyDecision is the join rows per predicted label.
type classifyDecision struct {
	Counts []uint64 `msgpack:"counts"`
}

// Coordinate runs load and classify.
func (PredictKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	spec := c.Spec()
	g, p, err := parsePredict(spec)
	if err != nil {
		return nil, err
	}
	parties := spec.PartyNames()
	call := job.Call[struct{}]{Parties: parties, TimeoutMS: p.TimeoutMS}
	ld, err := predictLoadRound.Run(ctx, c, call, func(o *job.Outcome[predictLoadOutput]) (predictLoadDecision, error) {
		return decidePredictLoad(o, g)
	})
	if err != nil {
		return nil, err
	}
	labels := ld.Decision.Labels
	cd, err := classifyRound.Run(ctx, c, call, func(o *job.Outcome[classifyOutput]) (classifyDecision, error) {
		return decideClassify(o, len(labels))
	})
	if err != nil {
		return nil, err
	}
	pred := map[string]uint64{}
	var rows uint64
	for i, l := range labels {
		pred[l] = cd.Decision.Counts[i]
		rows += cd.Decision.Counts[i]
	}
	return job.Result{"model": p.Model, "labels": labels, "predicted": pred, "rows": rows,
		"predictions": PredictionsSecret(c.JobID()), "predictions_party": g.Tables[0].Party}, nil
}

// decidePredictLoad checks that every party holding a table reported the
// same skeleton, and that it is a tree over the spec's tables.
func decidePredictLoad(o *job.Outcome[predictLoadOutput], g *Graph) (predictLoadDecision, error) {
	if err := o.Err(); err != nil {
		return predictLoadDecision{}, err
	}
	var d predictLoadDecision
	first := ""
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		out := o.Results[name]
		if out.Nodes == nil {
			continue // a party holding no table of the join
		}
		if first == "" {
			first, d = name, predictLoadDecision(out)
			continue
		}
		if !slices.Equal(d.Labels, out.Labels) || !slices.Equal(d.Nodes, out.Nodes) {
			return predictLoadDecision{}, fmt.Errorf("parties %s and %s hold parts of different models", first, name)
		}
	}
	if first == "" {
		return predictLoadDecision{}, errors.New("no party holds a part of the model")
	}
	if err := checkSkeleton(g, d.Nodes, len(d.Labels)); err != nil {
		return predictLoadDecision{}, err
	}
	return d, nil
}

// decideClassify takes the target table's party's counts.
func decideClassify(o *job.Outcome[classifyOutput], labels int) (classifyDecision, error) {
	if err := o.Err(); err != nil {
		return classifyDecision{}, err
	}
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		if out := o.Results[name]; out.Target {
			if len(out.Counts) != labels {
				return classifyDecision{}, fmt.Errorf("party %s: %d counts for %d labels", name, len(out.Counts), labels)
			}
			return classifyDecision{Counts: out.Counts}, nil
		}
	}
	return classifyDecision{}, errors.New("the target table's party reported no counts")
}

// checkSkeleton checks that nodes are a tree listed parents first, rooted
// at the first, splitting only tables of g.
func checkSkeleton(g *Graph, nodes []ModelNode, labels int) error {
	if len(nodes) == 0 {
		return fmt.Errorf("%w: the model has no nodes", tree.ErrFormat)
	}
	reached := map[int32]bool{nodes[0].ID: true}
	for _, n := range nodes {
		if !reached[n.ID] {
			return fmt.Errorf("%w: model node %d is not reached from the root before it is listed", tree.ErrFormat, n.ID)
		}
		delete(reached, n.ID)
		if n.Table == "" {
			if n.Label < 0 || n.Label >= labels {
				return fmt.Errorf("%w: model leaf %d has label %d of %d", tree.ErrFormat, n.ID, n.Label, labels)
			}
			continue
		}
		if g.Index(n.Table) < 0 {
			return fmt.Errorf("%w: the model splits table %q, which the spec's join does not have", ErrData, n.Table)
		}
		if n.Left == n.Right || reached[n.Left] || reached[n.Right] {
			return fmt.Errorf("%w: model node %d has bad children", tree.ErrFormat, n.ID)
		}
		reached[n.Left], reached[n.Right] = true, true
	}
	if len(reached) > 0 {
		return fmt.Errorf("%w: %d model nodes are named but not listed", tree.ErrFormat, len(reached))
	}
	return nil
}

// Assemble copies the target party's per-row predictions to
// DIR/predictions.csv in `cohort sim`.
func (PredictKind) Assemble(_ context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	return job.AssemblePredictions("sjc-predict", result, parties, dir)
}
