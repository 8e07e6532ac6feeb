package bicluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/secureagg"
)

// Kind is the distributed Phoenix job, `kind: bicluster` (see the package
// doc's "Distributed job" section for the protocol and leakage profile).
type Kind struct{}

// UsesThresholdKey: every round is a secure aggregation under the
// consortium's threshold key (job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

// Phases of the job, in order.
const (
	phaseSchema  = "schema"
	phaseIterate = "iterate"
	phaseLocals  = "locals"
	phaseTest    = "test"
	phaseMerge   = "merge"
	phaseRows    = "rows"
)

// maxBeta bounds params.beta: β² in the pair test's fixed point stays
// within a few bits (a representative RMS difference of 100 times the
// mean merges anything anyway).
const maxBeta = 100

// maxJobTimeout bounds params.timeout_ms: a day.
const maxJobTimeout = 24 * time.Hour

// JobParams are the job's spec params; zero fields take DefaultParams.
type JobParams struct {
	Divergence string  `yaml:"divergence"`
	Delta      float64 `yaml:"delta"`
	MinRows    int     `yaml:"min_rows"`
	MinCols    int     `yaml:"min_cols"`
	MaxIter    int     `yaml:"max_iter"`
	Mode       string  `yaml:"mode"`
	Beta       float64 `yaml:"beta"`
	FracBits   int     `yaml:"frac_bits"`
	ValueBits  int     `yaml:"value_bits"`
	TimeoutMS  int64   `yaml:"timeout_ms"`
}

// jobConfig is the validated params.
type jobConfig struct {
	p                   Params
	fracBits, valueBits int
	timeoutMS           int64
}

// Fixed point (research §4.2 row 8): every aggregated value is encoded as
// round(x·2^16) and must stay below 2^62 in magnitude, so a party's
// column sums (Den_j = Σ max(x,0) over its rows, Num_j ≤ Den_j, and the
// merge's per-group column sums) may reach 2^46 ≈ 7·10^13 before the
// party's input is refused (secureagg.ErrRange, naming it). 16 fractional
// bits give the same biclusters as float sums (TestPhoenixFixedPoint); the
// packing reserves log2(parties) more bits per slot for the sum.
const (
	defaultFracBits  = 16
	defaultValueBits = 62
)

func parseJobParams(spec *job.Spec) (*jobConfig, error) {
	d := DefaultParams()
	jp := JobParams{Divergence: string(d.Divergence), Delta: d.Delta, MinRows: d.MinRows, MinCols: d.MinCols,
		MaxIter: d.MaxIter, Mode: string(d.Mode), Beta: d.Beta, FracBits: defaultFracBits,
		ValueBits: defaultValueBits}
	if err := spec.DecodeParams(&jp); err != nil {
		return nil, err
	}
	p := d
	var err error
	if p.Divergence, err = ParseDivergence(jp.Divergence); err != nil {
		return nil, spec.Errorf("params.divergence", "%v", err)
	}
	mode := strings.ReplaceAll(jp.Mode, "_", "-")
	if p.Mode, err = ParseMode(mode); err != nil {
		return nil, spec.Errorf("params.mode", "must be exact or mean_of_means, not %q", jp.Mode)
	}
	switch {
	case !(jp.Delta > 0) || math.IsInf(jp.Delta, 0):
		return nil, spec.Errorf("params.delta", "must be a positive number, not %v", jp.Delta)
	case jp.MinRows < 1 || jp.MinRows > 1<<20:
		return nil, spec.Errorf("params.min_rows", "must be in [1, %d], not %d", 1<<20, jp.MinRows)
	case jp.MinCols < 1 || jp.MinCols > 1<<20:
		return nil, spec.Errorf("params.min_cols", "must be in [1, %d], not %d", 1<<20, jp.MinCols)
	case jp.MaxIter < 1 || jp.MaxIter > 100:
		return nil, spec.Errorf("params.max_iter", "must be in [1, 100], not %d", jp.MaxIter)
	case !(jp.Beta >= 0) || jp.Beta > maxBeta:
		return nil, spec.Errorf("params.beta", "must be in [0, %d], not %v", maxBeta, jp.Beta)
	case jp.FracBits < 0 || jp.FracBits > 60:
		return nil, spec.Errorf("params.frac_bits", "must be in [0, 60], not %d", jp.FracBits)
	case jp.ValueBits <= jp.FracBits || jp.ValueBits > 1000:
		return nil, spec.Errorf("params.value_bits", "must be in [frac_bits+1, 1000], not %d", jp.ValueBits)
	case jp.TimeoutMS < 0 || jp.TimeoutMS > maxJobTimeout.Milliseconds():
		return nil, spec.Errorf("params.timeout_ms", "must be in [1, %d] (a day), not %d", maxJobTimeout.Milliseconds(), jp.TimeoutMS)
	}
	p.Delta, p.MinRows, p.MinCols, p.MaxIter, p.Beta = jp.Delta, jp.MinRows, jp.MinCols, jp.MaxIter, jp.Beta
	if err := p.Check(); err != nil {
		return nil, spec.Errorf("params", "%v", err)
	}
	return &jobConfig{p: p, fracBits: jp.FracBits, valueBits: jp.ValueBits, timeoutMS: jp.TimeoutMS}, nil
}

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseJobParams(spec)
	return err
}

