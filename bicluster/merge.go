package bicluster

import (
	"fmt"
	"math"
	"slices"
)

// Local is one party's local bicluster as the merge sees it (Ahmad and
// Khokhar, "Phoenix", §3.6): its columns, its number of rows and its representative, the mean
// of every column over its rows (decision 17a: all columns, the paper's
// formula). Rows stay with the party in the distributed protocol.
type Local struct {
	Party int
	Rows  []int
	Cols  []int
	Count int
	Rep   []float64
}

// NewLocal builds the merge's view of bicluster b found in party's matrix m.
func NewLocal(party int, m *Matrix, b Bicluster) Local {
	l := Local{Party: party, Rows: slices.Clone(b.Rows), Cols: slices.Clone(b.Cols), Count: len(b.Rows), Rep: make([]float64, m.Cols)}
	for _, r := range b.Rows {
		for j, x := range m.Row(r) {
			l.Rep[j] += x
		}
	}
	for j := range l.Rep {
		l.Rep[j] /= float64(max(l.Count, 1))
	}
	return l
}

// PartyRow is a row of a global bicluster: a party and its row index.
type PartyRow struct {
	Party, Row int
}

// Global is a merged bicluster: the union of the members' rows, the
// columns held by members with at least half of its rows, and the
// size-weighted mean representative.
type Global struct {
	Members []int // indices into the locals, ascending
	Rows    []PartyRow
	Cols    []int
	Rep     []float64
}

// Similar decides whether locals a and b (of different parties) describe
// the same bicluster. In the distributed protocol it is answered from
// encrypted representatives; PlainSimilar answers it in the clear.
type Similar func(a, b int) (bool, error)

// PlainSimilar is the merge test on plaintext representatives: the
// columns overlap (Jaccard ≥ 1/2) and the root mean squared difference of
// the representatives over the union U of the columns (u of them) is at
// most beta times the larger mean of the two there (a scale-free form of
// the paper's "Euclidean distance below a threshold β", decision 18). In
// squares, with S the sum of a representative over U:
//
//	u·‖v − m‖² ≤ β²·S_v²  or  u·‖v − m‖² ≤ β²·S_m²
//
// two comparisons of polynomials in both representatives, which the job
// evaluates on encrypted representatives, revealing only their signs
// (pairtest.go).
func PlainSimilar(locals []Local, beta float64) Similar {
	return func(a, b int) (bool, error) {
		la, lb := locals[a], locals[b]
		in := Common(la.Cols, lb.Cols)
		union := len(la.Cols) + len(lb.Cols) - in
		if union == 0 || 2*in < union {
			return false, nil
		}
		cols := slices.Concat(la.Cols, lb.Cols)
		slices.Sort(cols)
		cols = slices.Compact(cols)
		var d2, ma, mb float64
		for _, j := range cols {
			if j < 0 || j >= len(la.Rep) || j >= len(lb.Rep) {
				return false, fmt.Errorf("%w: column %d outside the representatives", ErrColumns, j)
			}
			d := la.Rep[j] - lb.Rep[j]
			d2 += d * d
			ma += la.Rep[j]
			mb += lb.Rep[j]
		}
		m := max(math.Abs(ma), math.Abs(mb))
		return float64(len(cols))*d2 <= beta*beta*m*m, nil
	}
}

// Merge groups the locals into global biclusters: every pair of locals of
// different parties is tested in a fixed order (a < b by index) and
// similar pairs are joined transitively, so the result does not depend on
// the order of the tests (one deterministic merge, whichever party
// asks; §3.6 merges pairwise and leaves the order open). Globals with fewer than minRows rows in all are
// dropped; the others come ordered by their first member.
func Merge(locals []Local, similar Similar, minRows int) ([]Global, error) {
	parent := make([]int, len(locals))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for a := range locals {
		for b := a + 1; b < len(locals); b++ {
			if locals[a].Party == locals[b].Party {
				continue
			}
			ok, err := similar(a, b)
			if err != nil {
				return nil, fmt.Errorf("merge locals %d and %d: %w", a, b, err)
			}
			if ok {
				ra, rb := find(a), find(b)
				parent[max(ra, rb)] = min(ra, rb)
			}
		}
	}
	var out []Global
	index := map[int]int{} // root → position in out; looked up only, never ranged over
	for i := range locals {
		r := find(i)
		k, ok := index[r]
		if !ok {
			k = len(out)
			index[r] = k
			out = append(out, Global{})
		}
		out[k].Members = append(out[k].Members, i)
	}
	kept := out[:0]
	for _, g := range out {
		if g = globalOf(locals, g.Members); len(g.Rows) >= minRows {
			kept = append(kept, g)
		}
	}
	return kept, nil
}

