package boost

// The lattice path in the job (params.backend lattice, or auto on a star
// whose every party holds the lattice key; lattice.go has the arithmetic).
// Within a level step, after the up pass and the class holder's gradients:
//
//  1. The class holder sends each other party's table its down message
//     encrypted under the lattice key (TypeLatticeDown, sub-channel
//     ldown/EDGE): the entries' join values and combos, the layouts' node
//     counts, and per layout the ciphertexts of every entry's open nodes'
//     gradient and hessian sums. A table of its own sums in the clear.
//  2. The table's party computes, per layout, the masked bin sums of
//     every group of its columns (one ciphertext per group:
//     lattice_pack.go) and sends them (TypeLatticeBins,
//     lbins/EDGE) to the class holder and to every other decryptor: the
//     members of the decryption plan's quorums (latticePlan), which every
//     party derives alike from the job's parties and the key.
//  3. Each decryptor but the class holder makes its decryption shares (one
//     per quorum it is in) of each layout's bin sums, from the ciphertexts
//     their maker sent it (so it shares nothing the class holder chose),
//     and sends them to the class holder alone (TypeLatticeShare,
//     lshare/EDGE); the class holder makes its own if it is a decryptor,
//     folds them, decrypts with every quorum and reads every node's and
//     bin's sums (lattice.BinOpening) if the quorums agree.
//
// The class holder subtracts siblings as TrainLattice does: at a level
// after one it ran on (its bin sums in memory), only the left children are
// encrypted and summed, the right ones are their parent's sums less their
// sibling's. The table's party sums whatever rows it is sent and cannot
// tell which nodes they are. After a restart the sums of the level before
// are not kept (state.go keeps no bin sums), so that level sums every
// open node; the model is the same either way.

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// Message types of the lattice path.
const (
	// TypeLatticeDown carries the class holder's down message to a table,
	// encrypted under the lattice key (disclosure ciphertext).
	TypeLatticeDown = "boost/lattice-gradients"
	// TypeLatticeBins carries a table's masked bin sums to the class
	// holder and the decryptors (disclosure ciphertext).
	TypeLatticeBins = "boost/lattice-bin-sums"
	// TypeLatticeShare carries a decryptor's decryption shares of a
	// table's bin sums to the class holder (disclosure decryption-share).
	TypeLatticeShare = "boost/lattice-share"
)

// holdsLatticeKey reports whether the party holds a lattice key that every
// party of the job is a member of, with a quorum they reach.
func (s *session) holdsLatticeKey() bool {
	k, err := keyring.ReadLattice(s.p.Secrets())
	if err != nil {
		return false
	}
	for _, q := range s.p.Spec().PartyNames() {
		if k.PublicKey.Point(q) == 0 {
			return false
		}
	}
	return len(s.p.Spec().PartyNames()) >= k.PublicKey.Quorum
}

// readLatticeKey reads the party's lattice key once.
func (s *session) readLatticeKey() error {
	if s.lkeys != nil {
		return nil
	}
	k, err := keyring.ReadLattice(s.p.Secrets())
	if err != nil {
		return fmt.Errorf("party %s has no lattice key (params.backend lattice): %w", s.p.Self(), err)
	}
	s.lkeys = k
	return nil
}

// latticePlan is the decryption plan every party derives alike from the
// job's parties' points in the key: quorums with no member common to all
// when the parties outnumber the quorum (lattice.PlanVerified: a wrong
// share is detected, the decryptions then disagree), else the one quorum
// they make (PlanSingle). It also returns the decryptors: every member of
// a quorum, by name, in the key's order.
func (s *session) latticePlan() (*lattice.Plan, []string, error) {
	pk := s.lkeys.PublicKey
	var points []int
	for _, q := range s.p.Spec().PartyNames() {
		if p := pk.Point(q); p != 0 {
			points = append(points, p)
		}
	}
	slices.Sort(points)
	choose := lattice.PlanSingle
	if len(points) > pk.Quorum {
		choose = lattice.PlanVerified
	}
	pl, err := choose(pk, points)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, p := range points {
		if len(pl.QuorumsOf(p)) > 0 {
			names = append(names, pk.Members[p-1])
		}
	}
	return pl, names, nil
}

// latticeContext names the decryption of table t's bin sums of group f
// in layout g of this level step.
func (r *levelRun) latticeContext(t, g, f int) lattice.Context {
	return lattice.Context{Key: r.s.lkeys.PublicKey.ID(), Job: r.s.p.JobID(),
		Phase: fmt.Sprintf("boost-bins/%d/%d/%d", t, g, f), Round: r.step.Round, Attempt: r.step.Attempt}
}

// decodeEach decodes encodings of one ciphertext each.
func decodeEach(pk *lattice.PublicKey, c [][]byte) ([]*rlwe.Ciphertext, error) {
	out := make([]*rlwe.Ciphertext, len(c))
	for k, b := range c {
		cts, err := pk.Params.UnmarshalCiphertexts(b, 1)
		if err != nil || len(cts) != 1 {
			return nil, fmt.Errorf("%w: a lattice ciphertext", ErrWire)
		}
		out[k] = cts[0]
	}
	return out, nil
}

// keepSiblings keeps, at the class holder on the lattice path, the bin
// sums of the level after key grown levels and the parents of the next
// level's pairs of open nodes (decisions, in Holder.Apply's order).
func (s *session) keepSiblings(key int, decisions []Decision, sums []BinSums) {
	s.sib = nil
	if s.backend != BackendLattice || len(decisions) == 0 {
		return
	}
	sib := &siblings{parent: make([]int, len(decisions)), sums: sums}
	for j, d := range decisions {
		sib.parent[j] = d.Node
	}
	s.sib, s.sibKey = sib, key+1
}

