package anonymize

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Top-down specialisation (TDS; Fung, Wang and Yu, ICDE 2005) and its
// n-party form (Wang, Fung and Dong, ISI 2005, as extended in
// extended to n parties with a coordinator that folds their candidates), as pure per-party
// functions:
//
//	party:       Best(party, public)            -> Candidate   (its share: a score)
//	coordinator: fold BetterCandidate over shares -> winner      (committed)
//	owner:       Split(party, public, winner)   -> SplitInstruction (record lists per child)
//	everyone:    public.Apply(instruction)      -> next public state
//
// The public state (TDSPublic) is the same at every party: the taxonomies,
// the requirements, the shared class labels and, per attribute and record,
// the node the record is currently generalised to. A party's private state
// (TDSParty) is the leaf of each record on its own attributes and nothing else.

// TDSAttr is one quasi-identifier of the integrated table: its name, the
// party that owns it and its taxonomy (public: it is the shape of the
// published values).
type TDSAttr struct {
	Name  string
	Owner string
	Tax   *Taxonomy
}

// TDSPublic is the state every party holds identically. Make it with
// NewTDSPublic and advance it with Apply only: it carries unexported indexes
// (the requirements' attribute indices and the current QID classes) that a
// hand-built value would lack.
type TDSPublic struct {
	Attrs  []TDSAttr
	Reqs   []Requirement
	qidIdx [][]int // per requirement, attribute indices
	Class  []int32 // shared class label per record
	NClass int
	Gen    [][]int32 // Gen[a][r]: node of attribute a published for record r
	Round  int
	// ClassL > 1 also requires distinct ClassL-diversity of the shared class
	// label in every class of every requirement's QID (set by WithClassDiversity).
	ClassL int
	// classModel, when set (WithClassModel), is a sensitive model of the
	// shared class that every class of every QID must satisfy.
	classModel *Coded
	g          qidGroups // the QID classes of Gen, computed when the state is made
}

// NewTDSPublic starts TDS with every value generalised to its taxonomy's root.
// class holds the shared class label of every record, in aligned record order.
func NewTDSPublic(attrs []TDSAttr, reqs []Requirement, class []string) (*TDSPublic, error) {
	n := len(class)
	p := &TDSPublic{Attrs: attrs, Reqs: reqs}
	for _, r := range reqs {
		if r.K < 1 || r.K > n {
			return nil, fmt.Errorf("%w: %s with %d records", ErrRequirement, r, n)
		}
		var idx []int
		for _, q := range r.QID {
			i := slices.IndexFunc(attrs, func(a TDSAttr) bool { return a.Name == q })
			if i < 0 {
				return nil, fmt.Errorf("%w: %s: QID column %q is not a TDS attribute", ErrRequirement, r, q)
			}
			idx = append(idx, i)
		}
		p.qidIdx = append(p.qidIdx, idx)
	}
	codes := map[string]int32{}
	labels := slices.Clone(class)
	slices.Sort(labels)
	for _, l := range slices.Compact(labels) {
		codes[l] = int32(len(codes))
	}
	p.NClass = len(codes)
	p.Class = make([]int32, n)
	for i, c := range class {
		p.Class[i] = codes[c]
	}
	p.Gen = make([][]int32, len(attrs))
	for a := range attrs {
		p.Gen[a] = make([]int32, n) // node 0 is the root
	}
	p.g = p.groups()
	return p, nil
}

// WithClassDiversity returns the state with distinct l-diversity of the
// shared class label required in every QID class, as a further validity
// condition of each specialisation (every party can check it: the class is
// shared). The class label is the sensitive attribute here; a sensitive
// column held by one party cannot be checked by the others this way. At most
// 64 class labels.
func (p *TDSPublic) WithClassDiversity(l int) (*TDSPublic, error) {
	if l < 1 || l > p.NClass || p.NClass > 64 {
		return nil, fmt.Errorf("%w: class diversity l = %d with %d class labels (at most 64)", ErrRequirement, l, p.NClass)
	}
	if p.Round != 0 {
		return nil, fmt.Errorf("%w: class diversity must be set before the first round", ErrRequirement)
	}
	q := *p
	q.ClassL = l
	return &q, nil
}

