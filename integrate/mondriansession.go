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
	// proposed are the party's proposals of round proposedRound, kept
	// from its propose step for its cut step.
	proposed      []anonymize.Proposal
	proposedRound int
	// made are the cuts this party made in its cut step of round
	// madeRound, by group, which the committed cuts must equal.
	made      map[int]anonymize.Cut
	madeRound int
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
// sensitive column, its answers too), each cut checked to keep k.
func (s *session) mondrianCatchUp(ctx context.Context) (*mondrianState, error) {
	l := s.log
	if l.sd == nil || l.ad == nil {
		return nil, fmt.Errorf("party %s: the log holds no committed schema and alignment", s.p.Self())
	}
	if err := s.alignedRows(ctx); err != nil {
		return nil, err
	}
	if s.ms == nil {
		if err := checkSchema(s.p.Self(), l.sd, s.al, s.prm.private()); err != nil {
			return nil, fmt.Errorf("party %s refuses the schema coordinator %s committed: %w", s.p.Self(), l.by0, err)
		}
		var err error
		if s.ms, err = newMondrianState(s.p.Self(), s.al, l.ad.Records, l.sd.Attrs, s.prm, s.tax); err != nil {
			return nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
	}
	rounds := len(l.cuts)
	if s.prm.private() {
		rounds = len(l.checks)
	}
	for i := s.ms.applied; i < rounds; i++ {
		var chk *checkDecision
		if s.prm.private() {
			chk = &l.checks[i]
		}
		if err := s.ms.apply(&l.cuts[i], chk); err != nil {
			return nil, fmt.Errorf("party %s refuses cut round %d, which coordinator %s committed: %w", s.p.Self(), i, l.by[i], err)
		}
	}
	return s.ms, nil
}

// apply applies one round's committed cuts (with the owner's answers, or
// nil), once it has checked that each is one its owner could have made:
// the owner, that it is its own cut; every party, that every part keeps k
// records and, when the model is on the shared class, satisfies it (part
// sizes and the class are public). A coordinator that commits another
// partition (one that singles records out, whose labels the publication
// would then show) is refused.
func (ms *mondrianState) apply(d *cutDecision, chk *checkDecision) error {
	cuts, attrs, err := d.cuts()
	if err != nil {
		return err
	}
	for i, c := range cuts {
		if err := ms.allowable(c); err != nil {
			return err
		}
		if err := ms.ownCut(c, attrs[i]); err != nil {
			return err
		}
		if ms.private != nil && chk != nil && chk.OK[i] != anonymize.DiverseParts(ms.st, c, ms.private) {
			return fmt.Errorf("%w: the committed answer on the cut of group %d is not the one this party gave", anonymize.ErrViolation, c.Group)
		}
	}
	st, err := applyCuts(ms.st, d, chk)
	if err != nil {
		return err
	}
	ms.st = st
	ms.applied++
	return nil
}

// allowable checks one cut of the current state: every part at least k
// records and, with a model of the shared class, satisfying it.
func (ms *mondrianState) allowable(c anonymize.Cut) error {
	if c.Group < 0 || c.Group >= len(ms.st.Groups) || len(c.Part) != len(ms.st.Groups[c.Group]) || c.Parts < 2 {
		return fmt.Errorf("%w: a cut of group %d, which the log does not hold", anonymize.ErrRequirement, c.Group)
	}
	size := make([]int, c.Parts)
	for _, p := range c.Part {
		if int(p) >= c.Parts {
			return fmt.Errorf("%w: a cut of group %d names part %d of %d", anonymize.ErrRequirement, c.Group, p, c.Parts)
		}
		size[p]++
	}
	for _, n := range size {
		if n < ms.party.K {
			return fmt.Errorf("%w: a cut of group %d leaves a part of %d records (k = %d)", anonymize.ErrViolation, c.Group, n, ms.party.K)
		}
	}
	if ms.party.Sens != nil && !anonymize.DiverseParts(ms.st, c, ms.party.Sens) {
		return fmt.Errorf("%w: a cut of group %d leaves a part that breaks the class's model", anonymize.ErrViolation, c.Group)
	}
	return nil
}

// ownCut checks a committed cut on one of the party's own attributes
// against the cut it makes itself.
func (ms *mondrianState) ownCut(c anonymize.Cut, attr int) error {
	if !slices.Contains(ms.party.Global, attr) {
		return nil
	}
	mine, ok := ms.made[c.Group]
	if !ok || ms.madeRound != ms.applied {
		cuts, err := ms.party.Cut(ms.st, []anonymize.CutChoice{{Group: c.Group, Party: ms.party.Name, Attr: attr}})
		if err != nil || len(cuts) != 1 {
			return fmt.Errorf("%w: the cut of group %d on attribute %d is not one this party can make", anonymize.ErrViolation, c.Group, attr)
		}
		mine = cuts[0]
	}
	if mine.Parts != c.Parts || !slices.Equal(mine.Part, c.Part) {
		return fmt.Errorf("%w: the cut of group %d on attribute %d is not the one this party made", anonymize.ErrViolation, c.Group, attr)
	}
	return nil
}

// mondrianStep runs a party's Mondrian steps.
func (s *session) mondrianStep(ctx context.Context, step job.Step) ([]byte, error) {
	ms, err := s.mondrianCatchUp(ctx)
	if err != nil {
		return nil, err
	}
	switch step.Phase {
	case phasePropose:
		return proposeRound.Serve(step, func(none) (proposeOutput, error) {
			var o proposeOutput
			for _, pr := range ms.proposals(step.Round) {
				o.Proposals = append(o.Proposals, proposal(pr))
			}
			return o, nil
		})
	case phaseCut:
		return cutRound.Serve(step, func(ch cutChoices) (cutOutput, error) { return s.cut(ms, step, ch) })
	case phaseCheck:
		return checkRound.Serve(step, func(none) (checkOutput, error) { return s.check(ms) })
	}
	return labelsRound.Serve(step, func(none) (labelsOutput, error) {
		if err := ms.publishable(); err != nil {
			return labelsOutput{}, fmt.Errorf("party %s refuses publish round %d: coordinator %s committed cuts whose groups break a requirement: %w",
				s.p.Self(), step.Round, step.Coordinator, err)
		}
		return s.labels(ms), nil
	})
}

// publishable checks every group before any label leaves: at least k
// records, and the models this party can check (the shared class's; at
// its owner, the sensitive column's).
func (ms *mondrianState) publishable() error {
	for g, rows := range ms.st.Groups {
		if len(rows) < ms.party.K {
			return fmt.Errorf("%w: group %d holds %d records (k = %d)", anonymize.ErrViolation, g, len(rows), ms.party.K)
		}
		if !ms.party.Sens.Diverse(rows) || !ms.private.Diverse(rows) {
			return fmt.Errorf("%w: group %d breaks the sensitive model", anonymize.ErrViolation, g)
		}
	}
	return nil
}

// proposals are the party's proposals of round r (anonymize.MondrianParty.
// Propose) on the state the log determines, computed once per round so
// the cut step checks its choices against them without proposing again.
func (ms *mondrianState) proposals(r int) []anonymize.Proposal {
	if ms.proposed == nil || ms.proposedRound != r {
		ms.proposed, ms.proposedRound = ms.party.Propose(ms.st), r
	}
	return ms.proposed
}

// cut is an owner's cut step: the cuts of the groups it was chosen for,
// once it has checked that each is one of its own proposals of the round
// (an open group of the state the log determines, on the attribute it
// proposed). A coordinator that chooses for this party a group or an
// attribute it did not propose, to read its values there, is refused.
func (s *session) cut(ms *mondrianState, step job.Step, ch cutChoices) (cutOutput, error) {
	own := ms.proposals(step.Round)
	var choices []anonymize.CutChoice
	for _, c := range ch.Choices {
		if c.Party != s.p.Self() {
			continue
		}
		if !slices.ContainsFunc(own, func(p anonymize.Proposal) bool { return p.Group == c.Group && p.Attr == c.Attr }) {
			return cutOutput{}, fmt.Errorf("party %s refuses cut round %d: coordinator %s chose it to cut group %d on attribute %d, which it did not propose",
				s.p.Self(), step.Round, step.Coordinator, c.Group, c.Attr)
		}
		choices = append(choices, anonymize.CutChoice(c))
	}
	cuts, err := ms.party.Cut(ms.st, choices)
	if err != nil {
		return cutOutput{}, fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	var o cutOutput
	ms.made, ms.madeRound = map[int]anonymize.Cut{}, ms.applied
	for i, c := range cuts {
		o.Cuts = append(o.Cuts, toWireCut(c, choices[i].Attr))
		ms.made[c.Group] = c
	}
	return o, nil
}

// check is the sensitive column owner's step: one bit per cut of the
// round's committed (not yet applied) cut decision, each cut first checked
// to keep k.
func (s *session) check(ms *mondrianState) (checkOutput, error) {
	l := s.log
	if ms.private == nil {
		return checkOutput{}, fmt.Errorf("party %s was asked to check cuts but holds no sensitive column", s.p.Self())
	}
	if len(l.cuts) != ms.applied+1 {
		return checkOutput{}, fmt.Errorf("party %s: %d cut rounds committed, %d applied: nothing to check", s.p.Self(), len(l.cuts), ms.applied)
	}
	cuts, _, err := l.cuts[ms.applied].cuts()
	if err != nil {
		return checkOutput{}, err
	}
	o := checkOutput{OK: make([]bool, len(cuts))}
	for i, c := range cuts {
		if err := ms.allowable(c); err != nil {
			return checkOutput{}, fmt.Errorf("party %s refuses cut round %d, which coordinator %s committed: %w", s.p.Self(), ms.applied, l.by[ms.applied], err)
		}
		o.OK[i] = anonymize.DiverseParts(ms.st, c, ms.private)
	}
	return o, nil
}

// labels is the publish step: the labels of the party's own attributes per
// group, the class counts (with the sensitive values at its owner) and the
// party's NCP sum.
func (s *session) labels(ms *mondrianState) labelsOutput {
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
	return o
}
