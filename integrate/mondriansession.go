package integrate

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// The party's side of n-party Mondrian: its state rebuilt from the log and
// its steps (propose, cut, check, publish).

// mondrianState is what a party's session rebuilds for Mondrian: its own
// columns as a dataset with public ranges, the public partition after every
// committed round, and, at the sensitive column's owner, that column coded.
type mondrianState struct {
	party   *anonymize.MondrianParty
	st      *anonymize.MondrianState
	class   []string
	private *anonymize.Coded // the sensitive column, at its owner (one party holds it)
	values  []string         // its values, aligned
	applied int              // rounds applied
}

func newMondrianState(self string, a *aligned, records int, attrs []Attr, prm *Params, tax map[string]*anonymize.Taxonomy) (*mondrianState, error) {
	if len(a.class) != records {
		return nil, fmt.Errorf("integrate: party %s holds %d aligned records, the job %d", self, len(a.class), records)
	}
	p := &anonymize.MondrianParty{Name: self}
	t := &table.Table{Name: "aligned"}
	var names []string
	for i, at := range attrs {
		if at.Owner == self {
			names = append(names, at.Name)
			p.Global = append(p.Global, i)
			t.Columns = append(t.Columns, &table.Column{Name: at.Name, Kind: table.Categorical, Str: a.cols[at.Name]})
		}
	}
	var err error
	if p.Own, err = anonymize.Encode(t, names, tax); err != nil {
		return nil, err
	}
	p.Own.UsePublicRanges()
	for _, r := range prm.Requirements {
		p.K = max(p.K, r.K)
	}
	ms := &mondrianState{party: p, st: anonymize.NewMondrianState(records), class: a.class}
	model := prm.model()
	switch {
	case !model.IsZero() && !prm.private(): // the shared class: every party checks its own cuts
		if p.Sens, err = model.Code(a.class); err != nil {
			return nil, err
		}
	case !model.IsZero() && a.sensitive != nil: // this party holds the sensitive column
		if ms.private, err = model.Code(a.sensitive); err != nil {
			return nil, err
		}
		ms.values = a.sensitive
	}
	return ms, nil
}

// mondrianCatchUp brings the Mondrian state up to the log: a round is
// applied once its cuts are committed (and, when a party holds the
// sensitive column, its answers too).
func (s *session) mondrianCatchUp(ctx context.Context) (*mondrianState, *logged, error) {
	l, err := s.readLog(phaseCut)
	if err != nil {
		return nil, nil, err
	}
	checks, err := s.readLog(phaseCheck)
	if err != nil {
		return nil, nil, err
	}
	if err := s.alignedRows(ctx); err != nil {
		return nil, nil, err
	}
	if s.ms == nil {
		if s.ms, err = newMondrianState(s.p.Self(), s.al, l.ad.Records, l.sd.Attrs, s.prm, s.tax); err != nil {
			return nil, nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
	}
	rounds := len(l.decisions)
	if s.prm.private() {
		rounds = len(checks.decisions)
	}
	if rounds < s.ms.applied || rounds > len(l.decisions) {
		return nil, nil, fmt.Errorf("integrate: party %s applied %d cut rounds, the log holds %d", s.p.Self(), s.ms.applied, rounds)
	}
	for i := s.ms.applied; i < rounds; i++ {
		var d cutDecision
		if err := decode(l.decisions[i], &d); err != nil {
			return nil, nil, err
		}
		var chk *checkDecision
		if s.prm.private() {
			chk = &checkDecision{}
			if err := decode(checks.decisions[i], chk); err != nil {
				return nil, nil, err
			}
		}
		if s.ms.st, err = applyCuts(s.ms.st, &d, chk); err != nil {
			return nil, nil, fmt.Errorf("party %s: committed cuts %d: %w", s.p.Self(), i, err)
		}
		s.ms.applied++
	}
	return s.ms, l, nil
}

// mondrianStep runs a party's Mondrian steps.
func (s *session) mondrianStep(ctx context.Context, step job.Step) ([]byte, error) {
	ms, l, err := s.mondrianCatchUp(ctx)
	if err != nil {
		return nil, err
	}
	switch step.Phase {
	case phasePropose:
		var o proposeOutput
		for _, pr := range ms.party.Propose(ms.st) {
			o.Proposals = append(o.Proposals, proposal(pr))
		}
		return encode(&o)
	case phaseCut:
		return s.cut(ms, step)
	case phaseCheck:
		return s.check(ms, l)
	}
	return s.labels(ms)
}

// cut is an owner's cut step: the cuts of the groups it was chosen for.
func (s *session) cut(ms *mondrianState, step job.Step) ([]byte, error) {
	var ch cutChoices
	if err := decode(step.Args, &ch); err != nil {
		return nil, err
	}
	choices := make([]anonymize.CutChoice, len(ch.Choices))
	for i, c := range ch.Choices {
		choices[i] = anonymize.CutChoice(c)
	}
	cuts, err := ms.party.Cut(ms.st, choices)
	if err != nil {
		return nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	var o cutOutput
	for _, c := range cuts {
		i := slices.IndexFunc(choices, func(ch anonymize.CutChoice) bool { return ch.Group == c.Group })
		o.Cuts = append(o.Cuts, toWireCut(c, choices[i].Attr))
	}
	return encode(&o)
}

// check is the sensitive column owner's step: one bit per cut of the
// round's committed (not yet applied) cut decision.
func (s *session) check(ms *mondrianState, l *logged) ([]byte, error) {
	if ms.private == nil {
		return nil, fmt.Errorf("integrate: party %s was asked to check cuts but holds no sensitive column", s.p.Self())
	}
	if len(l.decisions) != ms.applied+1 {
		return nil, fmt.Errorf("integrate: party %s: %d cut rounds committed, %d applied: nothing to check", s.p.Self(), len(l.decisions), ms.applied)
	}
	var d cutDecision
	if err := decode(l.decisions[ms.applied], &d); err != nil {
		return nil, err
	}
	cuts, _, err := d.cuts()
	if err != nil {
		return nil, err
	}
	o := checkOutput{OK: make([]bool, len(cuts))}
	for i, c := range cuts {
		o.OK[i] = anonymize.DiverseParts(ms.st, c, ms.private)
	}
	return encode(&o)
}

// labels is the publish step: the labels of the party's own attributes per
// group, the class counts (with the sensitive values at its owner) and the
// party's NCP sum.
func (s *session) labels(ms *mondrianState) ([]byte, error) {
	labels, ncp := ms.party.Labels(ms.st)
	o := labelsOutput{Labels: labels, NCPSum: ncp}
	for _, rows := range ms.st.Groups {
		count := map[[2]string]int{}
		for _, r := range rows {
			key := [2]string{ms.class[r], ""}
			if ms.values != nil {
				key[1] = ms.values[r]
			}
			count[key]++
		}
		var cc []classCount
		for _, k := range slices.SortedFunc(maps.Keys(count), func(a, b [2]string) int { return slices.Compare(a[:], b[:]) }) {
			cc = append(cc, classCount{Label: k[0], Sensitive: k[1], Count: count[k]})
		}
		o.Classes = append(o.Classes, cc)
	}
	return encode(&o)
}