// WithClassModel returns the state with a sensitive model of the shared
// class (class, as given to NewTDSPublic) required in every QID class, as a
// further validity condition of each specialisation: any model of Sun's
// (entropy, recursive (c, l), p⁺, (p, α)); every party can check it, the
// class is shared.
func (p *TDSPublic) WithClassModel(m SensitiveModel, class []string) (*TDSPublic, error) {
	if p.Round != 0 || len(class) != len(p.Class) {
		return nil, fmt.Errorf("%w: a class model is set before the first round, on the job's class", ErrRequirement)
	}
	c, err := m.Code(class)
	if err != nil {
		return nil, err
	}
	all := make([]int32, len(class))
	for i := range all {
		all[i] = int32(i)
	}
	if !c.Diverse(all) {
		return nil, fmt.Errorf("%w: the whole table does not satisfy %s on the class", ErrRequirement, m)
	}
	q := *p
	q.classModel = c
	return &q, nil
}

// TDSParty is one party's private state: the taxonomy leaf of every record
// on each attribute it owns.
type TDSParty struct {
	Name string
	Leaf map[int][]int32 // attribute index -> leaf per record
}

// NewTDSParty encodes a party's own columns (aligned record order) against
// the public taxonomies. A value missing from a taxonomy is an error naming it.
func NewTDSParty(name string, pub *TDSPublic, cols map[string][]string) (*TDSParty, error) {
	p := &TDSParty{Name: name, Leaf: map[int][]int32{}}
	for a, at := range pub.Attrs {
		if at.Owner != name {
			continue
		}
		vals, ok := cols[at.Name]
		if !ok {
			return nil, fmt.Errorf("%w: party %q owns column %q but did not provide it", ErrRequirement, name, at.Name)
		}
		if len(vals) != len(pub.Class) {
			return nil, fmt.Errorf("%w: party %q column %q has %d records, the job %d", ErrRequirement, name, at.Name, len(vals), len(pub.Class))
		}
		leaves := make([]int32, len(vals))
		for r, v := range vals {
			id, err := at.Tax.Leaf(v)
			if err != nil {
				return nil, fmt.Errorf("party %q record %d: %w", name, r, err)
			}
			leaves[r] = int32(id)
		}
		p.Leaf[a] = leaves
	}
	return p, nil
}

// Candidate is a party's best specialisation in a round: its share for the
// coordinator. Only Score is needed to pick the winner; InfoGain and
// AnonyLoss are kept for audit and tests.
type Candidate struct {
	Party     string
	Attr      int
	Node      int
	Score     float64
	InfoGain  float64
	AnonyLoss float64
}

// BetterCandidate is the coordinator's pairwise fold: the higher score wins;
// scores within 1e-12 tie, and ties go to the smaller (party, attribute,
// node). It is commutative and associative, so shares can be
// folded in any order.
func BetterCandidate(a, b Candidate) Candidate {
	if math.Abs(a.Score-b.Score) > 1e-12 {
		if a.Score > b.Score {
			return a
		}
		return b
	}
	switch {
	case a.Party != b.Party:
		if a.Party < b.Party {
			return a
		}
		return b
	case a.Attr != b.Attr:
		if a.Attr < b.Attr {
			return a
		}
		return b
	case a.Node <= b.Node:
		return a
	}
	return b
}

// childUnder returns the child of v on the path from leaf up to v.
func childUnder(t *Taxonomy, leaf, v int) int {
	for t.Nodes[leaf].Parent != v {
		leaf = t.Nodes[leaf].Parent
	}
	return leaf
}