func globalOf(locals []Local, members []int) Global {
	g := Global{Members: members}
	total := 0
	colRows := map[int]int{} // read back through the sorted key list below
	var cols []int
	for _, i := range members {
		l := locals[i]
		total += l.Count
		for _, r := range l.Rows {
			g.Rows = append(g.Rows, PartyRow{Party: l.Party, Row: r})
		}
		for _, j := range l.Cols {
			if _, ok := colRows[j]; !ok {
				cols = append(cols, j)
			}
			colRows[j] += l.Count
		}
		if g.Rep == nil {
			g.Rep = make([]float64, len(l.Rep))
		}
		for j, x := range l.Rep {
			if j < len(g.Rep) {
				g.Rep[j] += x * float64(l.Count)
			}
		}
	}
	slices.Sort(cols)
	for _, j := range cols {
		if 2*colRows[j] >= total {
			g.Cols = append(g.Cols, j)
		}
	}
	for j := range g.Rep {
		g.Rep[j] /= float64(max(total, 1))
	}
	slices.SortFunc(g.Rows, func(a, b PartyRow) int {
		if a.Party != b.Party {
			return a.Party - b.Party
		}
		return a.Row - b.Row
	})
	g.Rows = slices.Compact(g.Rows)
	return g
}

// FitRows is a party's last step after the merge: its rows that fit
// global bicluster g's constant model on g's columns (mean divergence
// below δ from μ, the mean of g's representative over its columns), in
// ascending order. The merge result is public, so this reveals nothing
// new; it brings back the rows a party's local search lost to noise
// (a party sees only its share of each bicluster's rows, so it has no
// neighbours to grow from).
func FitRows(m *Matrix, g Global, p Params) ([]int, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	if len(g.Cols) == 0 {
		return nil, nil
	}
	mu := 0.0
	for _, j := range g.Cols {
		if j < 0 || j >= m.Cols || j >= len(g.Rep) {
			return nil, fmt.Errorf("%w: global bicluster column %d outside %d columns", ErrColumns, j, m.Cols)
		}
		mu += weight(g.Rep[j])
	}
	mu /= float64(len(g.Cols))
	if !(mu > 0) {
		return nil, nil
	}
	eps := 0.0
	if p.Divergence == ItakuraSaito {
		eps = p.Epsilon
	}
	var out []int
	for r := range m.Rows {
		row := m.Row(r)
		d := 0.0
		for _, j := range g.Cols {
			d += p.Divergence.cell(weight(row[j])+eps, mu+eps)
		}
		if d/float64(len(g.Cols)) < p.Delta {
			out = append(out, r)
		}
	}
	return out, nil
}

// The merge as the job runs it, on the public descriptions of the locals
// (their column sets and row counts): the candidate pairs, the pair test's
// rounds, the groups their bits join and the global biclusters. The
// coordinator and every party derive the same from the committed steps.

// candidatePairs lists the pairs of locals of different parties whose
// column sets overlap (Jaccard ≥ 1/2, the column half of PlainSimilar),
// in the order Merge tests them ((party, local) order of the first, then
// of the second), each with the union of the two column sets: public,
// from the committed descriptions.
func candidatePairs(locals [][]LocalDesc) []pairDesc {
	refs := refsOf(locals)
	var out []pairDesc
	for a := range refs {
		for b := a + 1; b < len(refs); b++ {
			if refs[a].Party == refs[b].Party {
				continue
			}
			ca, cb := locals[refs[a].Party][refs[a].Local].Cols, locals[refs[b].Party][refs[b].Local].Cols
			in := Common(ca, cb)
			if union := len(ca) + len(cb) - in; union > 0 && 2*in >= union {
				cols := slices.Concat(ca, cb)
				slices.Sort(cols)
				out = append(out, pairDesc{A: refs[a], B: refs[b], Cols: slices.Compact(cols)})
			}
		}
	}
	return out
}

