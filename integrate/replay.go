package integrate

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
)

// What the log determines. The coordinator (the Raft leader of the moment)
// is not trusted to extract: every party replays the job's committed
// records, checks that each follows from the ones before it and from the
// spec, and derives the one step that may come next: its phase, round,
// parties and args. A party takes part in that step and in no other, so no
// coordinator can ask a party to split a node that did not win, to split
// when another party won, to cut a group the log does not hold, to run a
// round twice or out of order, or to publish before the rounds end. (As
// package quantile's parties re-derive its thresholds.) What the log cannot
// show, a party checks against its own data at the step: that the winner
// it is asked to split is its own best candidate of the round
// (session.split), that the groups it is asked to cut are among its own
// proposals (session.cut), and that every committed split or cut keeps k
// (tdsState.apply, mondrianState.apply).

// logged is a party's reading of the log: the committed decisions of the
// job's steps, in order, and the step they determine next.
type logged struct {
	sd      *schemaDecision
	ad      *alignDecision
	winners []winner        // TDS: per score round
	splits  []Split         // TDS: per split round
	choices []cutChoices    // Mondrian: per propose round
	cuts    []cutDecision   // Mondrian: per cut round
	checks  []checkDecision // Mondrian with a sensitive column one party holds: per check round
	// by names the coordinator that committed each split (TDS) or cut
	// (Mondrian) round, for the refusal of one that breaks k.
	by      []string
	by0     string // the coordinator that committed the schema
	records int    // records folded
	next    due
}

// due is the step the log determines next.
type due struct {
	phase   string // "" once the publication is committed
	round   int
	parties []string
	split   splitArgs  // phaseSplit: the committed winner's attribute and node
	cut     cutChoices // phaseCut: the committed choices
}

// newLog is the reading of an empty log: the schema step is due.
func newLog(parties []string) *logged {
	return &logged{next: due{phase: phaseSchema, parties: parties}}
}

// fold reads the records of hist not yet read, in order. A record that
// does not follow from the ones before it is an error: the log itself was
// driven by a coordinator that did not keep to the job.
func (l *logged) fold(prm *Params, parties []string, hist []*job.Record) error {
	if len(hist) < l.records {
		return fmt.Errorf("the log holds %d records, %d were read before", len(hist), l.records)
	}
	for _, rec := range hist[l.records:] {
		if err := l.read(prm, parties, rec); err != nil {
			return fmt.Errorf("committed %s round %d: %w", rec.Step.Phase, rec.Step.Round, err)
		}
		l.records++
	}
	return nil
}

// read folds one committed record.
func (l *logged) read(prm *Params, parties []string, rec *job.Record) error {
	st, n := rec.Step, l.next
	if st.Phase != n.phase || st.Round != n.round || !slices.Equal(st.Parties, n.parties) {
		return fmt.Errorf("on %v where the log determines %s", st.Parties, n)
	}
	var err error
	switch st.Phase {
	case phaseSchema:
		var d schemaDecision
		if d, err = schemaRound.Decision(rec); err == nil && prm.private() != (d.SensitiveOwner != "") {
			err = fmt.Errorf("the schema names %q the sensitive column's owner, where the spec asks for %q", d.SensitiveOwner, prm.Sensitive)
		}
		l.sd, l.by0, l.next = &d, rec.Coordinator, due{phase: phaseAlign, parties: parties}
	case phaseAlign:
		var d alignDecision
		d, err = alignRound.Decision(rec)
		l.ad, l.next = &d, l.roundStart(prm, parties, 0)
	case phaseScore:
		err = l.readScore(parties, rec)
	case phaseSplit:
		err = l.readSplit(prm, parties, rec)
	case phasePropose:
		err = l.readPropose(parties, rec)
	case phaseCut:
		err = l.readCut(prm, parties, rec)
	case phaseCheck:
		var d checkDecision
		if d, err = checkRound.Decision(rec); err == nil && len(d.OK) != len(l.cuts[len(l.cuts)-1].Cuts) {
			err = fmt.Errorf("%d answers for %d cuts", len(d.OK), len(l.cuts[len(l.cuts)-1].Cuts))
		}
		l.checks, l.next = append(l.checks, d), l.roundStart(prm, parties, st.Round+1)
	case phasePublish:
		l.next = due{}
	}
	return err
}

// roundStart is the first step of round r: score (TDS) or propose
// (Mondrian), on every party.
func (l *logged) roundStart(prm *Params, parties []string, r int) due {
	if prm.Algorithm == algMondrian {
		return due{phase: phasePropose, round: r, parties: parties}
	}
	return due{phase: phaseScore, round: r, parties: parties}
}