// Best is a party's round: over the cut nodes of its own attributes, the
// valid and beneficial specialisation with the highest score, with
//
//	Score(v)     = InfoGain(v) / (AnonyLoss(v) + 1)
//	InfoGain(v)  = E(R_v) − Σ_c |R_c|/|R_v| · E(R_c)   (E: class entropy, log₂)
//	AnonyLoss(v) = mean over the QIDs containing v's attribute of A(QID) − A_v(QID)
//
// (Fung, Wang and Yu define AnonyLoss for one QID; the mean over the
// QIDs that contain the attribute is our choice for a joint requirement). v is valid if A_v(QID_j) ≥
// k_j for every such QID, beneficial if R_v holds more than one class.
// ok is false when the party has no valid and beneficial candidate.
// Best reads the public state and the party's leaves and changes neither.
func Best(party *TDSParty, pub *TDSPublic) (best Candidate, ok bool) {
	g := pub.g
	attrs := make([]int, 0, len(party.Leaf))
	for a := range party.Leaf {
		attrs = append(attrs, a)
	}
	slices.Sort(attrs)
	for _, a := range attrs {
		for _, c := range pub.candidates(party, a, g) {
			if !ok {
				best, ok = c, true
			} else {
				best = BetterCandidate(best, c)
			}
		}
	}
	return best, ok
}

// candidates scores every valid, beneficial cut node of attribute a.
func (p *TDSPublic) candidates(party *TDSParty, a int, g qidGroups) []Candidate {
	t := p.Attrs[a].Tax
	// records per cut node, in record order (a dense slice: no map order)
	byNode := make([][]int32, len(t.Nodes))
	for r, v := range p.Gen[a] {
		if !t.IsLeaf(int(v)) {
			byNode[v] = append(byNode[v], int32(r))
		}
	}
	sc := &splitScratch{}
	var out []Candidate
	for v, rv := range byNode {
		if len(rv) == 0 {
			continue
		}
		child, gain, ok := p.infoGain(t, party.Leaf[a], v, rv)
		if !ok {
			continue // not beneficial
		}
		loss, valid := p.anonyLoss(a, v, rv, child, g, sc)
		if !valid {
			continue
		}
		out = append(out, Candidate{Party: party.Name, Attr: a, Node: v, Score: gain / (loss + 1), InfoGain: gain, AnonyLoss: loss})
	}
	return out
}

// infoGain returns, for the records rv at cut node v, the position of each
// record's child among v's children and InfoGain(v); ok is false when rv
// holds a single class (the specialisation is not beneficial).
func (p *TDSPublic) infoGain(t *Taxonomy, leaves []int32, v int, rv []int32) (child []int32, gain float64, ok bool) {
	kids := t.Nodes[v].Children
	kidIdx := make(map[int]int, len(kids))
	for i, c := range kids {
		kidIdx[c] = i
	}
	child = make([]int32, len(rv))
	classAll := make([]int, p.NClass)
	classKid := make([][]int, len(kids))
	for i := range classKid {
		classKid[i] = make([]int, p.NClass)
	}
	for i, r := range rv {
		ci := kidIdx[childUnder(t, int(leaves[r]), v)]
		child[i] = int32(ci)
		classAll[p.Class[r]]++
		classKid[ci][p.Class[r]]++
	}
	distinct := 0
	for _, c := range classAll {
		if c > 0 {
			distinct++
		}
	}
	if distinct < 2 {
		return nil, 0, false
	}
	gain = Entropy(classAll)
	for _, ck := range classKid {
		nk := 0
		for _, c := range ck {
			nk += c
		}
		if nk > 0 {
			gain -= float64(nk) / float64(len(rv)) * Entropy(ck)
		}
	}
	return child, gain, true
}

// splitScratch is anonyLoss's reusable memory.
type splitScratch struct {
	h       keyIndex
	counts  []int
	classes []uint64 // class labels present in each new class (a bit each)
	hists   []*Hist  // with a class model: each new class's histogram
}

