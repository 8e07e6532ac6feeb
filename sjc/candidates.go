package sjc

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/tree"
)

// The candidate search at a node: each table's AVC sets, the gains of its
// candidate splits and its frontier under the tie rule (BestSplits), what
// it offers the coordinator (Offer) and the coordinator's pick (Choose).

// Candidate is one split of the table's attributes and its information
// gain at a node. The split stays with the table's party; only the gain
// goes to the coordinator.
type Candidate struct {
	Gain  float64
	Split tree.Split
}

// BestSplits computes the AVC set of every candidate attribute of the table
// over p (value -> summed Cls) and returns the table's frontier of
// candidates under the tie rule (package doc), sorted by (column, threshold or
// value): the candidates within Eps of the table's best gain that no
// candidate with a smaller key matches or beats in gain. Gains strictly
// increase along the frontier, its last entry has the table's best gain,
// and it almost always holds that one candidate alone. Sending the
// frontier's gains (not just the best) lets the coordinator apply the tie
// rule exactly across tables (see Choose).
func (l *Local) BestSplits(p Part) ([]Candidate, error) {
	total, err := l.Counts(p)
	if err != nil {
		return nil, err
	}
	// Attributes are in column-name order and each one's candidates come
	// in threshold or value order, so candidates arrive in key order and
	// the frontier is kept on the fly: a candidate joins it when its gain
	// beats every earlier one.
	f := frontier{best: math.Inf(-1)}
	sc := &avcScratch{left: make([]uint64, l.u), right: make([]uint64, l.u), cur: make([]uint64, l.u)}
	for i := range l.attrs {
		if err = l.candidates(&l.attrs[i], p, total, sc, &f); err != nil {
			return nil, err
		}
	}
	// Entries below the table's best by more than Eps can never win (the
	// overall best is at least the table's best): drop them, so the
	// coordinator sees only gains within Eps of the table's best, almost
	// always one.
	first := 0
	for first < len(f.cands) && f.cands[first].Gain < f.best-Eps {
		first++
	}
	return f.cands[first:], nil
}

type frontier struct {
	best  float64
	cands []Candidate
}

func (f *frontier) offer(gain float64, l *Local, a *attr, op string, num float64, cat string) {
	if gain > f.best {
		f.best = gain
		// Entries below the new best by more than Eps can never be within
		// Eps of the table's final best (which is at least this one): drop
		// them now (BestSplits would at the end), keeping the frontier short.
		k := 0
		for k < len(f.cands) && f.cands[k].Gain < gain-Eps {
			k++
		}
		f.cands = append(f.cands[:copy(f.cands, f.cands[k:])], Candidate{Gain: gain, Split: tree.Split{Party: l.info.Party, Table: l.info.Name, Column: a.col.Name, Op: op, Num: num, Cat: cat}})
	}
}

// avcScratch is candidates' working memory, reused between the attributes
// of one BestSplits.
type avcScratch struct {
	avc              []uint64
	present          []bool
	keys             []uint64
	left, right, cur []uint64
}

// candidates offers f every binary split of attribute a at the node, in
// key order, from its AVC set (value -> summed Cls of p's rows).
func (l *Local) candidates(a *attr, p Part, total []uint64, sc *avcScratch, f *frontier) error {
	var n uint64
	for _, x := range total {
		n += x
	}
	tab := gainTables()
	scan := &splitScan{l: l, a: a, f: f, tab: tab, total: total, n: n, nhTotal: nEntropy(tab, total, n),
		left: sc.left, right: sc.right, prev: -1}
	clear(scan.left)
	if nv := len(a.nums) + len(a.strs); len(p.Rows)*8 < nv {
		return l.avcSorted(a, p, sc, scan.visit)
	}
	return l.avcDense(a, p, sc, scan.visit)
}

// splitScan turns an attribute's AVC entries, met in value order, into
// the candidate splits it offers the frontier: numeric attr <= midpoint
// between each two adjacent values present, categorical attr == v for
// each value with rows on both sides.
type splitScan struct {
	l                  *Local
	a                  *attr
	f                  *frontier
	tab                *logTables
	total, left, right []uint64
	n                  uint64
	nhTotal            float64 // N·H(total)
	prev               int     // numeric: the value before, -1 at first
}