// OutputDisclosure: a step's output to the coordinator is the
// aggregation's public outcome, or public metadata (column names, local
// biclusters' column sets and sizes, the pair test's bits, the party's rows of the
// global biclusters), all of which the coordinator commits as public.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }

// Ref names local bicluster Local of party Party (an index into the
// sorted party names).
type Ref struct {
	Party int `msgpack:"party"`
	Local int `msgpack:"local"`
}

// LocalDesc is the public description of one local bicluster: its column
// set and row count. Its rows and representative stay with the party.
type LocalDesc struct {
	Cols  []int `msgpack:"cols"`
	Count int   `msgpack:"count"`
}

type iterArgs struct {
	Order []int `msgpack:"order"`
}

type mergeArgs struct {
	Groups [][]Ref `msgpack:"groups"`
}

type rowsArgs struct {
	Globals []globalDesc `msgpack:"globals"`
}

// globalDesc is a merged bicluster as every member sees it.
type globalDesc struct {
	Members []Ref     `msgpack:"members"`
	Cols    []int     `msgpack:"cols"`
	Rep     []float64 `msgpack:"rep"`
}

// Decisions (public, committed).
type schemaDecision struct {
	Columns []string `msgpack:"columns"`
	Error   string   `msgpack:"error"`
}

type iterDecision struct {
	Num      []float64         `msgpack:"num"`
	Den      []float64         `msgpack:"den"` // the first iteration's only`
	Order    []int             `msgpack:"order"`
	Changed  bool              `msgpack:"changed"`
	Excluded map[string]string `msgpack:"excluded"`
	Error    string            `msgpack:"error"`
}

type localsDecision struct {
	Locals [][]LocalDesc `msgpack:"locals"` // per party, in sorted party order
	Error  string        `msgpack:"error"`
}

type mergeDecision struct {
	Sums     []float64         `msgpack:"sums"` // per group, per slot (groupSlots): Σ of the members' row values
	Excluded map[string]string `msgpack:"excluded"`
	Error    string            `msgpack:"error"`
}

type rowsDecision struct {
	Rows  [][]string `msgpack:"rows"` // per global: "party:id", sorted
	Error string     `msgpack:"error"`
}

// Outputs (to the coordinator alone).
type schemaOutput struct {
	Columns  []string `msgpack:"columns"`
	Unusable string   `msgpack:"unusable"`
}

type aggOutput struct {
	Report   []byte `msgpack:"report"`
	Unusable string `msgpack:"unusable"`
}

type localsOutput struct {
	Locals   []LocalDesc `msgpack:"locals"`
	Unusable string      `msgpack:"unusable"`
}

type rowsOutput struct {
	Rows     [][]string `msgpack:"rows"` // per global: this party's row ids
	Unusable string     `msgpack:"unusable"`
}

func encode(v any) ([]byte, error) {
	b, err := protocol.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("bicluster: encode: %w", err)
	}
	return b, nil
}

func decode(b []byte, v any) error {
	if err := protocol.Unmarshal(b, v); err != nil {
		return fmt.Errorf("bicluster: decode: %w", err)
	}
	return nil
}

