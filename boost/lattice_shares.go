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
// holder (lattice_job.go, steps 2 and 3). Each group's bin sums in each
// layout are one ciphertext and a target of their own (context
// boost-bins/TABLE/LAYOUT/GROUP), so that every encoding that travels is
// one ciphertext or one share, whatever the number of groups.

// latticeTable is the party's step 2 for its table i: it receives the
// class holder's down message, sums every group of columns per layout
// (and per re-used node: lattice_reuse.go), and sends the sums to the
// class holder and the other decryptors; a decryptor itself, it sends the
// class holder its own shares.
func (r *levelRun) latticeTable(ctx context.Context, i int, plan *lattice.Plan, decryptors []string) error {
	s := r.s
	l := s.locals[i]
	e := s.g.Tables[i].Parent
	holder := s.g.Tables[0].Party
	if len(l.feats) == 0 {
		return nil
	}
	if err := s.finishKept(i); err != nil { // an earlier level's file, written since
		return err
	}
	bins := s.tableBins(i)
	zeros := s.latticeZeros()
	resumeZeros(zeros) // fill while the class holder encrypts (lattice_zeros.go)
	ds, m, all, kw, parts, err := r.receiveDown(ctx, i, zeros, bins)
	pauseZeros(zeros) // the cores for the party's own sums
	if err != nil {
		return err
	}
	if m.First {
		s.lkept[i] = &latticeKept{tree: r.a.Tree, values: kw.values, cts: slices.Clone(all)} // sumLayouts clears all
	}
	var sums []*rlwe.Ciphertext
	if parts != nil {
		sums, err = parts.finish() // summed as the parts came (lattice_pipe.go)
	} else {
		sums, err = r.tableSums(i, zeros, bins, &ds, m, all)
	}
	if kw != nil && err != nil {
		return kw.finish(err)
	}
	if kw != nil {
		// Needed only after a restart: made durable while the level goes
		// on, finished by the table's next lattice sums or Close.
		s.kpending[i] = kw
	}
	if err != nil {
		return err
	}
	all = nil
	counts, _ := summedLayouts(m.Nodes, m.Kept, nil)
	to := []string{holder}
	for _, q := range decryptors {
		if q != holder && q != s.p.Self() {
			to = append(to, q)
		}
	}
	head := latticeMsg{Edge: e, Nodes: counts, Bins: bins, Groups: len(sums) / max(len(counts), 1)}
	each := func(lo, hi int) ([]*rlwe.Ciphertext, error) { return sums[lo:hi], nil }
	for _, q := range to {
		h := head
		if q == holder {
			h.Cols = l.colBins() // where each column's sums lie, to the class holder alone
		}
		if err := s.sendLatticeEach(ctx, r.step, fmt.Sprintf("lbins/%d", e), q, TypeLatticeBins, h, len(sums), partBytes, each, wire.DiscloseCiphertext); err != nil {
			return err
		}
	}
	if slices.Contains(decryptors, s.p.Self()) {
		return r.latticeShare(ctx, i, plan, counts, perLayout(sums, len(counts)))
	}
	return nil
}