// testRound chooses the candidate pairs a merge test round decides, from
// the committed bits of the earlier rounds, so that the groups are those
// of testing every candidate pair (Merge's, the connected components of
// the similar pairs) while most pairs are never tested:
//
//   - round 0 tests, in every component of the candidate pairs, the pairs
//     of its first local (the centre) with the others: K−1 pairs, not
//     K(K−1)/2, for K locals of one bicluster;
//   - round 1 tests every untested candidate pair whose locals round 0 did
//     not join; an untested pair inside a group cannot change the groups;
//   - after that no untested pair crosses groups, and there is no round 2.
//
// With four parties whose locals all match, round 0 decides 3 pairs per
// bicluster instead of 6 and round 1 is empty; with eight, 7 instead of 28.
// It also reveals fewer bits than testing every pair.
func testRound(locals [][]LocalDesc, pairs, tested []pairDesc, similar []bool, round int) []pairDesc {
	var out []pairDesc
	switch round {
	case 0:
		first := map[int]Ref{} // component root → its first local; looked up only
		comp := components(locals, pairs, nil)
		for _, ls := range refsOf(locals) {
			if _, ok := first[comp[ls]]; !ok {
				first[comp[ls]] = ls
			}
		}
		for _, p := range pairs {
			if p.A == first[comp[p.A]] {
				out = append(out, p)
			}
		}
	case 1:
		done := map[[2]Ref]bool{} // looked up only
		for _, p := range tested {
			done[[2]Ref{p.A, p.B}] = true
		}
		var joined []pairDesc
		for i, p := range tested {
			if i < len(similar) && similar[i] {
				joined = append(joined, p)
			}
		}
		comp := components(locals, joined, nil)
		for _, p := range pairs {
			if !done[[2]Ref{p.A, p.B}] && comp[p.A] != comp[p.B] {
				out = append(out, p)
			}
		}
	}
	return out
}

// refsOf lists every local in (party, local) order.
func refsOf(locals [][]LocalDesc) []Ref {
	var refs []Ref
	for p, ls := range locals {
		for k := range ls {
			refs = append(refs, Ref{p, k})
		}
	}
	return refs
}