// visit takes the AVC entry of value v (its rank).
func (s *splitScan) visit(v int, counts []uint64) {
	left, right, total, u := s.left, s.right, s.total, len(s.total)
	if s.a.numeric {
		if s.prev >= 0 {
			for c := 0; c < u; c++ {
				right[c] = total[c] - left[c]
			}
			s.f.offer(gainFrom(s.tab, s.nhTotal, s.n, left, right), s.l, s.a, tree.OpLE, tree.Midpoint(s.a.nums[s.prev], s.a.nums[v]), "")
		}
		for c := 0; c < u; c++ {
			left[c] += counts[c]
		}
		s.prev = v
		return
	}
	var nl, nr uint64
	for c := 0; c < u; c++ {
		left[c] = counts[c]
		right[c] = total[c] - left[c]
		nl += left[c]
		nr += right[c]
	}
	if nl != 0 && nr != 0 {
		s.f.offer(gainFrom(s.tab, s.nhTotal, s.n, left, right), s.l, s.a, tree.OpEQ, 0, s.a.strs[v])
	}
}

// avcSorted visits a's AVC entries in value order by sorting p's rows by
// value: for few rows against the domain, cheaper than clearing a dense
// AVC array for every value of it. Each key is the row's value rank above
// its position in p.
func (l *Local) avcSorted(a *attr, p Part, sc *avcScratch, visit func(v int, counts []uint64)) error {
	u := l.u
	keys := sc.keys[:0]
	for k, r := range p.Rows {
		keys = append(keys, uint64(a.rank[r])<<32|uint64(k))
	}
	sc.keys = keys
	slices.Sort(keys)
	cur := sc.cur
	for i := 0; i < len(keys); {
		v := keys[i] >> 32
		clear(cur)
		for ; i < len(keys) && keys[i]>>32 == v; i++ {
			k := int(uint32(keys[i]))
			for c := 0; c < u; c++ {
				s, carry := bits.Add64(cur[c], p.Cls[k*u+c], 0)
				if carry != 0 {
					return l.avcOverflow(a)
				}
				cur[c] = s
			}
		}
		visit(int(v), cur)
	}
	return nil
}

// avcDense visits a's AVC entries in value order from a dense array over
// its whole domain.
func (l *Local) avcDense(a *attr, p Part, sc *avcScratch, visit func(v int, counts []uint64)) error {
	u, nv := l.u, len(a.nums)+len(a.strs)
	if cap(sc.avc) < nv*u {
		sc.avc = make([]uint64, nv*u)
	}
	if cap(sc.present) < nv {
		sc.present = make([]bool, nv)
	}
	avc, present := sc.avc[:nv*u], sc.present[:nv]
	clear(avc)
	clear(present)
	for k, r := range p.Rows {
		v := int(a.rank[r])
		present[v] = true
		for c := 0; c < u; c++ {
			s, carry := bits.Add64(avc[v*u+c], p.Cls[k*u+c], 0)
			if carry != 0 {
				return l.avcOverflow(a)
			}
			avc[v*u+c] = s
		}
	}
	for v := 0; v < nv; v++ {
		if present[v] {
			visit(v, avc[v*u:(v+1)*u])
		}
	}
	return nil
}

func (l *Local) avcOverflow(a *attr) error {
	return fmt.Errorf("%w: table %q column %q: AVC counts", ErrOverflow, l.info.Name, a.col.Name)
}

// Offer is what a table sends the coordinator at a node: the gains of its
// frontier (BestSplits), in key order. It holds no attribute, value or
// threshold.
type Offer struct {
	Gains []float64 `msgpack:"gains"`
}

// OfferOf strips a frontier to its gains.
func OfferOf(front []Candidate) Offer {
	o := Offer{Gains: make([]float64, len(front))}
	for i, c := range front {
		o.Gains[i] = c.Gain
	}
	return o
}

// Choose is the coordinator's pick at a node from every table's offer
// (offers[i] from g.Tables[i]): with g* the best gain offered, the winner
// is the smallest (party, table, frontier position) among entries with
// gain >= g* − Eps. As each table's frontier keeps, in key order, every
// candidate not matched by a smaller key, this is exactly the tie rule
// over all candidates of all tables. ok is false when nothing is offered.
func Choose(g *Graph, offers []Offer) (tbl, idx int, gain float64, ok bool) {
	best := math.Inf(-1)
	for _, o := range offers {
		for _, x := range o.Gains {
			best = max(best, x)
		}
	}
	if math.IsInf(best, -1) {
		return 0, 0, 0, false
	}
	order := make([]int, len(g.Tables))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if x := strings.Compare(g.Tables[a].Party, g.Tables[b].Party); x != 0 {
			return x
		}
		return strings.Compare(g.Tables[a].Name, g.Tables[b].Name)
	})
	for _, t := range order {
		if t >= len(offers) {
			continue
		}
		for i, x := range offers[t].Gains {
			if x >= best-Eps {
				return t, i, x, true
			}
		}
	}
	return 0, 0, 0, false // unreachable: best was offered
}