// receiveDown receives the class holder's down message to table i: its
// entries (without sums), its head (Part: the entries its layouts hold)
// and its ciphertexts decoded; at a tree's first level with the writer
// that streams them into the job scratch as they come (lattice_reuse.go),
// which the caller finishes. A message of one layout and no re-used
// entries is summed as its parts come (lattice_pipe.go): then it returns
// the sums under way, whose masks take from zeros, and the ciphertexts
// only at a tree's first level, where they are kept.
func (r *levelRun) receiveDown(ctx context.Context, i int, zeros *lattice.ZeroPool, bins int) (DownSummary, *latticeMsg, []*rlwe.Ciphertext, *keptWriter, *partSums, error) {
	s := r.s
	pk := s.lkeys.PublicKey
	e := s.g.Tables[i].Parent
	var (
		ds    DownSummary
		n     int
		all   []*rlwe.Ciphertext
		kw    *keptWriter
		parts *partSums
		first bool
	)
	m, err := s.receiveLattice(ctx, r.step, fmt.Sprintf("ldown/%d", e), s.g.Tables[0].Party, TypeLatticeDown, e, func(m *latticeMsg) (int, error) {
		var want int
		var herr error
		ds, n, want, herr = s.locals[i].latticeHead(pk, bins, m)
		if herr == nil {
			herr = s.withinIntersection(s.shared[e], e, ds.Values)
		}
		if herr == nil && m.First {
			kw = s.startKept(i, r.a.Tree, entryValues(&ds), want)
		}
		if herr == nil && pipelined(m) {
			parts, herr = r.startParts(i, zeros, bins, m.Nodes[0], len(m.Nodes), ds)
		}
		first = m.First
		return want, herr
	}, func(c [][]byte) error {
		cts, err := decodeEach(pk, c)
		if parts == nil || first {
			all = append(all, cts...)
		}
		if err == nil && kw != nil {
			err = kw.write(c)
		}
		if err == nil && parts != nil {
			// The party's own products, on its cores: the filler waits
			// for them and fills again while the next part comes.
			pauseZeros(zeros)
			err = parts.add(cts)
			resumeZeros(zeros)
		}
		return err
	})
	if err != nil {
		if kw != nil {
			err = kw.finish(err)
		}
		return DownSummary{}, nil, nil, nil, nil, err
	}
	m.Part = n
	return ds, m, all, kw, parts, nil
}

// startParts returns table i's sums, under way, of a down message of sets
// layouts of nodes nodes a slot over ds's entries (none re-used).
func (r *levelRun) startParts(i int, zeros *lattice.ZeroPool, bins, nodes, sets int, ds DownSummary) (*partSums, error) {
	l := r.s.locals[i]
	entries, err := l.entryRows(ds)
	if err != nil {
		return nil, err
	}
	r.s.keepWeights(l)
	return newPartSums(r.s.lkeys.PublicKey, zeros, bins, nodes, sets, l, entries)
}

// tableSums is table i's sums of a down message (m its head, all its
// ciphertexts): every layout's, then every re-used node's, group by
// group.
func (r *levelRun) tableSums(i int, zeros *lattice.ZeroPool, bins int, ds *DownSummary, m *latticeMsg, all []*rlwe.Ciphertext) ([]*rlwe.Ciphertext, error) {
	s := r.s
	l := s.locals[i]
	entries, err := l.entryRows(*ds)
	if err != nil {
		return nil, err
	}
	s.keepWeights(l)
	sums, err := sumLayouts(s.lkeys.PublicKey, zeros, bins, m.Nodes, m.Part, l, freshOnly(entries, m.At), all)
	if err != nil || m.Kept == 0 {
		return sums, err
	}
	return r.addKept(i, zeros, bins, ds, entries, m, sums)
}

// addKept appends to sums table i's sums of the down message's re-used
// entries (m: its head), from the tree's kept first-level chunks.
func (r *levelRun) addKept(i int, zeros *lattice.ZeroPool, bins int, ds *DownSummary, entries [][]rowCount, m *latticeMsg, sums []*rlwe.Ciphertext) ([]*rlwe.Ciphertext, error) {
	k, err := r.s.keptFirst(i, r.a.Tree)
	if err != nil {
		return nil, err
	}
	ks, err := sumKept(r.s.lkeys.PublicKey, zeros, bins, r.s.locals[i], ds, entries, m, k)
	return append(sums, ks...), err
}

// entryValues is each entry's join value, entry by entry.
func entryValues(ds *DownSummary) []string {
	var out []string
	for v, es := range ds.Entries {
		for range es {
			out = append(out, ds.Values[v])
		}
	}
	return out
}

