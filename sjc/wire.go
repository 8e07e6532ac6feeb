package sjc

import (
	"encoding/binary"
	"fmt"
)

// EdgeSummary is a class or split summary as it travels between the two
// parties of an edge (TypeClassSummary, TypeSplitSummary). Both ends hold
// the edge's shared join values, sorted, from its private set
// intersection, and a summary names only shared values; so it names them
// by position in that list instead of as text. Pos holds the positions,
// strictly ascending, as uvarint gaps (the first position, then each one
// minus the one before minus 1); Counts the class counts (a class
// summary's, or a split summary's left ones), u per value, and Right a
// split summary's right counts, as uvarints. It discloses exactly what
// the summary it carries does.
type EdgeSummary struct {
	Edge   int    `msgpack:"edge"`
	Pos    []byte `msgpack:"pos"`
	Counts []byte `msgpack:"counts"`
	Right  []byte `msgpack:"right"`
}

func appendUvarints(b []byte, xs []uint64) []byte {
	for _, x := range xs {
		b = binary.AppendUvarint(b, x)
	}
	return b
}

// Values returns the join values es names, from the edge's sorted shared
// values: ErrSummary when a gap is malformed or a position is past the
// list.
func (es *EdgeSummary) Values(shared []string) ([]string, error) {
	var out []string
	pos := -1
	for b := es.Pos; len(b) > 0; {
		gap, k := binary.Uvarint(b)
		if k <= 0 || gap >= uint64(len(shared)) || pos+1+int(gap) >= len(shared) {
			return nil, fmt.Errorf("%w: edge %d: a summary names a position outside the intersection of %d values", ErrSummary, es.Edge, len(shared))
		}
		b = b[k:]
		pos += 1 + int(gap)
		out = append(out, shared[pos])
	}
	return out, nil
}

// uvarints decodes a count field of es.
func (es *EdgeSummary) uvarints(b []byte) ([]uint64, error) {
	out, ok := readUvarints(b)
	if !ok {
		return nil, fmt.Errorf("%w: edge %d: a summary's counts are not uvarints", ErrSummary, es.Edge)
	}
	return out, nil
}

// readUvarints decodes b as appendUvarints wrote it; false if it is not
// a whole number of uvarints.
func readUvarints(b []byte) ([]uint64, bool) {
	var out []uint64
	for len(b) > 0 {
		x, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, false
		}
		b = b[k:]
		out = append(out, x)
	}
	return out, true
}

// ClassSummary decodes es as a class summary over the edge's shared values.
func (es *EdgeSummary) ClassSummary(shared []string) (ClassSummary, error) {
	vals, err := es.Values(shared)
	if err != nil {
		return ClassSummary{}, err
	}
	counts, err := es.uvarints(es.Counts)
	if err != nil {
		return ClassSummary{}, err
	}
	if len(es.Right) != 0 {
		return ClassSummary{}, fmt.Errorf("%w: edge %d: a class summary with right counts", ErrSummary, es.Edge)
	}
	return ClassSummary{Edge: es.Edge, Values: vals, Counts: counts}, nil
}

// SplitSummary decodes es as a split summary over the edge's shared values.
func (es *EdgeSummary) SplitSummary(shared []string) (SplitSummary, error) {
	vals, err := es.Values(shared)
	if err != nil {
		return SplitSummary{}, err
	}
	left, err := es.uvarints(es.Counts)
	if err != nil {
		return SplitSummary{}, err
	}
	right, err := es.uvarints(es.Right)
	if err != nil {
		return SplitSummary{}, err
	}
	return SplitSummary{Edge: es.Edge, Values: vals, Left: left, Right: right}, nil
}

// edgeAlign lines a table's join values on an edge up with the edge's
// sorted shared values, so that summaries go to and from the wire by
// integer position without comparing text.
type edgeAlign struct {
	e      int
	shared []string // the shared values it was made for
	pos    []int32  // by the table's value index: its position in shared, or -1
	id     []int32  // by position in shared: the table's value index, or -1
}

// align merges the table's sorted values on edge e with shared, once.
func (l *Local) align(e int, shared []string) (*edgeAlign, error) {
	ek := l.edge(e)
	if ek == nil {
		return nil, fmt.Errorf("%w: table %q is not on edge %d", ErrSummary, l.info.Name, e)
	}
	al := &edgeAlign{e: e, shared: shared, pos: make([]int32, len(ek.Vals)), id: make([]int32, len(shared))}
	for i := range al.pos {
		al.pos[i] = -1
	}
	for j := range al.id {
		al.id[j] = -1
	}
	for i, j := 0, 0; i < len(ek.Vals) && j < len(shared); {
		switch {
		case ek.Vals[i] < shared[j]:
			i++
		case ek.Vals[i] > shared[j]:
			j++
		default:
			al.pos[i], al.id[j] = int32(j), int32(i)
			i++
			j++
		}
	}
	return al, nil
}

