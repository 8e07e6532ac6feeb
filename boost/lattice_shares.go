package boost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// The lattice path's bin sums and their decryption towards the class
// holder (lattice_job.go, steps 2 and 3).

// latticeTable is the party's step 2 for its table i: it receives the
// class holder's down message, sums every column per layout, and sends
// the sums to the class holder and the quorum's other members; in the
// quorum itself, it sends the class holder its own shares.
func (r *levelRun) latticeTable(ctx context.Context, i int, plan *lattice.Plan, quorum []string) error {
	s := r.s
	pk := s.lkeys.PublicKey
	l := s.locals[i]
	e := s.g.Tables[i].Parent
	holder := s.g.Tables[0].Party
	if len(l.feats) == 0 {
		return nil
	}
	b, err := s.receive(ctx, r.step.Sub(fmt.Sprintf("ldown/%d", e)), holder, TypeLatticeDown)
	if err != nil {
		return err
	}
	var m latticeDownMsg
	if err := wire.Unmarshal(b, &m); err != nil || m.Edge != e || len(m.Combos) != len(m.Values) || len(m.C) != len(m.Nodes) {
		return fmt.Errorf("%w: the lattice gradient sums on edge %s", ErrWire, s.g.EdgeName(e))
	}
	ds := DownSummary{Edge: e, Values: m.Values, Entries: make([][]DownEntry, len(m.Combos))}
	n := 0
	for v, cs := range m.Combos {
		for _, c := range cs {
			ds.Entries[v] = append(ds.Entries[v], DownEntry{Combo: c})
			n++
		}
	}
	entries, err := l.entryRows(ds)
	if err != nil {
		return err
	}
	out := latticeBinsMsg{Edge: e, Nodes: m.Nodes}
	for g, nodes := range m.Nodes {
		lay, err := lattice.NewNodeBinLayout(pk.Params, s.prm.Bins, nodes)
		if err != nil || l.maxBins() > s.prm.Bins {
			return fmt.Errorf("%w: the lattice gradient sums on edge %s do not fit params.bins", ErrWire, s.g.EdgeName(e))
		}
		chunks := lay.Chunks(n)
		cts, err := pk.Params.UnmarshalCiphertexts(m.C[g], chunks)
		if err != nil || len(cts) != chunks {
			return fmt.Errorf("%w: the lattice gradient sums on edge %s", ErrWire, s.g.EdgeName(e))
		}
		sums, err := sumColumns(pk, lay, l, entries, cts)
		if err != nil {
			return err
		}
		c, err := pk.Params.MarshalCiphertexts(sums)
		if err != nil {
			return err
		}
		out.C = append(out.C, c)
	}
	to := []string{holder}
	for _, q := range quorum {
		if q != holder && q != s.p.Self() {
			to = append(to, q)
		}
	}
	for _, q := range to {
		if err := s.send(ctx, r.step.Sub(fmt.Sprintf("lbins/%d", e)), q, TypeLatticeBins, &out, wire.DiscloseCiphertext); err != nil {
			return err
		}
	}
	if slices.Contains(quorum, s.p.Self()) {
		bb, err := wire.Marshal(&out)
		if err != nil {
			return err
		}
		return r.latticeShare(ctx, i, plan, bb)
	}
	return nil
}

// latticeBinsOf decodes table i's bin sums, layout by layout: exactly one
// ciphertext per numeric column in each.
func (r *levelRun) latticeBinsOf(i int, b []byte) ([]int, [][]*rlwe.Ciphertext, error) {
	s := r.s
	pk := s.lkeys.PublicKey
	e := s.g.Tables[i].Parent
	bad := fmt.Errorf("%w: the lattice bin sums of table %q", ErrWire, s.g.Tables[i].Name)
	var m latticeBinsMsg
	if err := wire.Unmarshal(b, &m); err != nil || m.Edge != e || len(m.C) != len(m.Nodes) || len(m.C) > maxWidth {
		return nil, nil, bad
	}
	f := numericCount(s.g, i)
	out := make([][]*rlwe.Ciphertext, len(m.C))
	for g, c := range m.C {
		cts, err := pk.Params.UnmarshalCiphertexts(c, f)
		if err != nil || len(cts) != f {
			return nil, nil, bad
		}
		out[g] = cts
	}
	return m.Nodes, out, nil
}

// latticeShare is a decryptor's step 3 for table i's bin sums (b, as
// their maker sent them): its decryption share of each layout's, to the
// class holder.
func (r *levelRun) latticeShare(ctx context.Context, i int, plan *lattice.Plan, b []byte) error {
	s := r.s
	pk := s.lkeys.PublicKey
	nodes, cts, err := r.latticeBinsOf(i, b)
	if err != nil {
		return err
	}
	d, err := lattice.NewDecryptor(s.lkeys)
	if err != nil {
		return err
	}
	maker := pk.Point(s.g.Tables[i].Party)
	msg := latticeShareMsg{Edge: s.g.Tables[i].Parent}
	for g, n := range nodes {
		lay, err := lattice.NewNodeBinLayout(pk.Params, s.prm.Bins, n)
		if err != nil {
			return fmt.Errorf("%w: the lattice bin sums of table %q", ErrWire, s.g.Tables[i].Name)
		}
		t, err := lattice.NewBinTarget(pk, r.latticeContext(i, g), maker, lay, cts[g])
		if err != nil {
			return err
		}
		for _, q := range plan.QuorumsOf(pk.Point(s.p.Self())) {
			sh, err := d.GenShare(t, plan, q)
			if err != nil {
				return err
			}
			sb, err := sh.MarshalBinary()
			if err != nil {
				return err
			}
			msg.S = append(msg.S, sb)
		}
	}
	return s.send(ctx, r.step.Sub(fmt.Sprintf("lshare/%d", msg.Edge)), s.g.Tables[0].Party, TypeLatticeShare, &msg, wire.DiscloseDecryptionShare)
}