// Coordinate drives the job: the schema check, the crossing-minimisation
// iterations, the local biclusters' public descriptions, the merge rounds
// and the rows. It depends only on the spec, the seed and committed
// decisions.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	cfg, err := parseJobParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	step := func(phase string, round int, args any) (job.Step, error) {
		b, err := encode(args)
		return job.Step{Phase: phase, Round: round, Parties: parties, Args: b, TimeoutMS: cfg.timeoutMS}, err
	}
	excluded := map[string]string{}

	// Schema: every party's numeric columns, the same everywhere.
	st, err := step(phaseSchema, 0, struct{}{})
	if err != nil {
		return nil, err
	}
	sd, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (schemaDecision, error) {
		return decideSchema(outs, parties), nil
	})
	if err != nil {
		return nil, err
	}
	if sd.Error != "" {
		return nil, errors.New(sd.Error)
	}
	cols := len(sd.Columns)

	// Crossing minimisation.
	order := InitialColumns(c.Seed(), cols)
	iters := 0
	var den []float64 // ΣDen, aggregated in the first iteration only
	for iter := 1; ; iter++ {
		st, err := step(phaseIterate, iter-1, iterArgs{Order: order})
		if err != nil {
			return nil, err
		}
		prev := order
		d, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (iterDecision, error) {
			return decideIterate(outs, parties, prev, cols, den), nil
		})
		if err != nil {
			return nil, err
		}
		if d.Error != "" {
			return nil, fmt.Errorf("iteration %d: %s", iter, d.Error)
		}
		addExcluded(excluded, d.Excluded)
		if den == nil {
			den = d.Den
		}
		order, iters = d.Order, iter
		c.Progress(phaseIterate, iter, cfg.p.MaxIter)
		if Done(d.Changed, iter, cfg.p.MaxIter) {
			break
		}
	}

	// Local biclusters: public column sets and sizes.
	st, err = step(phaseLocals, 0, iterArgs{Order: order})
	if err != nil {
		return nil, err
	}
	ld, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (localsDecision, error) {
		return decideLocals(outs, parties, cols), nil
	})
	if err != nil {
		return nil, err
	}
	if ld.Error != "" {
		return nil, errors.New(ld.Error)
	}

	// Merge: the pairwise test on encrypted representatives in at most
	// two rounds (testRound), its bits joined, then one aggregation of the
	// kept groups' sums.
	pairs := candidatePairs(ld.Locals)
	var tested []pairDesc
	similar := []bool{}
	for round := 0; ; round++ {
		next := testRound(ld.Locals, pairs, tested, similar, round)
		if len(next) == 0 {
			break
		}
		st, err := step(phaseTest, round, testArgs{Pairs: next})
		if err != nil {
			return nil, err
		}
		td, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (testDecision, error) {
			return decideTest(outs, parties, len(next)), nil
		})
		if err != nil {
			return nil, err
		}
		if td.Error != "" {
			return nil, fmt.Errorf("merge test round %d: %s", round, td.Error)
		}
		addExcluded(excluded, td.Excluded)
		tested = append(tested, next...)
		similar = append(similar, td.Similar...)
	}
	groups := keepGroups(joinPairs(ld.Locals, tested, similar), ld.Locals, cfg.p.MinRows)
	st, err = step(phaseMerge, 0, mergeArgs{Groups: groups})
	if err != nil {
		return nil, err
	}
	md, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (mergeDecision, error) {
		_, n := groupSlots(groups, ld.Locals)
		return decideMerge(outs, parties, groups, n), nil
	})
	if err != nil {
		return nil, err
	}
	if md.Error != "" {
		return nil, fmt.Errorf("merge: %s", md.Error)
	}
	addExcluded(excluded, md.Excluded)
	globals, err := globalsOf(groups, ld.Locals, md.Sums, cols)
	if err != nil {
		return nil, err
	}

	// Rows: each party's rows of every global bicluster.
	st, err = step(phaseRows, 0, rowsArgs{Globals: globals})
	if err != nil {
		return nil, err
	}
	rd, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (rowsDecision, error) {
		return decideRows(outs, parties, len(globals)), nil
	})
	if err != nil {
		return nil, err
	}
	if rd.Error != "" {
		return nil, errors.New(rd.Error)
	}
	res := buildResult(sd.Columns, order, iters, globals, rd.Rows, cfg.p.MinRows, excluded)
	res["mode"] = string(cfg.p.Mode)
	return res, nil
}

