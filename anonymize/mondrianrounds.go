package anonymize

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Mondrian over columns held apart (vertical partition), as pure per-party
// rounds, in the manner of the TDS rounds of tds.go:
//
//	party:       Propose(state)              -> []Proposal   (its share: per open group, its widest attribute with an allowable cut and the width)
//	coordinator: ChooseCuts(shares)          -> []CutChoice  (per group: the widest proposal; committed without the widths)
//	owner:       Cut(state, its choices)     -> []Cut        (per chosen group: each record's part)
//	everyone:    state.Apply(cuts)           -> next state
//
// This is strict Mondrian (mondrian.go) with every open group cut in the
// same round: the owner of an attribute finds its allowable cut within a
// group from its own values (numeric: closest to the median; categorical:
// along the taxonomy), and the coordinator takes, per group, the widest
// attribute that has one, which is the attribute central Mondrian would cut
// (it tries attributes by decreasing width and cuts the first that has an
// allowable cut; ties go to the attribute order in both). Widths are NCP
// widths against public ranges (Dataset.UsePublicRanges), so they compare
// across parties and reveal no data range. With the same attribute order
// and public ranges, the final partition is central Mondrian's.

// MondrianState is the public state: the partition of the aligned records
// into groups (rows ascending) and which groups are still open.
type MondrianState struct {
	Groups [][]int32
	Open   []bool
	// Excluded lists, per group, the attributes whose cut a sensitive
	// column's owner refused (ApplyChecked); they are not proposed again.
	Excluded [][]int
	Round    int
}

// NewMondrianState starts with every record in one open group.
func NewMondrianState(n int) *MondrianState {
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	return &MondrianState{Groups: [][]int32{all}, Open: []bool{true}, Excluded: [][]int{nil}}
}

// MondrianParty is one party's private state: its own attributes as a
// dataset over the aligned records, their indices among all attributes
// (Global[i] is Own.Attrs[i]'s), k, and the sensitive model's coded column
// when the party can check it (the shared class).
type MondrianParty struct {
	Name   string
	Own    *Dataset
	Global []int
	K      int
	Sens   *Coded
}

// Proposal is a party's best cut of one open group: its widest attribute
// (global index) with an allowable cut, and that attribute's width.
type Proposal struct {
	Group int
	Attr  int
	Width float64
}

// Propose is a party's round: for every open group, its widest own
// attribute with an allowable cut (width > 0), if any.
func (p *MondrianParty) Propose(st *MondrianState) []Proposal {
	m := &mondrian{ds: p.Own, k: p.K, dc: p.Sens}
	var out []Proposal
	for g, rows := range st.Groups {
		if !st.Open[g] {
			continue
		}
		c := p.Own.summarise(rows)
		for _, o := range m.byWidth(c) {
			if o.w == 0 {
				break
			}
			if slices.Contains(st.Excluded[g], p.Global[o.a]) {
				continue
			}
			if m.cutOn(o.a, rows, c) != nil {
				out = append(out, Proposal{Group: g, Attr: p.Global[o.a], Width: o.w})
				break
			}
		}
	}
	return out
}

// CutChoice is the committed choice for one group: which party cuts it on
// which attribute.
type CutChoice struct {
	Group int
	Party string
	Attr  int
}

// PartyProposals is one party's proposals, for ChooseCuts.
type PartyProposals struct {
	Party     string
	Proposals []Proposal
}

