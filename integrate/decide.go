package integrate

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// The coordinator's folds of TDS's steps (Mondrian's are in mondrian.go):
// each checks the parties' outputs and returns the step's public decision,
// or the error that fails the step (committed as its failure).

// inOrder returns the outputs of a step's parties in the order given, or
// the step's failure: the parties that failed (job.Outcome.Err), or one
// that sent nothing.
func inOrder[O any](o *job.Outcome[O], parties []string) ([]O, error) {
	if err := o.Err(); err != nil {
		return nil, err
	}
	out := make([]O, len(parties))
	for i, p := range parties {
		r, ok := o.Results[p]
		if !ok {
			return nil, fmt.Errorf("party %s sent no output", p)
		}
		out[i] = r
	}
	return out, nil
}

func decideSchema(o *job.Outcome[schemaOutput], parties []string, prm *Params) (schemaDecision, error) {
	var d schemaDecision
	outs, err := inOrder(o, parties)
	if err != nil {
		return d, err
	}
	owner := map[string]string{}
	for i, p := range parties {
		o := outs[i]
		if !bytes.Equal(outs[0].TaxDigest, o.TaxDigest) {
			return d, fmt.Errorf("parties %s and %s loaded different taxonomies (every party must use the same files)", parties[0], p)
		}
		if o.HoldsSensitive {
			if !prm.private() || d.SensitiveOwner != "" {
				return d, fmt.Errorf("the sensitive column %q is held by more than one party, or is not asked for", prm.Sensitive)
			}
			d.SensitiveOwner = p
		}
		for _, col := range o.Columns {
			if q, ok := owner[col]; ok {
				return d, fmt.Errorf("column %q is held by parties %s and %s: each published column belongs to one party", col, q, p)
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

func decideAlign(o *job.Outcome[alignOutput], parties []string, prm *Params) (alignDecision, error) {
	var d alignDecision
	outs, err := inOrder(o, parties)
	if err != nil {
		return d, err
	}
	d.Records = outs[0].Records
	for i, p := range parties {
		o := outs[i]
		if o.Records != d.Records || !bytes.Equal(outs[0].IDDigest, o.IDDigest) {
			return d, fmt.Errorf("parties %s and %s found different common record ids (%d and %d): the alignment was disturbed (a party restarted during it?); run the job again", parties[0], p, d.Records, o.Records)
		}
		if !bytes.Equal(outs[0].ClassDigest, o.ClassDigest) {
			return d, fmt.Errorf("parties %s and %s hold different values of the class column %q for the common records (every party must hold the same class)", parties[0], p, prm.Class)
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

func decideScore(o *job.Outcome[scoreOutput], parties []string, attrs []Attr) (winner, error) {
	var w winner
	outs, err := inOrder(o, parties)
	if err != nil {
		return w, err
	}
	var best anonymize.Candidate
	for i, p := range parties {
		o := outs[i]
		if err := o.check(len(attrs)); err != nil {
			return w, fmt.Errorf("score from party %s: %w", p, err)
		}
		if !o.Found {
			continue
		}
		if attrs[o.Attr].Owner != p {
			return w, fmt.Errorf("party %s proposed a specialisation of column %q, which party %s owns", p, attrs[o.Attr].Name, attrs[o.Attr].Owner)
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

func decideSplit(o *job.Outcome[Split], w winner) (Split, error) {
	outs, err := inOrder(o, []string{w.Party})
	if err != nil {
		return Split{}, err
	}
	s := outs[0]
	if err := s.check(); err != nil {
		return s, fmt.Errorf("split from party %s: %w", w.Party, err)
	}
	if s.Attr != w.Attr || s.Node != w.Node {
		return s, fmt.Errorf("party %s split attribute %d node %d, not the winner %d/%d", w.Party, s.Attr, s.Node, w.Attr, w.Node)
	}
	return s, nil
}

func decidePublish(o *job.Outcome[publishOutput], parties []string, prm *Params, attrs []Attr, records int) (publishDecision, error) {
	var d publishDecision
	outs, err := inOrder(o, parties)
	if err != nil {
		return d, err
	}
	var ref []byte
	for i, p := range parties {
		o := outs[i]
		if err := o.Table.Check(); err != nil {
			return d, fmt.Errorf("publication from party %s: %w", p, err)
		}
		b, err := wire.Marshal(&publishOutput{Table: o.Table, Reddy: o.Reddy})
		if err != nil {
			return d, err
		}
		if ref == nil {
			ref, d.Table, d.NCP, d.Reddy = b, o.Table, o.NCP, o.Reddy
		} else if !bytes.Equal(ref, b) || o.NCP != d.NCP {
			return d, fmt.Errorf("parties %s and %s computed different publications", parties[0], p)
		}
	}
	if n := d.Table.Records(); n != records {
		return d, fmt.Errorf("the publication holds %d records, the alignment %d", n, records)
	}
	want := make([]string, 0, len(attrs)+1)
	for _, a := range attrs {
		want = append(want, a.Name)
	}
	if !slices.Equal(d.Table.Columns, append(want, prm.Class)) {
		return d, fmt.Errorf("the publication's columns %v are not the attributes %v and the class", d.Table.Columns, want)
	}
	if math.IsNaN(d.NCP) || d.NCP < 0 || d.NCP > 1 {
		return d, fmt.Errorf("%w: ncp %v", wire.ErrMalformed, d.NCP)
	}
	if len(d.Reddy) != len(prm.Requirements) {
		return d, fmt.Errorf("%w: seed 003's measures for %d of %d requirements", wire.ErrMalformed, len(d.Reddy), len(prm.Requirements))
	}
	return d, checkPublication(&d, prm)
}