func addExcluded(dst, src map[string]string) {
	for name, why := range src {
		dst[name] = "decryption share excluded: " + why
	}
}

// failures names the parties that failed the step, or that withdrew, in
// party order.
func failures(outs *job.Outputs, parties []string, unusable func(name string) string) string {
	var out []string
	for _, name := range parties {
		if why := unusable(name); why != "" {
			out = append(out, fmt.Sprintf("party %s: %s", name, why))
		} else if why, ok := outs.Failed[name]; ok {
			out = append(out, fmt.Sprintf("party %s: %s", name, why))
		}
	}
	return strings.Join(out, "; ")
}

func decideSchema(outs *job.Outputs, parties []string) schemaDecision {
	got := map[string]*schemaOutput{}
	for _, name := range parties {
		var o schemaOutput
		if b, ok := outs.Results[name]; ok {
			if err := decode(b, &o); err != nil {
				return schemaDecision{Error: fmt.Sprintf("party %s: %v", name, err)}
			}
			got[name] = &o
		}
	}
	if msg := failures(outs, parties, func(n string) string {
		if o := got[n]; o != nil {
			return o.Unusable
		}
		return ""
	}); msg != "" {
		return schemaDecision{Error: msg}
	}
	var first string
	for _, name := range parties {
		o := got[name]
		if o == nil {
			return schemaDecision{Error: fmt.Sprintf("party %s reported no columns", name)}
		}
		if first == "" {
			first = name
			continue
		}
		want := got[first].Columns
		if err := sameColumns(first, want, name, o.Columns); err != nil {
			return schemaDecision{Error: err.Error()}
		}
	}
	return schemaDecision{Columns: got[first].Columns}
}

// sameColumns names the first column where party b's table differs from a's.
func sameColumns(a string, ca []string, b string, cb []string) error {
	for j := range max(len(ca), len(cb)) {
		switch {
		case j >= len(ca):
			return fmt.Errorf("%w: party %s has column %q (position %d), party %s does not", ErrColumns, b, cb[j], j+1, a)
		case j >= len(cb):
			return fmt.Errorf("%w: party %s has column %q (position %d), party %s does not", ErrColumns, a, ca[j], j+1, b)
		case ca[j] != cb[j]:
			return fmt.Errorf("%w: party %s has column %q at position %d where party %s has %q", ErrColumns, b, cb[j], j+1, a, ca[j])
		}
	}
	return nil
}

// rootOutcome reads the secureagg outcome of the step's root, or says why
// the aggregation failed (naming the parties).
func rootOutcome(outs *job.Outputs, parties []string, vlen int) (*secureagg.Result, map[string]*aggOutput, string) {
	got := map[string]*aggOutput{}
	for _, name := range parties {
		if b, ok := outs.Results[name]; ok {
			var o aggOutput
			if err := decode(b, &o); err != nil {
				return nil, nil, fmt.Sprintf("party %s: %v", name, err)
			}
			got[name] = &o
		}
	}
	if msg := failures(outs, parties, func(n string) string {
		if o := got[n]; o != nil {
			return o.Unusable
		}
		return ""
	}); msg != "" {
		return nil, nil, msg
	}
	root := secureagg.Root(job.Step{Parties: parties, Coordinator: outs.Coordinator})
	var missing []string
	var res *secureagg.Result
	for _, name := range parties {
		o := got[name]
		if o == nil {
			continue
		}
		r, err := secureagg.DecodeOutcome(o.Report)
		var miss *secureagg.MissingError
		switch {
		case errors.As(err, &miss):
			missing = append(missing, miss.Parties...)
		case err != nil:
			return nil, nil, fmt.Sprintf("aggregation at party %s: %v", name, err)
		case name == root:
			res = r
		}
	}
	if len(missing) > 0 || len(outs.Silent) > 0 {
		missing = append(missing, outs.Silent...)
		slices.Sort(missing)
		return nil, nil, "parties missing from the aggregation: " + strings.Join(slices.Compact(missing), ", ")
	}
	if res == nil || len(res.Sum) != vlen {
		return nil, nil, fmt.Sprintf("the root %s returned no aggregate of %d values", root, vlen)
	}
	return res, got, ""
}