// anonyLoss is AnonyLoss(v), the mean over the QIDs containing attribute a
// of A(QID) − A_v(QID), and whether specialising v keeps every such QID
// k-anonymous (and class-diverse with ClassL).
func (p *TDSPublic) anonyLoss(a, v int, rv, child []int32, g qidGroups, sc *splitScratch) (loss float64, valid bool) {
	gen := p.Gen[a]
	nkids := uint64(len(p.Attrs[a].Tax.Nodes[v].Children))
	nq := 0
	for j, idx := range p.qidIdx {
		if !slices.Contains(idx, a) {
			continue
		}
		before, after := math.MaxInt32, math.MaxInt32
		for gi, s := range g.size[j] {
			before = min(before, int(s))
			if gen[g.rep[j][gi]] != int32(v) {
				after = min(after, int(s))
			}
		}
		sc.h.reset(len(rv) / 4)
		sc.counts, sc.classes, sc.hists = sc.counts[:0], sc.classes[:0], sc.hists[:0]
		for i, r := range rv {
			c, ok := sc.h.index(uint64(g.group[j][r])*nkids + uint64(child[i]))
			if !ok {
				sc.counts = append(sc.counts, 0)
				sc.classes = append(sc.classes, 0)
				if p.classModel != nil {
					sc.hists = append(sc.hists, p.classModel.NewHist())
				}
			}
			sc.counts[c]++
			sc.classes[c] |= 1 << uint(p.Class[r])
			if p.classModel != nil {
				p.classModel.Add(sc.hists[c], r)
			}
		}
		for _, h := range sc.hists {
			if !p.classModel.OK(h) {
				return 0, false
			}
		}
		if p.ClassL > 1 {
			for _, m := range sc.classes {
				if bits.OnesCount64(m) < p.ClassL {
					return 0, false
				}
			}
		}
		for _, s := range sc.counts {
			after = min(after, s)
		}
		if after < p.Reqs[j].K {
			return 0, false
		}
		loss += float64(before - after)
		nq++
	}
	if nq > 0 {
		loss /= float64(nq)
	}
	return loss, true
}

// SplitInstruction is what the winning party tells the others: for the
// specialised node, the records (aligned indices) going to each child.
type SplitInstruction struct {
	Attr     int
	Node     int
	Children []int
	Records  [][]int32
}

// Split is the winner's round: the record lists of its winning candidate.
func Split(party *TDSParty, pub *TDSPublic, c Candidate) (SplitInstruction, error) {
	leaves, ok := party.Leaf[c.Attr]
	if !ok || c.Attr >= len(pub.Attrs) {
		return SplitInstruction{}, fmt.Errorf("%w: party %q does not own attribute %d", ErrRequirement, party.Name, c.Attr)
	}
	t := pub.Attrs[c.Attr].Tax
	if c.Node < 0 || c.Node >= len(t.Nodes) || t.IsLeaf(c.Node) {
		return SplitInstruction{}, fmt.Errorf("%w: column %q: node %d cannot be specialised", ErrRequirement, pub.Attrs[c.Attr].Name, c.Node)
	}
	kids := t.Nodes[c.Node].Children
	s := SplitInstruction{Attr: c.Attr, Node: c.Node, Children: slices.Clone(kids), Records: make([][]int32, len(kids))}
	for r, v := range pub.Gen[c.Attr] {
		if int(v) != c.Node {
			continue
		}
		kid := childUnder(t, int(leaves[r]), c.Node)
		s.Records[slices.Index(kids, kid)] = append(s.Records[slices.Index(kids, kid)], int32(r))
	}
	return s, nil
}

