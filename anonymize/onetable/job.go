// Package onetable is the `anonymize` job: one organisation anonymises one
// of its tables with a chosen algorithm of package anonymize and publishes
// it. Start reading at Kind.Coordinate (job.go), then session.Step
// (session.go); params.go has every parameter and its checks.
//
// Spec: one party with one table; `taxonomies: {column: path}` for every
// quasi-identifier (ARX hierarchy CSV or YAML, as for integrate; not needed
// by mdav, datafly and ogf);
//
//	params: {algorithm: optimal | mondrian | local | datafly | ogf | mdav | purpose,
//	         requirements: [{qid: [...], k: N}],                   # k ≥ 2
//	         sensitive: col, l: L, entropy: bool, p: P, recursive_c: c, recursive_l: l,
//	         p_plus: P, alpha: α, categories: [[most sensitive values], ..., [least]],
//	         seed: S,                                              # ogf
//	         mdav: standard | thesis, approximate: bool,            # mdav
//	         purpose: {first: col, last: col} | priorities: {col: p},
//	         trust: t | degree: d, beta: β, invert: bool}           # purpose
//
// The published table holds the union of the requirements' QID columns,
// generalised (mdav: centroids; datafly, ogf: values or "*"), then the
// sensitive column as it is; every other column (the id among them) is left
// out. A sensitive column needs a model that protects it (l, p, p_plus,
// alpha or recursive (c, l)), and a model needs a sensitive column.
// `optimal` honours every requirement exactly (OptimalFullDomainModel,
// least NCP); the others partition on the union of the QIDs with k the
// largest k_i (each QID's classes are unions of theirs, so each has at least
// that many records): `mondrian` (MondrianModel), `local` (Sun's top-down
// local recoding), `datafly` and `ogf` (Chaytor), `mdav` (Sun ch. 5),
// `purpose` (Sun ch. 4: a degree of anonymisation decomposed into
// full-domain levels, raised until k holds). The coordinator checks k and
// the model on the publication. The result has ncp, discernibility,
// avg_class_size, distortion and classes, and each algorithm's own figures.
//
// # Leakage profile
//
// One step, one party. The party's output, sent to the coordinator, is the
// published table itself (distinct rows with counts, sorted by value, never
// in table order), its NCP, and the algorithm's counters; the coordinator
// checks k (and l) on it and commits it: the publication is the job's public
// result, and every member of the consortium receives it through the log.
// Nothing else leaves the party: no raw value of a quasi-identifier that the
// publication does not show, no id, no row order. The coordinator learns
// nothing more than the members. A test checks every message and log entry.
package onetable

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Kind is `kind: anonymize`.
type Kind struct{}

const phaseAnonymize = "anonymize"

// Validate checks the spec.
func (Kind) Validate(spec *job.Spec) error {
	_, _, err := parseParams(spec)
	return err
}

// OutputDisclosure: the output is the publication, a public result.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }

// output is the party's publication and the algorithm's figures.
type output struct {
	Table     anonymize.Published `msgpack:"table"`
	NCP       float64             `msgpack:"ncp"`
	Classes   int                 `msgpack:"classes"`
	Levels    []int               `msgpack:"levels"`  // optimal: the generalisation level per QID
	Checked   int                 `msgpack:"checked"` // optimal: transformations counted
	Lattice   int                 `msgpack:"lattice"`
	Seconds   float64             `msgpack:"seconds"` // the algorithm's time at the party
	Algorithm string              `msgpack:"algorithm"`
	// utility metrics beside NCP (Sun's thesis §3.5)
	DM         float64 `msgpack:"dm"`
	CAvg       float64 `msgpack:"cavg"`
	Distortion float64 `msgpack:"distortion"`

	// mdav: SSE, SST and the key attributes grouped on
	SSE  float64  `msgpack:"sse"`
	SST  float64  `msgpack:"sst"`
	Keys []string `msgpack:"keys"`
	// datafly, ogf: the column order, the cells kept (not "*") and OGF's search
	Order []string `msgpack:"order"`
	// purpose: the priorities per QID, the degree asked for and reached,
	// and whether levels were raised to reach k
	Priorities  map[string]float64 `msgpack:"priorities"`
	DegreeAsked float64            `msgpack:"degree_asked"`
	Degree      float64            `msgpack:"degree"`
	Raised      bool               `msgpack:"raised"`
	Kept        float64            `msgpack:"kept"`
	Generations int                `msgpack:"generations"`
	Evaluations int                `msgpack:"evaluations"`

	mondrian *anonymize.MondrianResult // the party's, not sent
}