// keepWeights gives table l the party's budget of kept Ws, made under
// the node's cap at the first lattice sums of the job.
func (s *session) keepWeights(l *Local) {
	if !s.keptMade {
		s.kept, s.keptMade = newKeptWeights(s.cacheBytes), true
	}
	l.keepWeights(s.kept)
}

// latticeHead checks the head of a lattice down message to the table
// (part 0, from a peer) against the table and the bins the log commits
// for its party, and returns it as a DownSummary without sums, the number
// of entries its layouts hold (the fresh ones: lattice_reuse.go) and how
// many ciphertexts they take.
func (l *Local) latticeHead(pk *lattice.PublicKey, bins int, m *latticeMsg) (DownSummary, int, int, error) {
	e := l.g.Tables[l.ti].Parent
	bad := fmt.Errorf("%w: the lattice gradient sums on edge %s", ErrWire, l.g.EdgeName(e))
	if len(m.Combos) != len(m.Values) || len(m.Nodes) > maxWidth || l.maxBins() > bins {
		return DownSummary{}, 0, 0, bad
	}
	if m.Bins != bins {
		return DownSummary{}, 0, 0, fmt.Errorf("%w: not laid out for the bins the log commits", bad)
	}
	ds := DownSummary{Edge: e, Values: m.Values, Entries: make([][]DownEntry, len(m.Combos))}
	n := 0
	for v, cs := range m.Combos {
		for _, c := range cs {
			ds.Entries[v] = append(ds.Entries[v], DownEntry{Combo: c})
		}
		n += len(cs)
	}
	if !m.checkMarks(n) {
		return DownSummary{}, 0, 0, fmt.Errorf("%w: its re-use marks do not fit its entries", bad)
	}
	if m.At != nil {
		n = 0 // the fresh entries, which the layouts hold
		for _, y := range m.At {
			if y == atFresh {
				n++
			}
		}
	}
	want := 0
	for _, k := range m.Nodes {
		lay, err := lattice.NewNodeBinLayout(pk.Params, bins, k)
		if err != nil {
			return DownSummary{}, 0, 0, bad
		}
		want += lay.Chunks(n)
	}
	return ds, n, want, nil
}

// perLayout cuts a list of ciphertexts, layout by layout, into layouts.
func perLayout(cts []*rlwe.Ciphertext, layouts int) [][]*rlwe.Ciphertext {
	out := make([][]*rlwe.Ciphertext, layouts)
	f := len(cts) / max(layouts, 1)
	for g := range out {
		out[g] = cts[g*f : (g+1)*f]
	}
	return out
}