// latticeOpen is the class holder's step 3 for table i: it receives the
// bin sums, folds the quorum's shares (its own among them if it is in
// the quorum) and reads every open node's and bin's sums into r.plain[i].
func (r *levelRun) latticeOpen(ctx context.Context, i, open int, summed []int, plan *lattice.Plan, quorum []string) error {
	s := r.s
	pk := s.lkeys.PublicKey
	e := s.g.Tables[i].Parent
	maker := s.g.Tables[i].Party
	b, err := s.receive(ctx, r.step.Sub(fmt.Sprintf("lbins/%d", e)), maker, TypeLatticeBins)
	if err != nil {
		return err
	}
	nodes, cts, err := r.latticeBinsOf(i, b)
	if err != nil {
		return err
	}
	if !slices.Equal(nodes, latticeGroups(pk, len(summed), s.prm.Bins)) {
		return fmt.Errorf("%w: the lattice bin sums of table %q are not in the level's layouts", ErrWire, s.g.Tables[i].Name)
	}
	ops := make([]*lattice.BinOpening, len(nodes))
	lays := make([]*lattice.BinLayout, len(nodes))
	for g, n := range nodes {
		if lays[g], err = lattice.NewNodeBinLayout(pk.Params, s.prm.Bins, n); err != nil {
			return err
		}
		t, err := lattice.NewBinTarget(pk, r.latticeContext(i, g), pk.Point(maker), lays[g], cts[g])
		if err != nil {
			return err
		}
		if ops[g], err = lattice.NewBinOpening(pk, lays[g], plan, t, cts[g]); err != nil {
			return err
		}
		if slices.Contains(quorum, s.p.Self()) {
			if err := r.ownShare(ops[g], t, plan); err != nil {
				return err
			}
		}
	}
	for _, q := range quorum {
		if q == s.p.Self() {
			continue
		}
		if err := r.takeShares(ctx, q, i, plan, ops); err != nil {
			return err
		}
	}
	return r.readOpened(i, open, summed, ops)
}

// ownShare adds the class holder's own decryption shares, one per quorum
// it is in, to an opening.
func (r *levelRun) ownShare(o *lattice.BinOpening, t *lattice.Target, plan *lattice.Plan) error {
	d, err := lattice.NewDecryptor(r.s.lkeys)
	if err != nil {
		return err
	}
	for _, q := range plan.QuorumsOf(r.s.lkeys.PublicKey.Point(r.s.p.Self())) {
		sh, err := d.GenShare(t, plan, q)
		if err != nil {
			return err
		}
		if err := o.Add(sh); err != nil {
			return err
		}
	}
	return nil
}

// takeShares receives decryptor q's shares of table i's bin sums and
// folds them into the openings.
func (r *levelRun) takeShares(ctx context.Context, q string, i int, plan *lattice.Plan, ops []*lattice.BinOpening) error {
	s := r.s
	e := s.g.Tables[i].Parent
	b, err := s.receive(ctx, r.step.Sub(fmt.Sprintf("lshare/%d", e)), q, TypeLatticeShare)
	if err != nil {
		return err
	}
	per := len(plan.QuorumsOf(s.lkeys.PublicKey.Point(q))) // shares per layout
	var m latticeShareMsg
	if err := wire.Unmarshal(b, &m); err != nil || m.Edge != e || len(m.S) != per*len(ops) {
		return fmt.Errorf("%w: the decryption shares of party %s", ErrWire, q)
	}
	for g, o := range ops {
		for _, raw := range m.S[g*per : (g+1)*per] {
			sh := o.AllocateShare()
			if err := sh.UnmarshalBinary(raw); err != nil {
				return fmt.Errorf("%w: the decryption shares of party %s: %w", ErrWire, q, err)
			}
			if err := o.Add(sh); err != nil {
				return fmt.Errorf("the decryption shares of party %s: %w", q, err)
			}
		}
	}
	return nil
}

// readOpened opens table i's bin sums and puts the summed nodes' sums of
// every bin into r.plain[i], in their open nodes' slots (params.bins bins
// per column: the bins a column does not have hold zeros and never win a
// split).
func (r *levelRun) readOpened(i, open int, summed []int, ops []*lattice.BinOpening) error {
	s := r.s
	f, bins := numericCount(s.g, i), s.prm.Bins
	out := make(BinSums, f)
	for x := range out {
		out[x] = make([]Vec, bins)
		for b := range out[x] {
			out[x][b] = make(Vec, 2*open)
		}
	}
	k0 := 0
	for _, o := range ops {
		gs, hs, v, err := o.Open()
		if errors.Is(err, lattice.ErrDisagree) {
			var who []string
			for _, p := range v.Suspects {
				who = append(who, s.lkeys.PublicKey.Members[p-1])
			}
			return fmt.Errorf("the bin sums of table %q: a decryption share was wrong, made by one of %s: %w", s.g.Tables[i].Name, strings.Join(who, ", "), err)
		}
		if err != nil {
			return fmt.Errorf("the bin sums of table %q: %w", s.g.Tables[i].Name, err)
		}
		n := o.Nodes()
		for x := range out {
			for b := range out[x] {
				for k, node := range summed[k0 : k0+n] {
					out[x][b][2*node] = gs[x][k*bins+b]
					out[x][b][2*node+1] = hs[x][k*bins+b]
				}
			}
		}
		k0 += n
	}
	r.plain[i] = out
	return nil
}