// siblingsFor is the kept sums for the level after key grown levels with
// open nodes, if they are that level's parents'.
func (s *session) siblingsFor(key, open int) *siblings {
	if s.sib == nil || s.sibKey != key || 2*len(s.sib.parent) != open {
		return nil
	}
	return s.sib
}

// latticeHead is the class holder's head of its down message ds (in the
// clear) to table i on edge e, and the summary whose entries it
// encrypts: all of them, or with params.reuse past a tree's first level
// and for a table of at most reuseColumns numeric columns, those it
// cannot re-use (lattice_reuse.go).
func (r *levelRun) latticeHead(i, e int, ds *DownSummary, nodes []int, bins int) (latticeMsg, *DownSummary) {
	s := r.s
	head := latticeMsg{Edge: e, Values: ds.Values, Combos: make([][]string, len(ds.Entries)), Bins: bins}
	for v, es := range ds.Entries {
		for _, en := range es {
			head.Combos[v] = append(head.Combos[v], en.Combo)
		}
	}
	if !s.prm.Reuse || numericCount(s.g, i) > reuseColumns {
		return head, ds
	}
	if r.a.Depth == 0 {
		head.First, s.lfirst[e] = true, &holderFirst{tree: r.a.Tree, ds: cloneSummary(*ds)}
		return head, ds
	}
	f := s.lfirst[e]
	if f == nil || f.tree != r.a.Tree {
		return head, ds // restarted within the tree: everything afresh
	}
	at, refs, fresh := markLattice(f.ds, ds, nodes)
	if !slices.ContainsFunc(at, func(y int) bool { return y >= 0 }) {
		return head, ds // nothing to re-use (every entry's rows part between nodes)
	}
	head.At, head.Refs, head.Kept = at, refs, len(nodes)
	return head, &fresh
}

// latticeSums runs steps 1 to 3 at this party.
func (r *levelRun) latticeSums(ctx context.Context) error {
	s := r.s
	plan, decryptors, err := s.latticePlan()
	if err != nil {
		return err
	}
	if s.isHolder() {
		return r.latticeHolder(ctx, plan, decryptors)
	}
	for _, i := range s.own {
		if err := r.latticeTable(ctx, i, plan, decryptors); err != nil {
			return err
		}
	}
	if !slices.Contains(decryptors, s.p.Self()) {
		return nil
	}
	for i := 1; i < len(s.g.Tables); i++ {
		if s.owns(i) || s.g.Tables[i].Party == s.g.Tables[0].Party || numericCount(s.g, i) == 0 {
			continue
		}
		nodes, cts, _, err := r.receiveBins(ctx, i)
		if err != nil {
			return err
		}
		if err := r.latticeShare(ctx, i, plan, nodes, cts); err != nil {
			return err
		}
	}
	return nil
}

// latticeHolder is the class holder's part: its own tables' sums in the
// clear, the others' down messages encrypted, their bin sums opened.
func (r *levelRun) latticeHolder(ctx context.Context, plan *lattice.Plan, decryptors []string) error {
	s := r.s
	pk := s.lkeys.PublicKey
	out, own := s.locals[0].RootDown(r.groups, r.k, r.gv)
	r.plain[0] = own
	open := s.holder.Open()
	sib := s.siblingsFor(r.key, open)
	nodes := make([]int, 0, open) // the open nodes summed under encryption
	for k := range open {
		if sib == nil || k%2 == 0 {
			nodes = append(nodes, k)
		}
	}
	zeros := s.latticeZeros()
	pauseZeros(zeros)         // the cores for the class holder's own encryptions
	sent := map[int][]int{}   // by table: the layouts' node counts of its bin sums
	summed := map[int][]int{} // by table: the summed nodes those layouts hold, in order
	for j, e := range s.g.Tables[0].Children {
		i := e + 1
		if s.owns(i) {
			_, bins, err := s.locals[i].Down(PlainRing{}, out[j], r.kids[i])
			if err != nil {
				return err
			}
			r.plain[i], _ = Open(bins, OpenPlain)
			continue
		}
		if numericCount(s.g, i) == 0 {
			continue
		}
		bins := s.tableBins(i)
		head, fresh := r.latticeHead(i, e, &out[j], nodes, bins)
		if n := entryCount(fresh); n > 0 {
			head.Nodes = layoutNodes(pk.Params, bins, len(nodes), n, s.layoutCap)
		}
		sent[i], summed[i] = summedLayouts(head.Nodes, head.Kept, nodes)
		down, err := newLatticeDown(pk, zeros, *fresh, &head, nodes, bins)
		if err != nil {
			return err
		}
		if err := s.sendLatticeEach(ctx, r.step, fmt.Sprintf("ldown/%d", e), s.g.Tables[i].Party, TypeLatticeDown, head,
			down.count, s.downPart, down.encrypt, wire.DiscloseCiphertext); err != nil {
			return err
		}
	}
	resumeZeros(zeros) // the down messages are out: fill while the others sum
	for _, e := range s.g.Tables[0].Children {
		if i := e + 1; !s.owns(i) && numericCount(s.g, i) > 0 {
			if err := r.latticeOpen(ctx, i, open, summed[i], sent[i], plan, decryptors); err != nil {
				return err
			}
			fillFirstBins(r.plain[i], nodes, s.holder.Totals)
			if sib != nil {
				sib.subtract(r.plain[i], sib.sums[i])
			}
		}
	}
	return nil
}