// receiveBins receives table i's bin sums from its party: the layouts'
// node counts and, per layout, one ciphertext per group of columns; at the
// class holder also the columns' packing (lattice_pack.go), from the bins
// of every numeric column the party names to it alone.
func (r *levelRun) receiveBins(ctx context.Context, i int) ([]int, [][]*rlwe.Ciphertext, *colPack, error) {
	s := r.s
	e := s.g.Tables[i].Parent
	f := numericCount(s.g, i)
	var pack *colPack
	m, err := s.receiveLattice(ctx, r.step, fmt.Sprintf("lbins/%d", e), s.g.Tables[i].Party, TypeLatticeBins, e, func(m *latticeMsg) (int, error) {
		bad := fmt.Errorf("%w: the lattice bin sums of table %q", ErrWire, s.g.Tables[i].Name)
		if len(m.Nodes) > maxWidth || m.Groups < 1 || m.Groups > max(f, 1) {
			return 0, bad
		}
		if m.Bins != s.tableBins(i) {
			return 0, fmt.Errorf("%w are not laid out for the bins the log commits", bad)
		}
		if s.isHolder() {
			if len(m.Cols) != f {
				return 0, fmt.Errorf("%w do not name the bins of each of its %d numeric columns", bad, f)
			}
			p, err := packColumns(m.Cols, m.Bins)
			if err != nil || p.groups != m.Groups {
				return 0, fmt.Errorf("%w: the bins of its columns do not fit its layouts", bad)
			}
			pack = &p
		} else if m.Cols != nil {
			return 0, fmt.Errorf("%w name its columns' bins to a decryptor", bad)
		}
		return len(m.Nodes) * m.Groups, nil
	}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	cts, err := decodeEach(s.lkeys.PublicKey, m.C)
	if err != nil {
		return nil, nil, nil, err
	}
	return m.Nodes, perLayout(cts, len(m.Nodes)), pack, nil
}

// binTargets names table i's bin sums of every layout (nodes) and group
// of columns: by layout, by group.
func (r *levelRun) binTargets(i int, nodes []int, cts [][]*rlwe.Ciphertext) ([]*lattice.BinLayout, [][]*lattice.Target, error) {
	s := r.s
	pk := s.lkeys.PublicKey
	maker := pk.Point(s.g.Tables[i].Party)
	lays := make([]*lattice.BinLayout, len(nodes))
	ts := make([][]*lattice.Target, len(nodes))
	for g, n := range nodes {
		var err error
		if lays[g], err = lattice.NewNodeBinLayout(pk.Params, s.tableBins(i), n); err != nil {
			return nil, nil, fmt.Errorf("%w: the lattice bin sums of table %q", ErrWire, s.g.Tables[i].Name)
		}
		for f, ct := range cts[g] {
			t, err := lattice.NewBinTarget(pk, r.latticeContext(i, g, f), maker, lays[g], []*rlwe.Ciphertext{ct})
			if err != nil {
				return nil, nil, err
			}
			ts[g] = append(ts[g], t)
		}
	}
	return lays, ts, nil
}

// latticeShare is a decryptor's step 3 for table i's bin sums (as their
// maker sent them): its decryption shares of each layout's and group's,
// one per quorum it is in, to the class holder.
func (r *levelRun) latticeShare(ctx context.Context, i int, plan *lattice.Plan, nodes []int, cts [][]*rlwe.Ciphertext) error {
	s := r.s
	_, ts, err := r.binTargets(i, nodes, cts)
	if err != nil {
		return err
	}
	var targets []*lattice.Target // layout by layout, group by group
	for _, tl := range ts {
		targets = append(targets, tl...)
	}
	quorums := plan.QuorumsOf(s.lkeys.PublicKey.Point(s.p.Self()))
	c := make([][]byte, len(targets)*len(quorums)) // target by target, quorum by quorum
	err = onCores(len(targets), func() (func(int) error, error) {
		d, err := lattice.NewDecryptor(s.lkeys) // a worker's: its scratch and smudging stream
		if err != nil {
			return nil, err
		}
		return func(k int) error {
			for x, q := range quorums {
				sh, err := d.GenShare(targets[k], plan, q)
				if err != nil {
					return err
				}
				if c[k*len(quorums)+x], err = sh.MarshalBinary(); err != nil {
					return err
				}
			}
			return nil
		}, nil
	})
	if err != nil {
		return err
	}
	e := s.g.Tables[i].Parent
	return s.sendLattice(ctx, r.step, fmt.Sprintf("lshare/%d", e), s.g.Tables[0].Party, TypeLatticeShare, latticeMsg{Edge: e}, c, wire.DiscloseDecryptionShare)
}

// latticeOpen is the class holder's step 3 for table i: it receives the
// bin sums (in the layouts sent, the node counts of its down message), folds the decryptors' shares (its own among them if it is
// one) and reads the summed nodes' sums of every bin into r.plain[i].
func (r *levelRun) latticeOpen(ctx context.Context, i, open int, summed, sent []int, plan *lattice.Plan, decryptors []string) error {
	s := r.s
	pk := s.lkeys.PublicKey
	nodes, cts, pack, err := r.receiveBins(ctx, i)
	if err != nil {
		return err
	}
	if !slices.Equal(nodes, sent) {
		return fmt.Errorf("%w: the lattice bin sums of table %q are not in the level's layouts", ErrWire, s.g.Tables[i].Name)
	}
	lays, ts, err := r.binTargets(i, nodes, cts)
	if err != nil {
		return err
	}
	// The openings, layout by layout, group by group, each with the class
	// holder's own shares if it decrypts: made apart, on every core.
	type target struct{ g, f int }
	var at []target
	for g := range ts {
		for f := range ts[g] {
			at = append(at, target{g, f})
		}
	}
	ops := make([]*lattice.BinOpening, len(at))
	own := slices.Contains(decryptors, s.p.Self())
	err = onCores(len(at), func() (func(int) error, error) {
		var d *lattice.Decryptor // a worker's, as latticeShare's
		if own {
			var err error
			if d, err = lattice.NewDecryptor(s.lkeys); err != nil {
				return nil, err
			}
		}
		return func(k int) error {
			g, f := at[k].g, at[k].f
			o, err := lattice.NewBinOpening(pk, lays[g], plan, ts[g][f], []*rlwe.Ciphertext{cts[g][f]})
			if err == nil && own {
				err = r.ownShare(d, o, ts[g][f], plan)
			}
			ops[k] = o
			return err
		}, nil
	})
	if err != nil {
		return err
	}
	for _, q := range decryptors {
		if q == s.p.Self() {
			continue
		}
		if err := r.takeShares(ctx, q, i, plan, ops); err != nil {
			return err
		}
	}
	return r.readOpened(i, open, summed, pack, ops)
}

// ownShare adds the class holder's own decryption shares, made by d, one
// per quorum it is in, to an opening.
func (r *levelRun) ownShare(d *lattice.Decryptor, o *lattice.BinOpening, t *lattice.Target, plan *lattice.Plan) error {
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
// folds them into the openings (layout by layout, group by group).
func (r *levelRun) takeShares(ctx context.Context, q string, i int, plan *lattice.Plan, ops []*lattice.BinOpening) error {
	s := r.s
	e := s.g.Tables[i].Parent
	per := len(plan.QuorumsOf(s.lkeys.PublicKey.Point(q))) // shares per opening
	m, err := s.receiveLattice(ctx, r.step, fmt.Sprintf("lshare/%d", e), q, TypeLatticeShare, e, func(*latticeMsg) (int, error) {
		return per * len(ops), nil
	}, nil)
	if err != nil {
		return err
	}
	for k, o := range ops {
		for _, raw := range m.C[k*per : (k+1)*per] {
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
// every bin into r.plain[i], in their open nodes' slots (the bins the log
// commits for the table's party per column: the bins a column does not
// have hold zeros and never win a split; bin 0 is fillFirstBins'). ops
// are by layout, then group of columns (pack).
func (r *levelRun) readOpened(i, open int, summed []int, pack *colPack, ops []*lattice.BinOpening) error {
	s := r.s
	f, bins := numericCount(s.g, i), s.tableBins(i)
	out := make(BinSums, f)
	for x := range out {
		out[x] = make([]Vec, bins)
		for b := range out[x] {
			out[x][b] = make(Vec, 2*open)
		}
	}
	// Each opening decrypts apart, on every core: the level's other
	// parties wait for its split.
	type opened struct{ gs, hs [][]int64 }
	sums := make([]opened, len(ops))
	err := onCores(len(ops), func() (func(int) error, error) {
		return func(k int) error {
			gs, hs, v, err := ops[k].Open()
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
			sums[k] = opened{gs, hs}
			return nil
		}, nil
	})
	if err != nil {
		return err
	}
	k0 := 0
	for l := 0; l < len(ops)/pack.groups; l++ {
		n := ops[l*pack.groups].Nodes()
		for g := range pack.groups {
			o := sums[l*pack.groups+g]
			pack.unpack(out, g, o.gs[0], o.hs[0], summed[k0:k0+n]) // a node's fresh and re-used sums add
		}
		k0 += n
	}
	r.plain[i] = out
	return nil
}
