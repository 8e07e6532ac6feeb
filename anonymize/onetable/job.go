// Package onetable is the `anonymize` job: one organisation anonymises one
// of its tables with a chosen algorithm of package anonymize and publishes
// it to the consortium. Start reading at Kind.Coordinate and decide
// (job.go), then session.Step (session.go); params.go has every parameter
// and its checks. The job's one step is a typed round (anonymizeRound).
//
// Sources: X. Sun, "Privacy Preserving Data Sharing in Data Mining
// Environment", PhD thesis, University of Southern Queensland, 2010
// (models ch. 2–3, metrics §3.5, purpose ch. 4, MDAV ch. 5, local
// recoding); R. Chaytor, "Allowing Privacy Protection Algorithms to Jump
// Out of Local Optimums: An Ordered Greed Framework", PinKDD 2007 (Datafly
// with Sweeney's column order, OGF); LeFevre, DeWitt and Ramakrishnan,
// "Mondrian multidimensional k-anonymity", ICDE 2006.
//
// Spec: one party with one table; `taxonomies: {column: path}` for every
// quasi-identifier (ARX hierarchy CSV or YAML, as for integrate; not needed
// by mdav, datafly, ogf and onedim);
//
//	params: {algorithm: optimal | samarati | mondrian | local | datafly | ogf | mdav | purpose | onedim,
//	         requirements: [{qid: [...], k: N}],                   # k ≥ 2
//	         sensitive: col, l: L, entropy: bool, p: P, recursive_c: c, recursive_l: l,
//	         p_plus: P, alpha: α, categories: [[most sensitive values], ..., [least]],
//	         seed: S,                                              # ogf
//	         onedim: dp | quantile,                                 # onedim
//	         mdav: standard | thesis, approximate: bool,            # mdav
//	         purpose: {first: col, last: col} | priorities: {col: p},
//	         trust: t | degree: d, beta: β, invert: bool}           # purpose
//
// The published table holds the union of the requirements' QID columns,
// generalised (mdav: centroids; datafly, ogf: values or "*"; onedim:
// ranges), then the sensitive column as it is; every other column (the id
// among them) is left out. A sensitive column needs a model that protects
// it (l, p, p_plus, alpha or recursive (c, l)), and a model needs a
// sensitive column.
// `optimal` honours every requirement exactly (OptimalFullDomainModel,
// least NCP); so does `samarati` (Samarati's binary search on the lattice's
// height, Sun ch. 2: the least-NCP vector of the lowest satisfying height;
// it reports the height and the heights probed, and, with optimal, the
// count of generalisation strategies of Sun's Theorem 2.1 and the weighted
// discernibility Σ_G |G|²·Deg(G) with equal priorities);
// `onedim` (one numeric quasi-identifier, no taxonomy) is Lodha and
// Thomas's optimal one-dimensional k-anonymity ("Probabilistic Anonymity",
// PinKDD 2007, §4.1), k the largest k_i, publishing each value's cluster
// range; the others partition on the union of the QIDs with k the
// largest k_i (each QID's classes are unions of theirs, so each has at least
// that many records): `mondrian` (MondrianModel), `local` (Sun's top-down
// local recoding), `datafly` and `ogf` (Chaytor), `mdav` (Sun ch. 5),
// `purpose` (Sun ch. 4: a degree of anonymisation decomposed into
// full-domain levels that reach it, then the least-NCP generalisation above
// them that honours every requirement; a degree out of reach is an error
// naming params.degree or params.trust). The coordinator checks k and
// the model on the publication before it commits it. The result has ncp, discernibility,
// avg_class_size, distortion and classes, and each algorithm's own figures.
//
// # Leakage profile
//
// One step, one party, round 0 (the party refuses any other). The party's
// output, sent to the coordinator and disclosed as generalised (the form
// Uses declares), is the published table itself (distinct rows with
// counts, sorted by value, never in table order), its NCP, and the
// algorithm's counters (samarati's height, probes, strategy count and
// weighted discernibility follow from the publication and the taxonomies;
// the other vectors that satisfy at that height are not sent); the coordinator checks k (and the model) on it and
// only then commits it: the publication is the job's public result, and
// every member of the consortium receives it through the log. Nothing else
// leaves the party: no raw value of a quasi-identifier that the
// publication does not show, no id, no row order. The coordinator learns
// nothing more than the members. TestLeakage checks every message and log
// entry in process; TestLeakageNodes does over real nodes with a
// coordinator that is not the party (every output, decision and failure,
// every node's log, both ledgers, the coordinator's Raft store), and
// TestBadInputNodes a failure's text; TestSim the party's audit ledger.
package onetable

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: anonymize`.
type Kind struct{}

// anonymizeRound is the job's one step: the party publishes its table,
// and the coordinator commits the publication once it has checked it.
var anonymizeRound = job.Round[none, output, output]{Phase: "anonymize"}

// none is the args of the step, which takes none.
type none struct{}

// Validate checks the spec.
func (Kind) Validate(spec *job.Spec) error {
	_, _, err := parseParams(spec)
	return err
}

// OutputDisclosure: the output is the k-anonymous publication (with the
// algorithm's figures), the form Uses declares for the QIDs.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseGeneralised }

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

	// mdav: SSE and SST on standardised attributes, then in raw units,
	// and the key attributes grouped on
	SSE    float64  `msgpack:"sse"`
	SST    float64  `msgpack:"sst"`
	SSERaw float64  `msgpack:"sse_raw"`
	SSTRaw float64  `msgpack:"sst_raw"`
	Keys   []string `msgpack:"keys"`
	// datafly, ogf: the column order, the cells kept (not "*") and OGF's search
	Order []string `msgpack:"order"`
	// purpose: the priorities per QID, the degree asked for and reached,
	// the decomposition's levels and whether k raised them
	Priorities  map[string]float64 `msgpack:"priorities"`
	Decomposed  []int              `msgpack:"decomposed"`
	DegreeAsked float64            `msgpack:"degree_asked"`
	Degree      float64            `msgpack:"degree"`
	Raised      bool               `msgpack:"raised"`
	Kept        float64            `msgpack:"kept"`
	Generations int                `msgpack:"generations"`
	Evaluations int                `msgpack:"evaluations"`
	// samarati: the lowest satisfying height and the heights probed (both
	// follow from the published levels), the strategy count (Sun Thm 2.1,
	// from the taxonomies) and the weighted discernibility (from the
	// publication); the last two also for optimal. The other satisfying
	// vectors of that height stay at the party: they describe its data
	// beyond the publication.
	Height     int     `msgpack:"height"`
	Probes     []int   `msgpack:"probes"`
	Strategies string  `msgpack:"strategies"`
	WDM        float64 `msgpack:"wdm"`
	// onedim: the k-median cost (Σ |x − its cluster's median|) and the
	// rank difference (Lodha and Thomas Def. 8)
	KMedian  float64 `msgpack:"kmedian"`
	RankDiff int     `msgpack:"rank_difference"`

	mondrian *anonymize.MondrianResult // the party's, not sent
}

// Coordinate runs the one step and commits the publication once it has
// checked it: the columns, k on every requirement and the sensitive model.
// A publication that fails a check is never committed (the log reaches
// every member).
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, qid, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	party := c.Spec().Parties[0].Name
	var groups []int
	call := job.Call[none]{Parties: []string{party}, TimeoutMS: prm.TimeoutMS}
	done, err := anonymizeRound.Run(ctx, c, call, func(o *job.Outcome[output]) (output, error) {
		out, err := decide(o, party, prm, qid)
		if err == nil {
			groups, err = out.Table.MinGroups(prm.Requirements)
		}
		return out, err
	})
	if err != nil {
		return nil, err
	}
	if groups == nil { // a replay: the committed publication passed the checks
		if groups, err = done.Decision.Table.MinGroups(prm.Requirements); err != nil {
			return nil, err
		}
	}
	return result(prm, done.Decision, groups), nil
}

// decide checks the party's publication before it is committed: its
// columns (the QIDs, then the sensitive column), k on every requirement,
// and the sensitive column's model.
func decide(o *job.Outcome[output], party string, prm *Params, qid []string) (output, error) {
	if err := o.Err(); err != nil {
		return output{}, err
	}
	out, ok := o.Results[party]
	if !ok {
		return output{}, fmt.Errorf("party %s sent no output", party)
	}
	want := slices.Clone(qid)
	if prm.Sensitive != "" {
		want = append(want, prm.Sensitive)
	}
	if !slices.Equal(out.Table.Columns, want) {
		return output{}, fmt.Errorf("party %s published columns %v, not %v", party, out.Table.Columns, want)
	}
	if err := out.Table.Check(); err != nil {
		return output{}, err
	}
	groups, err := out.Table.MinGroups(prm.Requirements)
	if err != nil {
		return output{}, err
	}
	for i, r := range prm.Requirements {
		if groups[i] < r.K {
			return output{}, fmt.Errorf("%w: the publication's smallest class on %s has %d records", anonymize.ErrViolation, r, groups[i])
		}
	}
	if prm.Sensitive != "" {
		if err := out.Table.CheckModel(prm.Requirements, prm.Sensitive, prm.Model()); err != nil {
			return output{}, err
		}
	}
	return out, nil
}

// result is the job's result: the publication, k per requirement and the
// algorithm's figures.
func result(prm *Params, o output, groups []int) job.Result {
	reqs := make([]map[string]any, len(prm.Requirements))
	minGroup := 0
	for i, r := range prm.Requirements {
		reqs[i] = map[string]any{"qid": r.QID, "k": r.K, "min_group": groups[i]}
		if i == 0 || groups[i] < minGroup {
			minGroup = groups[i]
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
		res["strategies"], res["weighted_discernibility"] = o.Strategies, o.WDM
	case "samarati":
		res["levels"], res["checked"], res["lattice"], res["height"] = o.Levels, o.Checked, o.Lattice, o.Height
		res["probes"], res["strategies"], res["weighted_discernibility"] = o.Probes, o.Strategies, o.WDM
	case "purpose":
		res["levels"], res["priorities"], res["degree_asked"], res["degree"], res["raised"] = o.Levels, o.Priorities, o.DegreeAsked, o.Degree, o.Raised
		res["decomposed"] = o.Decomposed
	case "onedim":
		res["method"], res["kmedian_cost"], res["rank_difference"] = prm.OneDim, o.KMedian, o.RankDiff
		delete(res, "distortion")
	case "datafly", "ogf":
		res["order"], res["kept"] = o.Order, o.Kept
		res["generations"], res["evaluations"] = o.Generations, o.Evaluations
	case "mdav":
		res["sse"], res["sst"], res["key_attributes"] = o.SSE, o.SST, o.Keys
		res["sse_raw"], res["sst_raw"] = o.SSERaw, o.SSTRaw
		if o.SST > 0 {
			res["information_loss"] = o.SSE / o.SST
		}
		if o.SSTRaw > 0 {
			res["information_loss_raw"] = o.SSERaw / o.SSTRaw
		}
		delete(res, "ncp")
		delete(res, "distortion")
	}
	return res
}

// Assemble writes DIR/anonymized.csv (a header, then every record of the
// committed publication, generalised, rows sorted by value) and returns
// result.json with the file's name under "anonymized" and the publication
// summarised under "published" (its columns and distinct rows): the table
// itself is in the file, so `cohort sim` need not know its layout. Over
// running nodes the committed result holds the whole publication.
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
	res["published"], _ = json.Marshal(map[string]any{"columns": pub.Columns, "distinct_rows": len(pub.Rows)})
	return json.MarshalIndent(res, "", "  ")
}

// File is the published table `cohort sim` writes.
const File = "anonymized.csv"

var _ job.Assembler = Kind{}
