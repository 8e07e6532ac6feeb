package integrate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Kind is the n-party k-anonymous integration job, `kind: integrate` (see
// the package doc for the protocol and its leakage profile).
type Kind struct{}

// Phases of the job, in order; score and split alternate, one pair per
// TDS round.
const (
	phaseSchema  = "schema"
	phaseAlign   = "align"
	phaseScore   = "score"   // TDS
	phaseSplit   = "split"   // TDS
	phasePropose = "propose" // Mondrian
	phaseCut     = "cut"     // Mondrian
	phaseCheck   = "check"   // Mondrian with a sensitive column one party holds
	phasePublish = "publish"
)

// psiEdge names the alignment PSI in its domain tag.
const psiEdge = "integrate/id"

// schemaOutput is a party's report of its table's shape: its published
// columns in table order and the digest of the taxonomies it loaded.
type schemaOutput struct {
	Columns   []string `msgpack:"columns"`
	TaxDigest []byte   `msgpack:"tax_digest"`
	// HoldsSensitive: the party's table has the sensitive column (when it
	// is not the shared class).
	HoldsSensitive bool `msgpack:"holds_sensitive"`
}

// schemaDecision is committed after the schema step: the attributes in
// their public order (owner by name, then the owner's table order, so that
// the tie rule of TDS, smaller party then attribute, is the attribute
// order).
type schemaDecision struct {
	Attrs []Attr `msgpack:"attrs"`
	// SensitiveOwner is the party that holds the sensitive column when it
	// is not the shared class ("" otherwise).
	SensitiveOwner string `msgpack:"sensitive_owner"`
}

// Validate checks the params and the taxonomies' paths.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// OutputDisclosure says what each step's output tells the coordinator:
// public metadata (column names, digests, the alignment's size, the table
// everyone publishes), a score (a party's best candidate), or a split (the
// winner's record partition, committed to the log).
func (Kind) OutputDisclosure(step job.Step) protocol.Disclosure {
	switch step.Phase {
	case phaseScore, phasePropose:
		return protocol.DiscloseScore
	case phaseSplit, phaseCut:
		return protocol.DiscloseSplitSummary
	case phaseCheck:
		return protocol.DiscloseClassSummary
	}
	return protocol.DisclosePublicResult
}

// failures turns the failed parties of an attempt into one error.
func failures(step string, outs *job.Outputs, parties []string) error {
	var msgs []string
	for _, p := range parties {
		if why, ok := outs.Failed[p]; ok {
			msgs = append(msgs, fmt.Sprintf("party %s: %s", p, strings.TrimPrefix(why, "party "+p+": ")))
		} else if _, ok := outs.Results[p]; !ok {
			msgs = append(msgs, fmt.Sprintf("party %s: no output", p))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("integrate: %s: %s", step, strings.Join(msgs, "; "))
}

// Coordinate drives the job: the schema, the id alignment, the rounds of
// the algorithm (TDS: score, then the winner's split, until no party has a
// valid and beneficial specialisation; Mondrian: propose, then the owners'
// cuts, until no group can be cut), and the publication. It depends only on
// the spec and the committed decisions.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	co := &coordinator{c: c, prm: prm, parties: c.Spec().PartyNames()}
	sd, err := run(ctx, co, phaseSchema, 0, co.parties, nil, func(outs *job.Outputs) (schemaDecision, error) {
		return decideSchema(outs, co.parties, prm)
	})
	if err != nil {
		return nil, err
	}
	ad, err := run(ctx, co, phaseAlign, 0, co.parties, nil, func(outs *job.Outputs) (alignDecision, error) {
		return decideAlign(outs, co.parties, prm)
	})
	if err != nil {
		return nil, err
	}
	var rounds int
	var pd publishDecision
	if prm.Algorithm == algMondrian {
		if rounds, err = co.mondrianRounds(ctx, sd, ad); err == nil {
			pd, err = run(ctx, co, phasePublish, 0, co.parties, nil, func(outs *job.Outputs) (publishDecision, error) {
				return decideMondrianPublish(outs, co.parties, prm, sd, ad.Records)
			})
		}
	} else {
		if rounds, err = co.tdsRounds(ctx, sd); err == nil {
			pd, err = run(ctx, co, phasePublish, 0, co.parties, nil, func(outs *job.Outputs) (publishDecision, error) {
				return decidePublish(outs, co.parties, prm, sd.Attrs, ad.Records)
			})
		}
	}
	if err != nil {
		return nil, err
	}
	reqs := make([]map[string]any, len(prm.Requirements))
	minGroup := 0
	for i, r := range prm.Requirements {
		reqs[i] = map[string]any{"qid": r.QID, "k": r.K, "min_group": pd.MinGroups[i]}
		if i == 0 || pd.MinGroups[i] < minGroup {
			minGroup = pd.MinGroups[i]
		}
	}
	return job.Result{
		"algorithm":    prm.Algorithm,
		"records":      ad.Records,
		"attributes":   sd.Attrs,
		"rounds":       rounds,
		"ncp":          pd.NCP,
		"min_group":    minGroup,
		"requirements": reqs,
		"published":    pd.Table,
	}, nil
}

// coordinator is one run of Coordinate.
type coordinator struct {
	c       job.Coordinator
	prm     *Params
	parties []string
}

// run runs one step whose public args are args (nil: none) and returns the
// committed decision.
func run[D any](ctx context.Context, co *coordinator, phase string, round int, on []string, args any, decide func(*job.Outputs) (D, error)) (D, error) {
	var d D
	var b []byte
	if args != nil {
		var err error
		if b, err = encode(args); err != nil {
			return d, err
		}
	}
	st := job.Step{Phase: phase, Round: round, Parties: on, Args: b, TimeoutMS: co.prm.TimeoutMS}
	d, _, err := job.Run(ctx, co.c, st, decide)
	return d, err
}

// tdsRounds runs TDS's rounds: every party's best candidate (score), then
// the winner's split, until no party has a candidate.
func (co *coordinator) tdsRounds(ctx context.Context, sd schemaDecision) (int, error) {
	for r := 0; ; r++ {
		co.c.Progress(phaseScore, r, 0)
		w, err := run(ctx, co, phaseScore, r, co.parties, nil, func(outs *job.Outputs) (winner, error) {
			return decideScore(outs, co.parties, sd.Attrs)
		})
		if err != nil || !w.Found {
			return r, err
		}
		if _, err := run(ctx, co, phaseSplit, r, []string{w.Party}, &splitArgs{Attr: w.Attr, Node: w.Node}, func(outs *job.Outputs) (Split, error) {
			return decideSplit(outs, w)
		}); err != nil {
			return r, err
		}
	}
}

func decideSchema(outs *job.Outputs, parties []string, prm *Params) (schemaDecision, error) {
	var d schemaDecision
	if err := failures(phaseSchema, outs, parties); err != nil {
		return d, err
	}
	owner := map[string]string{}
	var digest []byte
	var first string
	for _, p := range parties {
		var o schemaOutput
		if err := decode(outs.Results[p], &o); err != nil {
			return d, fmt.Errorf("integrate: schema from party %s: %w", p, err)
		}
		if digest == nil {
			digest, first = o.TaxDigest, p
		} else if !bytes.Equal(digest, o.TaxDigest) {
			return d, fmt.Errorf("integrate: parties %s and %s loaded different taxonomies (every party must use the same files)", first, p)
		}
		if o.HoldsSensitive {
			if !prm.private() || d.SensitiveOwner != "" {
				return d, fmt.Errorf("integrate: the sensitive column %q is held by more than one party, or is not asked for", prm.Sensitive)
			}
			d.SensitiveOwner = p
		}
		for _, col := range o.Columns {
			if q, ok := owner[col]; ok {
				return d, fmt.Errorf("integrate: column %q is held by parties %s and %s: each published column belongs to one party", col, q, p)
			}
			owner[col] = p
			d.Attrs = append(d.Attrs, Attr{Name: col, Owner: p})
		}
	}
	for i, r := range prm.Requirements {
		for _, q := range r.QID {
			if _, ok := owner[q]; !ok {
				return d, fmt.Errorf("%w: requirements[%d]: unknown QID column %q: no party's table has it", anonymize.ErrRequirement, i, q)
			}
		}
	}
	if prm.private() && d.SensitiveOwner == "" {
		return d, fmt.Errorf("%w: no party's table has the sensitive column %q (params.sensitive)", anonymize.ErrRequirement, prm.Sensitive)
	}
	return d, nil
}

func decideAlign(outs *job.Outputs, parties []string, prm *Params) (alignDecision, error) {
	var d alignDecision
	if err := failures(phaseAlign, outs, parties); err != nil {
		return d, err
	}
	var digest, ids []byte
	var first string
	for _, p := range parties {
		var o alignOutput
		if err := decode(outs.Results[p], &o); err != nil {
			return d, fmt.Errorf("integrate: alignment from party %s: %w", p, err)
		}
		if digest == nil {
			digest, ids, first, d.Records = o.ClassDigest, o.IDDigest, p, o.Records
			continue
		}
		if o.Records != d.Records || !bytes.Equal(ids, o.IDDigest) {
			return d, fmt.Errorf("integrate: parties %s and %s found different common record ids (%d and %d): the alignment was disturbed (a party restarted during it?); run the job again", first, p, d.Records, o.Records)
		}
		if !bytes.Equal(digest, o.ClassDigest) {
			return d, fmt.Errorf("integrate: parties %s and %s hold different values of the class column %q for the common records (every party must hold the same class)", first, p, prm.Class)
		}
	}
	if d.Records == 0 {
		return d, fmt.Errorf("%w: no record id is held by every party (if they should be, the alignment may have been disturbed by a party restarting during it: run the job again)", anonymize.ErrRequirement)
	}
	for i, r := range prm.Requirements {
		if r.K > d.Records {
			return d, fmt.Errorf("%w: requirements[%d] %s: k = %d is larger than the %d records whose id every party holds", anonymize.ErrRequirement, i, r, r.K, d.Records)
		}
	}
	return d, nil
}

func decideScore(outs *job.Outputs, parties []string, attrs []Attr) (winner, error) {
	var w winner
	if err := failures(phaseScore, outs, parties); err != nil {
		return w, err
	}
	var best anonymize.Candidate
	for _, p := range parties {
		var o scoreOutput
		if err := decode(outs.Results[p], &o); err != nil {
			return w, fmt.Errorf("integrate: score from party %s: %w", p, err)
		}
		if err := o.check(len(attrs)); err != nil {
			return w, fmt.Errorf("integrate: score from party %s: %w", p, err)
		}
		if !o.Found {
			continue
		}
		if attrs[o.Attr].Owner != p {
			return w, fmt.Errorf("integrate: party %s proposed a specialisation of column %q, which party %s owns", p, attrs[o.Attr].Name, attrs[o.Attr].Owner)
		}
		c := anonymize.Candidate{Party: p, Attr: o.Attr, Node: o.Node, Score: o.Score}
		if !w.Found {
			best, w.Found = c, true
		} else {
			best = anonymize.BetterCandidate(best, c)
		}
	}
	if w.Found {
		w.Party, w.Attr, w.Node = best.Party, best.Attr, best.Node
	}
	return w, nil
}

func decideSplit(outs *job.Outputs, w winner) (Split, error) {
	var s Split
	if err := failures(phaseSplit, outs, []string{w.Party}); err != nil {
		return s, err
	}
	if err := decode(outs.Results[w.Party], &s); err != nil {
		return s, fmt.Errorf("integrate: split from party %s: %w", w.Party, err)
	}
	if err := s.check(); err != nil {
		return s, fmt.Errorf("integrate: split from party %s: %w", w.Party, err)
	}
	if s.Attr != w.Attr || s.Node != w.Node {
		return s, fmt.Errorf("integrate: party %s split attribute %d node %d, not the winner %d/%d", w.Party, s.Attr, s.Node, w.Attr, w.Node)
	}
	return s, nil
}

func decidePublish(outs *job.Outputs, parties []string, prm *Params, attrs []Attr, records int) (publishDecision, error) {
	var d publishDecision
	if err := failures(phasePublish, outs, parties); err != nil {
		return d, err
	}
	var ref []byte
	var first string
	for _, p := range parties {
		var o publishOutput
		if err := decode(outs.Results[p], &o); err != nil {
			return d, fmt.Errorf("integrate: publication from party %s: %w", p, err)
		}
		if err := o.Table.Check(); err != nil {
			return d, fmt.Errorf("integrate: publication from party %s: %w", p, err)
		}
		b, err := encode(&o.Table)
		if err != nil {
			return d, err
		}
		if ref == nil {
			ref, first, d.Table, d.NCP = b, p, o.Table, o.NCP
		} else if !bytes.Equal(ref, b) || o.NCP != d.NCP {
			return d, fmt.Errorf("integrate: parties %s and %s computed different publications", first, p)
		}
	}
	if n := d.Table.Records(); n != records {
		return d, fmt.Errorf("integrate: the publication holds %d records, the alignment %d", n, records)
	}
	want := make([]string, 0, len(attrs)+1)
	for _, a := range attrs {
		want = append(want, a.Name)
	}
	if !slices.Equal(d.Table.Columns, append(want, prm.Class)) {
		return d, fmt.Errorf("integrate: the publication's columns %v are not the attributes %v and the class", d.Table.Columns, want)
	}
	if math.IsNaN(d.NCP) || d.NCP < 0 || d.NCP > 1 {
		return d, fmt.Errorf("integrate: %w: ncp %v", protocol.ErrMalformed, d.NCP)
	}
	return d, checkPublication(&d, prm)
}