func (l *logged) readScore(parties []string, rec *job.Record) error {
	w, err := scoreRound.Decision(rec)
	if err != nil {
		return err
	}
	if err := w.check(l.sd.Attrs); err != nil {
		return err
	}
	l.winners = append(l.winners, w)
	if !w.Found {
		l.next = due{phase: phasePublish, parties: parties}
		return nil
	}
	l.next = due{phase: phaseSplit, round: rec.Step.Round, parties: []string{w.Party}, split: splitArgs{Attr: w.Attr, Node: w.Node}}
	return nil
}

func (l *logged) readSplit(prm *Params, parties []string, rec *job.Record) error {
	a, err := splitRound.Args(rec.Step)
	if err != nil {
		return err
	}
	if a != l.next.split {
		return fmt.Errorf("asked a split of attribute %d node %d, not the winner's", a.Attr, a.Node)
	}
	s, err := splitRound.Decision(rec)
	if err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return err
	}
	if s.Attr != a.Attr || s.Node != a.Node {
		return fmt.Errorf("a split of attribute %d node %d, not the winner's", s.Attr, s.Node)
	}
	l.splits, l.by, l.next = append(l.splits, s), append(l.by, rec.Coordinator), l.roundStart(prm, parties, rec.Step.Round+1)
	return nil
}

func (l *logged) readPropose(parties []string, rec *job.Record) error {
	ch, err := proposeRound.Decision(rec)
	if err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, c := range ch.Choices {
		if c.Attr < 0 || c.Attr >= len(l.sd.Attrs) || l.sd.Attrs[c.Attr].Owner != c.Party || c.Group < 0 || seen[c.Group] {
			return fmt.Errorf("a choice of party %s, attribute %d, group %d that the schema or the round does not allow", c.Party, c.Attr, c.Group)
		}
		seen[c.Group] = true
	}
	l.choices = append(l.choices, ch)
	if len(ch.Choices) == 0 {
		l.next = due{phase: phasePublish, parties: parties}
		return nil
	}
	l.next = due{phase: phaseCut, round: rec.Step.Round, parties: ch.cutters(), cut: ch}
	return nil
}

func (l *logged) readCut(prm *Params, parties []string, rec *job.Record) error {
	a, err := cutRound.Args(rec.Step)
	if err != nil {
		return err
	}
	if !slices.Equal(a.Choices, l.next.cut.Choices) {
		return fmt.Errorf("asked cuts of %d groups, not the committed choices", len(a.Choices))
	}
	d, err := cutRound.Decision(rec)
	if err != nil {
		return err
	}
	if err := d.matches(a); err != nil {
		return err
	}
	l.cuts, l.by = append(l.cuts, d), append(l.by, rec.Coordinator)
	if owner := l.sd.SensitiveOwner; owner != "" {
		l.next = due{phase: phaseCheck, round: rec.Step.Round, parties: []string{owner}}
		return nil
	}
	l.next = l.roundStart(prm, parties, rec.Step.Round+1)
	return nil
}

func (d due) String() string {
	if d.phase == "" {
		return "no further step (the publication is committed)"
	}
	return fmt.Sprintf("%s round %d on %v", d.phase, d.round, d.parties)
}

// admit checks that step is the one the log determines. The refusal names
// the coordinator that asked for it.
func (l *logged) admit(self string, step job.Step) error {
	n := l.next
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("party %s refuses %s round %d: coordinator %s %s", self, step.Phase, step.Round, step.Coordinator, fmt.Sprintf(format, a...))
	}
	switch {
	case step.Phase == phaseSplit && n.phase == phaseSplit && step.Round == n.round && n.parties[0] != self:
		return refuse("asks it to split although party %s won the round", n.parties[0])
	case step.Phase != n.phase || step.Round != n.round || !slices.Equal(step.Parties, n.parties):
		return refuse("asks for it on %v where the log determines %s", step.Parties, n)
	}
	switch step.Phase {
	case phaseSplit:
		a, err := splitRound.Args(step)
		if err != nil {
			return err
		}
		if a != n.split {
			return refuse("asks a split of attribute %d node %d; the committed winner is attribute %d node %d", a.Attr, a.Node, n.split.Attr, n.split.Node)
		}
	case phaseCut:
		a, err := cutRound.Args(step)
		if err != nil {
			return err
		}
		if !slices.Equal(a.Choices, n.cut.Choices) {
			return refuse("asks cuts of %d groups that are not the %d committed choices", len(a.Choices), len(n.cut.Choices))
		}
	}
	return nil
}