// wireClass is Summary (restricted to the shared values) as it travels.
func (l *Local) wireClass(p Part, al *edgeAlign) (EdgeSummary, error) {
	sum, has, err := l.aggregate(p, al.e)
	if err != nil {
		return EdgeSummary{}, err
	}
	u := l.u
	es := EdgeSummary{Edge: al.e}
	prev := int32(-1)
	for id, ok := range has {
		if !ok || al.pos[id] < 0 {
			continue
		}
		es.Pos = binary.AppendUvarint(es.Pos, uint64(al.pos[id]-prev-1))
		prev = al.pos[id]
		es.Counts = appendUvarints(es.Counts, sum[id*u:(id+1)*u])
	}
	return es, nil
}

// wireSplit is SplitSummary as it travels. Every value a row still holds
// is shared (class propagation dropped the others); one that is not is
// ErrSummary.
func (l *Local) wireSplit(left, right Part, al *edgeAlign) (EdgeSummary, error) {
	ls, lh, err := l.aggregate(left, al.e)
	if err != nil {
		return EdgeSummary{}, err
	}
	rs, rh, err := l.aggregate(right, al.e)
	if err != nil {
		return EdgeSummary{}, err
	}
	u := l.u
	es := EdgeSummary{Edge: al.e}
	prev := int32(-1)
	for id := range lh {
		if !lh[id] && !rh[id] {
			continue
		}
		if al.pos[id] < 0 {
			return EdgeSummary{}, fmt.Errorf("%w: table %q edge %s: a row holds a join value outside the intersection", ErrSummary, l.info.Name, l.g.EdgeName(al.e))
		}
		es.Pos = binary.AppendUvarint(es.Pos, uint64(al.pos[id]-prev-1))
		prev = al.pos[id]
		es.Counts = appendUvarints(es.Counts, ls[id*u:(id+1)*u])
		es.Right = appendUvarints(es.Right, rs[id*u:(id+1)*u])
	}
	return es, nil
}

// entries decodes es's positions into the table's lookup (idx by value
// index: entry number, or -1), checking the counts: want per value.
func (l *Local) entries(es *EdgeSummary, al *edgeAlign, counts []uint64) ([]int32, error) {
	idx := make([]int32, len(al.pos))
	for i := range idx {
		idx[i] = -1
	}
	k, pos := 0, -1
	for b := es.Pos; len(b) > 0; k++ {
		gap, n := binary.Uvarint(b)
		if n <= 0 || gap >= uint64(len(al.id)) || pos+1+int(gap) >= len(al.id) {
			return nil, fmt.Errorf("%w: table %q edge %s: a summary names a position outside the intersection of %d values", ErrSummary, l.info.Name, l.g.EdgeName(al.e), len(al.id))
		}
		b = b[n:]
		pos += 1 + int(gap)
		id := al.id[pos]
		if id < 0 {
			return nil, fmt.Errorf("%w: table %q edge %s: the summary names a join value the table does not hold", ErrSummary, l.info.Name, l.g.EdgeName(al.e))
		}
		idx[id] = int32(k)
	}
	if len(counts) != k*l.u {
		return nil, fmt.Errorf("%w: table %q edge %s: %d counts for %d values and %d classes", ErrSummary, l.info.Name, l.g.EdgeName(al.e), len(counts), k, l.u)
	}
	return idx, nil
}

// applyWire applies a received summary: a class summary forward or
// backward, or (split) a split summary, returning the new Part(s).
func (l *Local) applyWireClass(p Part, es *EdgeSummary, al *edgeAlign, forward bool) (Part, error) {
	counts, err := es.uvarints(es.Counts)
	if err != nil {
		return Part{}, err
	}
	if len(es.Right) != 0 {
		return Part{}, fmt.Errorf("%w: edge %d: a class summary with right counts", ErrSummary, es.Edge)
	}
	idx, err := l.entries(es, al, counts)
	if err != nil {
		return Part{}, err
	}
	cs := ClassSummary{Edge: al.e, Counts: counts}
	if forward {
		return l.forward(p, cs, idx)
	}
	return l.backward(p, cs, idx)
}

// applyWireSplit applies a received split summary.
func (l *Local) applyWireSplit(p Part, es *EdgeSummary, al *edgeAlign) (left, right Part, err error) {
	ls, err := es.uvarints(es.Counts)
	if err != nil {
		return Part{}, Part{}, err
	}
	rs, err := es.uvarints(es.Right)
	if err != nil {
		return Part{}, Part{}, err
	}
	idx, err := l.entries(es, al, ls)
	if err != nil {
		return Part{}, Part{}, err
	}
	return l.applySplit(p, SplitSummary{Edge: al.e, Left: ls, Right: rs}, idx)
}

// aligns caches a session's edgeAligns, one per (table, edge), made on
// first use for the shared values of that use.
type aligns map[alignKey]*edgeAlign

type alignKey struct {
	l *Local
	e int
}

// of returns l's alignment on edge e with shared.
func (m aligns) of(l *Local, e int, shared []string) (*edgeAlign, error) {
	k := alignKey{l, e}
	if al := m[k]; al != nil && sameSlice(al.shared, shared) {
		return al, nil
	}
	al, err := l.align(e, shared)
	if err != nil {
		return nil, err
	}
	m[k] = al
	return al, nil
}

func sameSlice(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