// ChooseCuts is the coordinator's fold: per group, the widest proposal;
// widths within 1e-12 tie, and ties go to the smaller attribute index. The
// choices come in group order. A proposal for a group that is not open, or
// twice for one group from one party, is an error.
func ChooseCuts(st *MondrianState, shares []PartyProposals) ([]CutChoice, error) {
	best := make([]*CutChoice, len(st.Groups))
	width := make([]float64, len(st.Groups))
	for _, sh := range shares {
		seen := map[int]bool{}
		for _, pr := range sh.Proposals {
			if pr.Group < 0 || pr.Group >= len(st.Groups) || !st.Open[pr.Group] || seen[pr.Group] || !(pr.Width > 0) || pr.Width > 1 {
				return nil, fmt.Errorf("%w: party %s proposed a cut of group %d (width %v)", ErrRequirement, sh.Party, pr.Group, pr.Width)
			}
			seen[pr.Group] = true
			b := best[pr.Group]
			if b == nil || pr.Width > width[pr.Group]+1e-12 || (math.Abs(pr.Width-width[pr.Group]) <= 1e-12 && pr.Attr < b.Attr) {
				best[pr.Group], width[pr.Group] = &CutChoice{Group: pr.Group, Party: sh.Party, Attr: pr.Attr}, pr.Width
			}
		}
	}
	var out []CutChoice
	for _, b := range best {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out, nil
}

// Cut is the owner's instruction for one group: the part of every record
// of the group, in the group's order, parts numbered from 0 in the order
// Mondrian gives them (left then right; taxonomy children in order).
type Cut struct {
	Group int
	Parts int
	Part  []uint16
}

// Cut is the owner's round: the cuts of the groups it was chosen for.
func (p *MondrianParty) Cut(st *MondrianState, choices []CutChoice) ([]Cut, error) {
	m := &mondrian{ds: p.Own, k: p.K, dc: p.Sens}
	var out []Cut
	for _, ch := range choices {
		if ch.Party != p.Name {
			continue
		}
		a := slices.Index(p.Global, ch.Attr)
		if a < 0 || ch.Group < 0 || ch.Group >= len(st.Groups) || !st.Open[ch.Group] {
			return nil, fmt.Errorf("%w: party %s cannot cut group %d on attribute %d", ErrRequirement, p.Name, ch.Group, ch.Attr)
		}
		rows := st.Groups[ch.Group]
		parts := m.cutOn(a, rows, p.Own.summarise(rows))
		if parts == nil {
			return nil, fmt.Errorf("%w: party %s has no allowable cut of group %d on %q", ErrRequirement, p.Name, ch.Group, p.Own.Attrs[a].Name)
		}
		cut := Cut{Group: ch.Group, Parts: len(parts), Part: make([]uint16, len(rows))}
		if len(parts) > math.MaxUint16 {
			return nil, fmt.Errorf("%w: %d parts", ErrRequirement, len(parts))
		}
		pos := make(map[int32]int, len(rows))
		for i, r := range rows {
			pos[r] = i
		}
		for pi, part := range parts {
			for _, r := range part {
				cut.Part[pos[r]] = uint16(pi)
			}
		}
		out = append(out, cut)
	}
	return out, nil
}

// Apply returns the state after a round: every cut group replaced by its
// parts (in part order, rows ascending), every group not cut closed. A cut
// must give every part at least one record (the owner checked k: the
// coordinator cannot, it sees no values).
func (st *MondrianState) Apply(cuts []Cut) (*MondrianState, error) {
	return st.ApplyChecked(cuts, nil, nil)
}

// ApplyChecked is Apply when a sensitive column's owner checked the cuts:
// a cut with accepted[i] false is not made, its group stays open and its
// attribute (attrs[i]) is excluded for the group from then on. accepted nil
// accepts every cut.
func (st *MondrianState) ApplyChecked(cuts []Cut, attrs []int, accepted []bool) (*MondrianState, error) {
	if accepted != nil && (len(accepted) != len(cuts) || len(attrs) != len(cuts)) {
		return nil, fmt.Errorf("%w: %d cuts, %d attributes, %d answers", ErrRequirement, len(cuts), len(attrs), len(accepted))
	}
	refused := map[int]int{} // group -> attribute
	byGroup := map[int]Cut{}
	for _, c := range cuts {
		if c.Group < 0 || c.Group >= len(st.Groups) || !st.Open[c.Group] || len(c.Part) != len(st.Groups[c.Group]) || c.Parts < 2 {
			return nil, fmt.Errorf("%w: cut of group %d does not fit it", ErrRequirement, c.Group)
		}
		if _, dup := byGroup[c.Group]; dup {
			return nil, fmt.Errorf("%w: group %d cut twice", ErrRequirement, c.Group)
		}
		byGroup[c.Group] = c
	}
	for i, c := range cuts {
		if accepted != nil && !accepted[i] {
			delete(byGroup, c.Group)
			refused[c.Group] = attrs[i]
		}
	}
	next := &MondrianState{Round: st.Round + 1}
	for g, rows := range st.Groups {
		c, ok := byGroup[g]
		if !ok {
			a, retry := refused[g]
			ex := st.Excluded[g]
			if retry {
				ex = append(slices.Clone(ex), a)
			}
			next.Groups, next.Open, next.Excluded = append(next.Groups, rows), append(next.Open, retry), append(next.Excluded, ex)
			continue
		}
		parts := make([][]int32, c.Parts)
		for i, r := range rows {
			if int(c.Part[i]) >= c.Parts {
				return nil, fmt.Errorf("%w: cut of group %d names part %d of %d", ErrRequirement, g, c.Part[i], c.Parts)
			}
			parts[c.Part[i]] = append(parts[c.Part[i]], r)
		}
		for _, part := range parts {
			if len(part) == 0 {
				return nil, fmt.Errorf("%w: cut of group %d leaves a part empty", ErrRequirement, g)
			}
			next.Groups, next.Open, next.Excluded = append(next.Groups, part), append(next.Open, true), append(next.Excluded, nil)
		}
	}
	return next, nil
}

// Done reports whether no group is open.
func (st *MondrianState) Done() bool { return !slices.Contains(st.Open, true) }

// Labels are a party's published values of its own attributes for every
// group: numeric ranges as "[lo-hi]" (the value when lo = hi), categorical
// values as the lowest common ancestor's label; and the sum over records of
// their NCP (public ranges), which the publication shows anyway.
func (p *MondrianParty) Labels(st *MondrianState) (labels [][]string, ncpSum float64) {
	for _, rows := range st.Groups {
		c := p.Own.summarise(rows)
		ls := make([]string, len(p.Own.Attrs))
		for a, at := range p.Own.Attrs {
			ls[a] = classLabel(at, c, a)
			ncpSum += p.Own.width(a, c) * float64(len(rows))
		}
		labels = append(labels, ls)
	}
	return labels, ncpSum
}

// classLabel is the published value of attribute a of class c.
func classLabel(at *Attr, c MondrianClass, a int) string {
	switch {
	case at.Tax.Numeric && c.Lo[a] == c.Hi[a]:
		return strconv.FormatFloat(c.Lo[a], 'g', -1, 64)
	case at.Tax.Numeric:
		return "[" + strconv.FormatFloat(c.Lo[a], 'g', -1, 64) + "-" + strconv.FormatFloat(c.Hi[a], 'g', -1, 64) + "]"
	}
	return at.Tax.Nodes[c.Node[a]].Label
}

// RunMondrianRounds runs the rounds in process (every party's Propose,
// ChooseCuts, the owners' Cut, Apply) until no group is open: what the
// integrate job does over the network, minus the network. check, when not
// nil, is a sensitive column owner's answer for each cut (DiverseParts).
func RunMondrianRounds(parties []*MondrianParty, n int, check func(*MondrianState, Cut) bool) (*MondrianState, error) {
	st := NewMondrianState(n)
	for !st.Done() {
		var shares []PartyProposals
		for _, p := range parties {
			shares = append(shares, PartyProposals{Party: p.Name, Proposals: p.Propose(st)})
		}
		choices, err := ChooseCuts(st, shares)
		if err != nil {
			return nil, err
		}
		var cuts []Cut
		for _, p := range parties {
			c, err := p.Cut(st, choices)
			if err != nil {
				return nil, err
			}
			cuts = append(cuts, c...)
		}
		var attrs []int
		var ok []bool
		if check != nil {
			for _, c := range cuts {
				ok = append(ok, check(st, c))
				i := slices.IndexFunc(choices, func(ch CutChoice) bool { return ch.Group == c.Group })
				attrs = append(attrs, choices[i].Attr)
			}
		}
		if st, err = st.ApplyChecked(cuts, attrs, ok); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// DiverseParts is a sensitive column owner's check of one cut: whether
// every part of the group, as the cut would make it, satisfies the model
// (sens codes the owner's column over the aligned records). It is the one
// bit the owner answers.
func DiverseParts(st *MondrianState, c Cut, sens *Coded) bool {
	if c.Group < 0 || c.Group >= len(st.Groups) || len(c.Part) != len(st.Groups[c.Group]) {
		return false
	}
	hs := make([]*Hist, c.Parts)
	for i := range hs {
		hs[i] = sens.NewHist()
	}
	for i, r := range st.Groups[c.Group] {
		if int(c.Part[i]) >= c.Parts {
			return false
		}
		sens.Add(hs[c.Part[i]], r)
	}
	for _, h := range hs {
		if !sens.OK(h) {
			return false
		}
	}
	return true
}