// decideIterate reads the iteration's sums: Num and Den in the first
// iteration, Num alone in later ones, whose Den is the first's (a party's
// Den does not depend on the row order: Σ max(x, 0) per column, or its
// weight flags in MeanOfMeans), so it is aggregated, and revealed, once.
func decideIterate(outs *job.Outputs, parties []string, order []int, cols int, den []float64) iterDecision {
	vlen := 2 * cols
	if den != nil {
		vlen = cols
	}
	res, _, msg := rootOutcome(outs, parties, vlen)
	if msg != "" {
		return iterDecision{Error: msg}
	}
	var sum Contribution
	if den == nil {
		var err error
		if sum, err = ContributionFromVector(res.Sum, cols); err != nil {
			return iterDecision{Error: err.Error()}
		}
	} else {
		sum = Contribution{Num: res.Sum, Den: den}
	}
	next, changed, err := UpdateColumns(sum, order)
	if err != nil {
		return iterDecision{Error: err.Error()}
	}
	d := iterDecision{Num: sum.Num, Order: next, Changed: changed, Excluded: res.Excluded}
	if den == nil {
		d.Den = sum.Den
	}
	return d
}

// partyOutput decodes party name's output into o, or says why there is
// none: the party failed or sent nothing, sent something malformed, or
// reported its table unusable (unusable reads o once decoded).
func partyOutput(outs *job.Outputs, name string, o any, unusable func() string) string {
	b, ok := outs.Results[name]
	if !ok {
		why := outs.Failed[name]
		if why == "" {
			why = "no output"
		}
		return fmt.Sprintf("party %s: %s", name, why)
	}
	if err := decode(b, o); err != nil {
		return fmt.Sprintf("party %s: %v", name, err)
	}
	if u := unusable(); u != "" {
		return fmt.Sprintf("party %s: %s", name, u)
	}
	return ""
}

func decideLocals(outs *job.Outputs, parties []string, cols int) localsDecision {
	d := localsDecision{Locals: make([][]LocalDesc, len(parties))}
	for i, name := range parties {
		var o localsOutput
		if why := partyOutput(outs, name, &o, func() string { return o.Unusable }); why != "" {
			return localsDecision{Error: why}
		}
		for k, l := range o.Locals {
			if l.Count < 1 || len(l.Cols) == 0 || !slices.IsSorted(l.Cols) || l.Cols[0] < 0 || l.Cols[len(l.Cols)-1] >= cols {
				return localsDecision{Error: fmt.Sprintf("party %s: local bicluster %d is malformed", name, k)}
			}
		}
		d.Locals[i] = o.Locals
	}
	return d
}

// candidatePairs lists the pairs of locals of different parties whose
// column sets overlap (Jaccard ≥ 1/2, the column half of PlainSimilar),
// in the order Merge tests them ((party, local) order of the first, then
// of the second), each with the union of the two column sets: public,
// from the committed descriptions.
func candidatePairs(locals [][]LocalDesc) []pairDesc {
	refs := refsOf(locals)
	var out []pairDesc
	for a := range refs {
		for b := a + 1; b < len(refs); b++ {
			if refs[a].Party == refs[b].Party {
				continue
			}
			ca, cb := locals[refs[a].Party][refs[a].Local].Cols, locals[refs[b].Party][refs[b].Local].Cols
			in := Common(ca, cb)
			if union := len(ca) + len(cb) - in; union > 0 && 2*in >= union {
				cols := slices.Concat(ca, cb)
				slices.Sort(cols)
				out = append(out, pairDesc{A: refs[a], B: refs[b], Cols: slices.Compact(cols)})
			}
		}
	}
	return out
}

