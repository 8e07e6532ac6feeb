package integrate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// n-party Mondrian (params.algorithm: mondrian) on the job framework: the
// rounds of anonymize.MondrianParty (Propose, Cut) at the parties, the
// fold (anonymize.ChooseCuts) and MondrianState.Apply at the coordinator.

// Mondrian's step outputs (to the coordinator alone) and decisions
// (committed), STYLE habit 2.

// proposeOutput is a party's share of a round: per open group, its widest
// attribute with an allowable cut and that attribute's width (NCP against
// the public range).
type proposeOutput struct {
	Proposals []proposal `msgpack:"proposals"`
}

type proposal struct {
	Group int     `msgpack:"group"`
	Attr  int     `msgpack:"attr"`
	Width float64 `msgpack:"width"`
}

// cutChoices is committed after a propose round: which party cuts which
// group on which attribute, without the widths. No choice ends the rounds.
type cutChoices struct {
	Choices []cutChoice `msgpack:"choices"`
}

type cutChoice struct {
	Group int    `msgpack:"group"`
	Party string `msgpack:"party"`
	Attr  int    `msgpack:"attr"`
}

// cutOutput is an owner's cuts of the groups it was chosen for.
type cutOutput struct {
	Cuts []wireCut `msgpack:"cuts"`
}

// wireCut is one group's cut: the part of every record of the group (in
// ascending record number), Width bytes big-endian each. Every party knows
// which records are in the group, so this is all it needs; it links record
// numbers to parts, as TDS's splits do, and nothing finer than the
// publication.
type wireCut struct {
	Group int    `msgpack:"group"`
	Attr  int    `msgpack:"attr"`
	Parts int    `msgpack:"parts"`
	Width int    `msgpack:"width"`
	Part  []byte `msgpack:"part"`
}

// cutDecision is committed after a cut step: every cut of the round, in
// group order.
type cutDecision struct {
	Cuts []wireCut `msgpack:"cuts"`
}

// labelsOutput is a party's publish output under Mondrian: per group (in
// the state's order) the labels of its own attributes, the class counts
// (every party holds the class; they must agree) and the sum over records
// of its attributes' NCP against public ranges (which the publication
// shows anyway).
type labelsOutput struct {
	Labels  [][]string     `msgpack:"labels"`
	Classes [][]classCount `msgpack:"classes"`
	NCPSum  float64        `msgpack:"ncp_sum"`
}

type classCount struct {
	Label     string `msgpack:"label"`
	Sensitive string `msgpack:"sensitive"` // the sensitive value, from its owner only
	Count     int    `msgpack:"count"`
}

func toWireCut(c anonymize.Cut, attr int) wireCut {
	w := wireCut{Group: c.Group, Attr: attr, Parts: c.Parts, Width: 1}
	if c.Parts > 256 {
		w.Width = 2
	}
	for _, p := range c.Part {
		if w.Width == 1 {
			w.Part = append(w.Part, byte(p))
		} else {
			w.Part = append(w.Part, byte(p>>8), byte(p))
		}
	}
	return w
}

func (w wireCut) cut() (anonymize.Cut, error) {
	if w.Group < 0 || w.Parts < 2 || w.Parts > math.MaxUint16 || (w.Width != 1 && w.Width != 2) || len(w.Part)%w.Width != 0 {
		return anonymize.Cut{}, fmt.Errorf("integrate: cut: %w: group %d, %d parts, width %d", wire.ErrMalformed, w.Group, w.Parts, w.Width)
	}
	c := anonymize.Cut{Group: w.Group, Parts: w.Parts, Part: make([]uint16, len(w.Part)/w.Width)}
	for i := range c.Part {
		if w.Width == 1 {
			c.Part[i] = uint16(w.Part[i])
		} else {
			c.Part[i] = uint16(w.Part[2*i])<<8 | uint16(w.Part[2*i+1])
		}
	}
	return c, nil
}

// checkOutput is the sensitive column owner's answer to a round's cuts:
// one bit per cut, in the cut decision's order (every part of the cut
// group satisfies the model).
type checkOutput struct {
	OK []bool `msgpack:"ok"`
}

// checkDecision is committed after a check step: the owner's bits.
type checkDecision struct {
	OK []bool `msgpack:"ok"`
}

// applyCuts applies a committed cut decision (and the owner's committed
// answers, when a party holds the sensitive column; nil otherwise).
func applyCuts(st *anonymize.MondrianState, d *cutDecision, ch *checkDecision) (*anonymize.MondrianState, error) {
	cuts, attrs, err := d.cuts()
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return st.Apply(cuts)
	}
	return st.ApplyChecked(cuts, attrs, ch.OK)
}

func (d *cutDecision) cuts() ([]anonymize.Cut, []int, error) {
	cuts := make([]anonymize.Cut, 0, len(d.Cuts))
	attrs := make([]int, 0, len(d.Cuts))
	for _, w := range d.Cuts {
		c, err := w.cut()
		if err != nil {
			return nil, nil, err
		}
		cuts, attrs = append(cuts, c), append(attrs, w.Attr)
	}
	return cuts, attrs, nil
}