// Coordinate runs the one step and checks the publication.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, qid, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	party := c.Spec().Parties[0].Name
	st := job.Step{Phase: phaseAnonymize, Parties: []string{party}, TimeoutMS: prm.TimeoutMS}
	o, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (output, error) {
		var o output
		if why, ok := outs.Failed[party]; ok {
			return o, fmt.Errorf("anonymize: party %s: %s", party, strings.TrimPrefix(why, "party "+party+": "))
		}
		if err := protocol.Unmarshal(outs.Results[party], &o); err != nil {
			return o, fmt.Errorf("anonymize: output of party %s: %w", party, err)
		}
		want := slices.Clone(qid)
		if prm.Sensitive != "" {
			want = append(want, prm.Sensitive)
		}
		if !slices.Equal(o.Table.Columns, want) {
			return o, fmt.Errorf("anonymize: party %s published columns %v, not %v", party, o.Table.Columns, want)
		}
		return o, nil
	})
	if err != nil {
		return nil, err
	}
	groups, err := o.Table.MinGroups(prm.Requirements)
	if err != nil {
		return nil, err
	}
	reqs := make([]map[string]any, len(prm.Requirements))
	minGroup := 0
	for i, r := range prm.Requirements {
		if groups[i] < r.K {
			return nil, fmt.Errorf("%w: the publication's smallest class on %s has %d records", anonymize.ErrViolation, r, groups[i])
		}
		reqs[i] = map[string]any{"qid": r.QID, "k": r.K, "min_group": groups[i]}
		if i == 0 || groups[i] < minGroup {
			minGroup = groups[i]
		}
	}
	if prm.Sensitive != "" {
		if err := o.Table.CheckModel(prm.Requirements, prm.Sensitive, prm.Model()); err != nil {
			return nil, err
		}
	}
	res := job.Result{
		"algorithm": prm.Algorithm, "records": o.Table.Records(), "ncp": o.NCP, "classes": o.Classes,
		"min_group": minGroup, "requirements": reqs, "published": o.Table, "seconds": o.Seconds,
		"discernibility": o.DM, "avg_class_size": o.CAvg, "distortion": o.Distortion,
	}
	if prm.Sensitive != "" {
		res["model"] = prm.Model().String()
	}
	switch prm.Algorithm {
	case "optimal":
		res["levels"], res["checked"], res["lattice"] = o.Levels, o.Checked, o.Lattice
	case "purpose":
		res["levels"], res["priorities"], res["degree_asked"], res["degree"], res["raised"] = o.Levels, o.Priorities, o.DegreeAsked, o.Degree, o.Raised
	case "datafly", "ogf":
		res["order"], res["kept"] = o.Order, o.Kept
		res["generations"], res["evaluations"] = o.Generations, o.Evaluations
	case "mdav":
		res["sse"], res["sst"], res["key_attributes"] = o.SSE, o.SST, o.Keys
		if o.SST > 0 {
			res["information_loss"] = o.SSE / o.SST
		}
		delete(res, "ncp")
		delete(res, "distortion")
	}
	return res, nil
}

// Assemble writes DIR/anonymized.csv from the committed publication.
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("anonymize: result: %w", err)
	}
	var pub anonymize.Published
	if err := json.Unmarshal(res["published"], &pub); err != nil {
		return nil, fmt.Errorf("anonymize: result field published: %w", err)
	}
	if err := pub.WriteCSV(filepath.Join(dir, File)); err != nil {
		return nil, err
	}
	res["anonymized"], _ = json.Marshal(File)
	return json.MarshalIndent(res, "", "  ")
}

// File is the published table `cohort sim` writes.
const File = "anonymized.csv"