// testRound chooses the candidate pairs a merge test round decides, from
// the committed bits of the earlier rounds, so that the groups are those
// of testing every candidate pair (Merge's, the connected components of
// the similar pairs) while most pairs are never tested:
//
//   - round 0 tests, in every component of the candidate pairs, the pairs
//     of its first local (the centre) with the others: K−1 pairs, not
//     K(K−1)/2, for K locals of one bicluster;
//   - round 1 tests every untested candidate pair whose locals round 0 did
//     not join; an untested pair inside a group cannot change the groups;
//   - after that no untested pair crosses groups, and there is no round 2.
//
// With four parties whose locals all match, round 0 decides 3 pairs per
// bicluster instead of 6 and round 1 is empty; with eight, 7 instead of 28.
// It also reveals fewer bits than testing every pair.
func testRound(locals [][]LocalDesc, pairs, tested []pairDesc, similar []bool, round int) []pairDesc {
	var out []pairDesc
	switch round {
	case 0:
		first := map[int]Ref{} // component root → its first local; looked up only
		comp := components(locals, pairs, nil)
		for _, ls := range refsOf(locals) {
			if _, ok := first[comp[ls]]; !ok {
				first[comp[ls]] = ls
			}
		}
		for _, p := range pairs {
			if p.A == first[comp[p.A]] {
				out = append(out, p)
			}
		}
	case 1:
		done := map[[2]Ref]bool{} // looked up only
		for _, p := range tested {
			done[[2]Ref{p.A, p.B}] = true
		}
		var joined []pairDesc
		for i, p := range tested {
			if i < len(similar) && similar[i] {
				joined = append(joined, p)
			}
		}
		comp := components(locals, joined, nil)
		for _, p := range pairs {
			if !done[[2]Ref{p.A, p.B}] && comp[p.A] != comp[p.B] {
				out = append(out, p)
			}
		}
	}
	return out
}

// refsOf lists every local in (party, local) order.
func refsOf(locals [][]LocalDesc) []Ref {
	var refs []Ref
	for p, ls := range locals {
		for k := range ls {
			refs = append(refs, Ref{p, k})
		}
	}
	return refs
}