// cutters are the parties the choices name, sorted: the parties of the
// round's cut step.
func (ch *cutChoices) cutters() []string {
	var out []string
	for _, c := range ch.Choices {
		if !slices.Contains(out, c.Party) {
			out = append(out, c.Party)
		}
	}
	slices.Sort(out)
	return out
}

// matches checks a cut decision against the choices it answers: one cut
// per choice, in the choices' (group) order, each on the chosen attribute.
func (d *cutDecision) matches(ch cutChoices) error {
	if len(d.Cuts) != len(ch.Choices) {
		return fmt.Errorf("%d cuts for %d chosen groups", len(d.Cuts), len(ch.Choices))
	}
	for i, w := range d.Cuts {
		if c := ch.Choices[i]; w.Group != c.Group || w.Attr != c.Attr {
			return fmt.Errorf("a cut of group %d on attribute %d where group %d on attribute %d was chosen", w.Group, w.Attr, c.Group, c.Attr)
		}
	}
	return nil
}

// mondrianRounds runs the rounds: every party proposes; the coordinator
// commits the choices; the chosen owners cut; the coordinator commits the
// cuts and applies them; until no group has a proposal.
func (co *coordinator) mondrianRounds(ctx context.Context, sd schemaDecision, ad alignDecision) (int, error) {
	st := anonymize.NewMondrianState(ad.Records)
	for r := 0; ; r++ {
		co.c.Progress(phasePropose, r, 0)
		ch, err := run(ctx, co, proposeRound, r, co.parties, none{}, func(o *job.Outcome[proposeOutput]) (cutChoices, error) {
			return decideProposals(o, co.parties, sd.Attrs, st)
		})
		if err != nil || len(ch.Choices) == 0 {
			return r, err
		}
		cd, err := run(ctx, co, cutRound, r, ch.cutters(), ch, func(o *job.Outcome[cutOutput]) (cutDecision, error) {
			return decideCuts(o, ch, st)
		})
		if err != nil {
			return r, err
		}
		var chk *checkDecision
		if owner := sd.SensitiveOwner; owner != "" {
			d, err := run(ctx, co, checkRound, r, []string{owner}, none{}, func(o *job.Outcome[checkOutput]) (checkDecision, error) {
				return decideCheck(o, owner, len(cd.Cuts))
			})
			if err != nil {
				return r, err
			}
			chk = &d
		}
		if st, err = applyCuts(st, &cd, chk); err != nil {
			return r, err
		}
	}
}

func decideProposals(o *job.Outcome[proposeOutput], parties []string, attrs []Attr, st *anonymize.MondrianState) (cutChoices, error) {
	var d cutChoices
	outs, err := inOrder(o, parties)
	if err != nil {
		return d, err
	}
	var shares []anonymize.PartyProposals
	for i, p := range parties {
		sh := anonymize.PartyProposals{Party: p}
		for _, pr := range outs[i].Proposals {
			if pr.Attr < 0 || pr.Attr >= len(attrs) || attrs[pr.Attr].Owner != p {
				return d, fmt.Errorf("party %s proposed a cut on attribute %d, which it does not own", p, pr.Attr)
			}
			sh.Proposals = append(sh.Proposals, anonymize.Proposal(pr))
		}
		shares = append(shares, sh)
	}
	choices, err := anonymize.ChooseCuts(st, shares)
	if err != nil {
		return d, err
	}
	for _, c := range choices {
		d.Choices = append(d.Choices, cutChoice(c))
	}
	return d, nil
}

func decideCuts(o *job.Outcome[cutOutput], ch cutChoices, st *anonymize.MondrianState) (cutDecision, error) {
	var d cutDecision
	cutters := ch.cutters()
	outs, err := inOrder(o, cutters)
	if err != nil {
		return d, err
	}
	want := map[int]string{}
	attr := map[int]int{}
	for _, c := range ch.Choices {
		want[c.Group], attr[c.Group] = c.Party, c.Attr
	}
	for i, p := range cutters {
		for _, w := range outs[i].Cuts {
			if want[w.Group] != p || attr[w.Group] != w.Attr {
				return d, fmt.Errorf("party %s cut group %d on attribute %d, which it was not chosen for", p, w.Group, w.Attr)
			}
			delete(want, w.Group)
			d.Cuts = append(d.Cuts, w)
		}
	}
	if len(want) > 0 {
		return d, fmt.Errorf("%d chosen groups were not cut", len(want))
	}
	slices.SortFunc(d.Cuts, func(a, b wireCut) int { return a.Group - b.Group })
	if _, err := applyCuts(st, &d, nil); err != nil { // the form, before it is committed
		return d, err
	}
	return d, nil
}