// components maps every local to the index of the first local of its
// connected component under the given pairs (those with keep nil or
// keep[i] true).
func components(locals [][]LocalDesc, pairs []pairDesc, keep []bool) map[Ref]int {
	refs := refsOf(locals)
	at := make(map[Ref]int, len(refs)) // looked up only
	for i, r := range refs {
		at[r] = i
	}
	parent := make([]int, len(refs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, p := range pairs {
		if keep != nil && (i >= len(keep) || !keep[i]) {
			continue
		}
		a, aok := at[p.A]
		b, bok := at[p.B]
		if !aok || !bok {
			continue
		}
		ra, rb := find(a), find(b)
		parent[max(ra, rb)] = min(ra, rb)
	}
	out := make(map[Ref]int, len(refs))
	for i, r := range refs {
		out[r] = find(i)
	}
	return out
}

// joinPairs joins the similar pairs transitively, as Merge does, and
// returns every local's group ordered by its first member: deterministic
// from committed decisions and independent of the pairs' order.
func joinPairs(locals [][]LocalDesc, pairs []pairDesc, similar []bool) [][]Ref {
	if similar == nil {
		similar = []bool{} // nil would keep every pair
	}
	comp := components(locals, pairs, similar)
	var out [][]Ref
	pos := map[int]int{} // component → position in out; looked up only
	for _, r := range refsOf(locals) {
		k, ok := pos[comp[r]]
		if !ok {
			k = len(out)
			pos[comp[r]] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], r)
	}
	return out
}

// minContributors is the fewest parties whose local biclusters a merge
// group must hold for its sums to be aggregated and decrypted. Every
// member of a group adds its column sums to every slot of the group
// (groupSlots), so a slot's contributors are the group's parties. With one
// contributor the decrypted slot is that party's representative times its
// public count: its local bicluster laid bare to every member, which the
// job never outputs (Ahmad and Khokhar's §3.6 merges across parties;
// a group of one party merged nothing). With two, no one but the two
// learns either contribution, and each learns the other's by subtraction:
// the other's representative, which the pair test it took part in already
// found within β of its own. The node policy's floor on parties counts
// the step's parties (every party is in the merge's aggregation), not a
// slot's; it cannot decide the grouping, which every party must derive
// alike from the log while policies are local and differ.
const minContributors = 2

// contributors is how many parties hold members of group g.
func contributors(g []Ref) int {
	var parties []int
	for _, r := range g {
		if !slices.Contains(parties, r.Party) {
			parties = append(parties, r.Party)
		}
	}
	return len(parties)
}

// keepGroups drops the groups with fewer than k.rows rows by their
// members' public counts, which cannot become global biclusters, and the
// groups with fewer than k.parties parties (params.min_group_parties, at
// least minContributors: a lone local's sums would be its representative):
// their sums are never aggregated.
func keepGroups(groups [][]Ref, locals [][]LocalDesc, k groupKeep) [][]Ref {
	var out [][]Ref
	for _, g := range groups {
		n := 0
		for _, r := range g {
			n += locals[r.Party][r.Local].Count
		}
		if n >= k.rows && contributors(g) >= max(k.parties, minContributors) {
			out = append(out, g)
		}
	}
	return out
}

// groupCols are the columns held by members with at least half the
// group's rows (as Merge does), from public column sets and counts.
func groupCols(g []Ref, locals [][]LocalDesc) []int {
	total := 0
	count := map[int]int{} // read back through the sorted key list
	var cols []int
	for _, r := range g {
		l := locals[r.Party][r.Local]
		total += l.Count
		for _, j := range l.Cols {
			if _, ok := count[j]; !ok {
				cols = append(cols, j)
			}
			count[j] += l.Count
		}
	}
	slices.Sort(cols)
	var out []int
	for _, j := range cols {
		if 2*count[j] >= total {
			out = append(out, j)
		}
	}
	return out
}

// groupSlots lists, for each group, the columns its aggregated sums
// cover: its public columns (groupCols), the only ones the result
// reports, so every decrypted sum is a published mean times the group's
// public count. It also returns the total number of slots.
func groupSlots(groups [][]Ref, locals [][]LocalDesc) ([][]int, int) {
	out := make([][]int, len(groups))
	n := 0
	for k, g := range groups {
		out[k] = groupCols(g, locals)
		n += len(out[k])
	}
	return out, n
}

// groupRep is the size-weighted representative of a group from its
// aggregated sums over its slots; columns outside the slots are 0 (not
// aggregated, never used).
func groupRep(g []Ref, locals [][]LocalDesc, sums []float64, slots []int, cols int) []float64 {
	total := 0
	for _, r := range g {
		total += locals[r.Party][r.Local].Count
	}
	rep := make([]float64, cols)
	for i, j := range slots {
		rep[j] = sums[i] / float64(max(total, 1))
	}
	return rep
}

// globalsOf builds the global biclusters from the kept groups and their
// aggregated sums: public, from committed decisions.
func globalsOf(groups [][]Ref, locals [][]LocalDesc, sums []float64, cols int) ([]globalDesc, error) {
	slots, n := groupSlots(groups, locals)
	if len(sums) != n {
		return nil, fmt.Errorf("merge: %d sums for %d slots", len(sums), n)
	}
	out := make([]globalDesc, 0, len(groups))
	off := 0
	for k, g := range groups {
		rep := groupRep(g, locals, sums[off:off+len(slots[k])], slots[k], cols)
		off += len(slots[k])
		out = append(out, globalDesc{Members: g, Cols: groupCols(g, locals), Rep: rep})
	}
	return out, nil
}