// components maps every local to the index of the first local of its
// connected component under the given pairs (those with keep nil or
// keep[i] true).
func components(locals [][]LocalDesc, pairs []pairDesc, keep []bool) map[Ref]int {
	refs := refsOf(locals)
	at := make(map[Ref]int, len(refs)) // looked up only
	for i, r := range refs {
		at[r] = i
	}
	parent := make([]int, len(refs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, p := range pairs {
		if keep != nil && (i >= len(keep) || !keep[i]) {
			continue
		}
		a, aok := at[p.A]
		b, bok := at[p.B]
		if !aok || !bok {
			continue
		}
		ra, rb := find(a), find(b)
		parent[max(ra, rb)] = min(ra, rb)
	}
	out := make(map[Ref]int, len(refs))
	for i, r := range refs {
		out[r] = find(i)
	}
	return out
}

// joinPairs joins the similar pairs transitively, as Merge does, and
// returns every local's group ordered by its first member: deterministic
// from committed decisions and independent of the pairs' order (research
// §4.2 row 20).
func joinPairs(locals [][]LocalDesc, pairs []pairDesc, similar []bool) [][]Ref {
	if similar == nil {
		similar = []bool{} // nil would keep every pair
	}
	comp := components(locals, pairs, similar)
	var out [][]Ref
	pos := map[int]int{} // component → position in out; looked up only
	for _, r := range refsOf(locals) {
		k, ok := pos[comp[r]]
		if !ok {
			k = len(out)
			pos[comp[r]] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], r)
	}
	return out
}

// keepGroups drops the groups with fewer than minRows rows by their
// members' public counts: they cannot become global biclusters, so their
// sums are never aggregated (a lone local's sum would be its
// representative).
func keepGroups(groups [][]Ref, locals [][]LocalDesc, minRows int) [][]Ref {
	var out [][]Ref
	for _, g := range groups {
		n := 0
		for _, r := range g {
			n += locals[r.Party][r.Local].Count
		}
		if n >= minRows {
			out = append(out, g)
		}
	}
	return out
}

// groupCols are the columns held by members with at least half the
// group's rows (as Merge does), from public column sets and counts.
func groupCols(g []Ref, locals [][]LocalDesc) []int {
	total := 0
	count := map[int]int{} // read back through the sorted key list
	var cols []int
	for _, r := range g {
		l := locals[r.Party][r.Local]
		total += l.Count
		for _, j := range l.Cols {
			if _, ok := count[j]; !ok {
				cols = append(cols, j)
			}
			count[j] += l.Count
		}
	}
	slices.Sort(cols)
	var out []int
	for _, j := range cols {
		if 2*count[j] >= total {
			out = append(out, j)
		}
	}
	return out
}

// groupSlots lists, for each group, the columns its aggregated sums
// cover: its public columns (groupCols), the only ones the result
// reports, so every decrypted sum is a published mean times the group's
// public count. It also returns the total number of slots.
func groupSlots(groups [][]Ref, locals [][]LocalDesc) ([][]int, int) {
	out := make([][]int, len(groups))
	n := 0
	for k, g := range groups {
		out[k] = groupCols(g, locals)
		n += len(out[k])
	}
	return out, n
}

// groupRep is the size-weighted representative of a group from its
// aggregated sums over its slots; columns outside the slots are 0 (not
// aggregated, never used).
func groupRep(g []Ref, locals [][]LocalDesc, sums []float64, slots []int, cols int) []float64 {
	total := 0
	for _, r := range g {
		total += locals[r.Party][r.Local].Count
	}
	rep := make([]float64, cols)
	for i, j := range slots {
		rep[j] = sums[i] / float64(max(total, 1))
	}
	return rep
}

func decideMerge(outs *job.Outputs, parties []string, groups [][]Ref, slots int) mergeDecision {
	if slots == 0 {
		return mergeDecision{}
	}
	res, _, msg := rootOutcome(outs, parties, slots)
	if msg != "" {
		return mergeDecision{Error: msg}
	}
	return mergeDecision{Sums: res.Sum, Excluded: res.Excluded}
}

// decideTest reads the pair test's signs from the root's output, or says
// which parties failed it.
func decideTest(outs *job.Outputs, parties []string, n int) testDecision {
	got := map[string]*testOutput{}
	for _, name := range parties {
		var o testOutput
		if why := partyOutput(outs, name, &o, func() string { return o.Unusable }); why != "" {
			return testDecision{Error: why}
		}
		got[name] = &o
	}
	root := secureagg.Root(job.Step{Parties: parties, Coordinator: outs.Coordinator})
	o := got[root]
	if o == nil || len(o.Similar) != n {
		return testDecision{Error: fmt.Sprintf("the root %s returned no signs of %d pair tests", root, n)}
	}
	return testDecision{Similar: o.Similar, Excluded: o.Excluded}
}

func globalsOf(groups [][]Ref, locals [][]LocalDesc, sums []float64, cols int) ([]globalDesc, error) {
	slots, n := groupSlots(groups, locals)
	if len(sums) != n {
		return nil, fmt.Errorf("merge: %d sums for %d slots", len(sums), n)
	}
	out := make([]globalDesc, 0, len(groups))
	off := 0
	for k, g := range groups {
		rep := groupRep(g, locals, sums[off:off+len(slots[k])], slots[k], cols)
		off += len(slots[k])
		out = append(out, globalDesc{Members: g, Cols: groupCols(g, locals), Rep: rep})
	}
	return out, nil
}

func decideRows(outs *job.Outputs, parties []string, n int) rowsDecision {
	d := rowsDecision{Rows: make([][]string, n)}
	for _, name := range parties {
		var o rowsOutput
		if why := partyOutput(outs, name, &o, func() string { return o.Unusable }); why != "" {
			return rowsDecision{Error: why}
		}
		if len(o.Rows) != n {
			return rowsDecision{Error: fmt.Sprintf("party %s: rows of %d biclusters, want %d", name, len(o.Rows), n)}
		}
		for k, ids := range o.Rows {
			for _, id := range ids {
				d.Rows[k] = append(d.Rows[k], name+":"+id)
			}
		}
	}
	return d
}

// GlobalResult is one global bicluster in result.json.
type GlobalResult struct {
	Columns []string  `json:"columns"`
	Rows    []string  `json:"rows"`
	Means   []float64 `json:"means"` // the representative's mean of each of Columns
}

func buildResult(names []string, order []int, iters int, globals []globalDesc, rows [][]string, minRows int, excluded map[string]string) job.Result {
	out := []GlobalResult{}
	for k, g := range globals {
		if len(rows[k]) < minRows || len(g.Cols) == 0 {
			continue
		}
		r := GlobalResult{Rows: rows[k]}
		for _, j := range g.Cols {
			r.Columns = append(r.Columns, names[j])
			r.Means = append(r.Means, g.Rep[j])
		}
		out = append(out, r)
	}
	order2 := make([]string, len(order))
	for i, j := range order {
		order2[i] = names[j]
	}
	res := job.Result{"biclusters": out, "iterations": iters, "column_order": order2}
	if len(excluded) > 0 {
		res["excluded"] = excluded
	}
	return res
}