func decideCheck(o *job.Outcome[checkOutput], owner string, cuts int) (checkDecision, error) {
	outs, err := inOrder(o, []string{owner})
	if err != nil {
		return checkDecision{}, err
	}
	if len(outs[0].OK) != cuts {
		return checkDecision{}, fmt.Errorf("check from party %s: %w: %d answers for %d cuts", owner, wire.ErrMalformed, len(outs[0].OK), cuts)
	}
	return checkDecision(outs[0]), nil
}

func decideMondrianPublish(o *job.Outcome[labelsOutput], parties []string, prm *Params, sd schemaDecision, records int) (publishDecision, error) {
	var d publishDecision
	outs, err := inOrder(o, parties)
	if err != nil {
		return d, err
	}
	labels := map[string][][]string{}
	var classes [][]classCount // the owner's of the sensitive column, else the first party's
	var totals [][]classCount
	sum := 0.0
	for i, p := range parties {
		o := outs[i]
		if len(o.Labels) != len(o.Classes) || math.IsNaN(o.NCPSum) || o.NCPSum < 0 {
			return d, fmt.Errorf("publication from party %s: %w: %d groups' labels, %d groups' classes", p, wire.ErrMalformed, len(o.Labels), len(o.Classes))
		}
		t := classTotals(o.Classes)
		if totals == nil {
			totals = t
		} else if !slices.EqualFunc(totals, t, slices.Equal) {
			return d, fmt.Errorf("parties %s and %s count the class differently", parties[0], p)
		}
		if classes == nil || p == sd.SensitiveOwner {
			classes = o.Classes
		}
		labels[p] = o.Labels
		sum += o.NCPSum
	}
	if d.Table, err = assemble(labels, classes, sd.Attrs, prm); err != nil {
		return d, err
	}
	if n := d.Table.Records(); n != records {
		return d, fmt.Errorf("the publication holds %d records, the alignment %d", n, records)
	}
	if d.NCP = sum / float64(records*max(len(sd.Attrs), 1)); d.NCP > 1+1e-9 {
		return d, fmt.Errorf("%w: ncp %v", wire.ErrMalformed, d.NCP)
	}
	return d, checkPublication(&d, prm)
}

// classTotals is the class counts per group without the sensitive values.
func classTotals(classes [][]classCount) [][]classCount {
	out := make([][]classCount, len(classes))
	for g, cc := range classes {
		count := map[string]int{}
		for _, c := range cc {
			count[c.Label] += c.Count
		}
		for _, l := range slices.Sorted(maps.Keys(count)) {
			out[g] = append(out[g], classCount{Label: l, Count: count[l]})
		}
	}
	return out
}

// assemble builds the publication from every party's labels of its own
// attributes and the class (and private sensitive) counts, group by group.
func assemble(labels map[string][][]string, classes [][]classCount, attrs []Attr, prm *Params) (anonymize.Published, error) {
	cols := make([]string, 0, len(attrs)+2)
	ownIdx := make([]int, len(attrs)) // attribute's position among its owner's
	seen := map[string]int{}
	for a, at := range attrs {
		cols = append(cols, at.Name)
		ownIdx[a] = seen[at.Owner]
		seen[at.Owner]++
	}
	cols = append(cols, prm.Class)
	if prm.private() {
		cols = append(cols, prm.Sensitive)
	}
	var rows [][]string
	var counts []int
	for g, cc := range classes {
		vals := make([]string, len(attrs))
		for a, at := range attrs {
			ls := labels[at.Owner][g]
			if len(ls) != seen[at.Owner] {
				return anonymize.Published{}, fmt.Errorf("party %s gave %d labels for group %d, it owns %d attributes", at.Owner, len(ls), g, seen[at.Owner])
			}
			vals[a] = ls[ownIdx[a]]
		}
		for _, c := range cc {
			if c.Count < 1 {
				return anonymize.Published{}, fmt.Errorf("%w: class count %d", wire.ErrMalformed, c.Count)
			}
			row := append(slices.Clone(vals), c.Label)
			if prm.private() {
				row = append(row, c.Sensitive)
			}
			rows, counts = append(rows, row), append(counts, c.Count)
		}
	}
	return anonymize.CompactCounts(cols, rows, counts), nil
}

// checkPublication computes min_group per requirement and checks k and l
// on the publication.
func checkPublication(d *publishDecision, prm *Params) error {
	var err error
	if d.MinGroups, err = d.Table.MinGroups(prm.Requirements); err != nil {
		return err
	}
	if m := prm.model(); !m.IsZero() {
		if err := d.Table.CheckModel(prm.Requirements, cmp.Or(prm.Sensitive, prm.Class), m); err != nil {
			return err
		}
	}
	for i, r := range prm.Requirements {
		if d.MinGroups[i] < r.K {
			return fmt.Errorf("%w: the publication's smallest class on %s has %d records", anonymize.ErrViolation, r, d.MinGroups[i])
		}
	}
	return nil
}