// Apply returns the public state after a split (the receiver is unchanged:
// only the split attribute's column is copied). It checks that the lists
// cover exactly the records now at the node, so a wrong instruction is an
// error, not a silent divergence.
func (p *TDSPublic) Apply(s SplitInstruction) (*TDSPublic, error) {
	if s.Attr < 0 || s.Attr >= len(p.Attrs) || len(s.Children) != len(s.Records) {
		return nil, fmt.Errorf("%w: malformed split instruction", ErrRequirement)
	}
	name := p.Attrs[s.Attr].Name
	t := p.Attrs[s.Attr].Tax
	if s.Node < 0 || s.Node >= len(t.Nodes) || !slices.Equal(t.Nodes[s.Node].Children, s.Children) {
		return nil, fmt.Errorf("%w: column %q: split of node %d does not name its children", ErrRequirement, name, s.Node)
	}
	gen := slices.Clone(p.Gen[s.Attr])
	moved := 0
	for i, rs := range s.Records {
		for _, r := range rs {
			if r < 0 || int(r) >= len(gen) || gen[r] != int32(s.Node) {
				return nil, fmt.Errorf("%w: column %q: split of %q moves record %d, which is not under it", ErrRequirement, name, t.Nodes[s.Node].Label, r)
			}
			gen[r] = int32(s.Children[i])
			moved++
		}
	}
	for _, v := range gen {
		if v == int32(s.Node) {
			return nil, fmt.Errorf("%w: column %q: split of %q leaves records behind (%d moved)", ErrRequirement, name, t.Nodes[s.Node].Label, moved)
		}
	}
	q := *p
	q.Gen = slices.Clone(p.Gen)
	q.Gen[s.Attr] = gen
	q.Round = p.Round + 1
	q.g = q.groups()
	return &q, nil
}

// TDSResult is the outcome of a TDS run: the final public state and the
// winners in order (what the coordinator committed).
type TDSResult struct {
	Public  *TDSPublic
	Winners []Candidate
	Splits  []SplitInstruction // the winners' instructions, in order (enough to replay)
}

// RunTDS runs the rounds in process: every party's Best, the fold, the
// winner's Split and Apply, until no party has a candidate. It is what the
// coordinator and parties do over the network, minus the network; with one
// party owning every attribute it is central TDS.
func RunTDS(parties []*TDSParty, pub *TDSPublic) (*TDSResult, error) {
	res := &TDSResult{}
	owner := map[string]*TDSParty{}
	for _, p := range parties {
		owner[p.Name] = p
	}
	for {
		var win Candidate
		found := false
		for _, p := range parties {
			c, ok := Best(p, pub)
			if !ok {
				continue
			}
			if !found {
				win, found = c, true
			} else {
				win = BetterCandidate(win, c)
			}
		}
		if !found {
			break
		}
		s, err := Split(owner[win.Party], pub, win)
		if err != nil {
			return nil, err
		}
		if pub, err = pub.Apply(s); err != nil {
			return nil, err
		}
		res.Winners = append(res.Winners, win)
		res.Splits = append(res.Splits, s)
	}
	res.Public = pub
	return res, nil
}

// Generalisation returns the final publication as node ids per attribute.
func (p *TDSPublic) Generalisation() *Generalisation {
	return &Generalisation{Node: p.Gen}
}

// Publication is the published table of a TDS state: every attribute's
// label and the class (column classCol), compacted.
func (p *TDSPublic) Publication(class []string, classCol string) Published {
	out := Published{}
	for _, a := range p.Attrs {
		out.Columns = append(out.Columns, a.Name)
	}
	out.Columns = append(out.Columns, classCol)
	out.Rows = DistinctRows(len(class), func(r int) []string {
		vals := make([]string, 0, len(p.Attrs)+1)
		for a, at := range p.Attrs {
			vals = append(vals, at.Tax.Nodes[p.Gen[a][r]].Label)
		}
		return append(vals, class[r])
	})
	return out
}

// NCP is the publication's NCP with public denominators (PublicPenalty):
// every party computes the same figure from the public state alone.
func (p *TDSPublic) NCP() float64 {
	if len(p.Class) == 0 || len(p.Attrs) == 0 {
		return 0
	}
	total := 0.0
	for a, at := range p.Attrs {
		pen := make([]float64, len(at.Tax.Nodes))
		for id := range pen {
			pen[id] = at.Tax.PublicPenalty(id)
		}
		s := 0.0
		for _, v := range p.Gen[a] {
			s += pen[v]
		}
		total += s / float64(len(p.Class))
	}
	return total / float64(len(p.Attrs))
}
