package boost

// The lattice path (docs/boost.md, "The lattice path"): the bin sums of a
// table joined directly to the class holder's are computed under the
// consortium's lattice key by plaintext products (package lattice,
// binsums.go) instead of Paillier additions. At each level the class
// holder encrypts its down message to the table, one row of a
// lattice.BinLayout per entry (join value, combo of the table's
// signatures) in the message's order, every open node's gradient and
// hessian sum in the entry's slot (so the table cannot tell the nodes
// apart); the table, for each group of its columns (lattice_pack.go),
// multiplies every chunk by the plaintext that puts, for each entry, the
// number of join rows of each bin it forms with the entry (several bins
// per entry: the entry stands for a join value, which may match rows of
// the table in several bins), masks the product and has it decrypted
// towards the class holder, who reads every node's and bin's sums of the
// group's columns. One product per chunk and group gives every bin of
// every open node.
//
// Only stars: every other table's parent is the class holder's table and
// it has no children. A table further out would receive its sums from its
// parent, which would have to turn the class holder's layout (one row per
// entry on the edge above it) into one per entry on the edge below,
// adding each of its rows' entries into the right rows: a linear map of
// the ciphertext's coefficients that no plaintext product performs
// (it needs automorphisms and key switching, with evaluation keys the
// consortium does not generate). TrainLattice refuses such a join
// (ErrLatticeStar); the Paillier path trains it.

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/table"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// ErrLatticeStar: the lattice path needs every table joined directly to
// the class holder's (a star).
var ErrLatticeStar = errors.New("boost: the lattice path needs every table joined directly to the class holder's table")

// ErrLatticeRange: the gradient or hessian sums of the join's rows pass
// half the lattice plaintext modulus at boost's fixed point (too many join
// rows, or squared loss on large labels).
var ErrLatticeRange = errors.New("boost: the gradient sums pass the lattice plaintext modulus")

// LatticeOpen decrypts bin sums cts of layout l made by table t's party
// towards the class holder: per ciphertext, every node's and bin's
// gradient and hessian sums (lattice.BinLayout.Read's order).
type LatticeOpen func(t int, l *lattice.BinLayout, cts []*rlwe.Ciphertext) (g, h [][]int64, err error)

// LatticeCrypto is the lattice path's key and decryption.
type LatticeCrypto struct {
	PK   *lattice.PublicKey
	Open LatticeOpen
	// CacheBytes caps the Ws each party keeps (Kind.LatticeCacheBytes:
	// 0 the default, -1 none); the model does not depend on it.
	CacheBytes int64
	// Zeros, when set, is the class holder's pool of encryptions of zero
	// under PK (in the job, its node's: keyring.LatticeZeros): its
	// gradient encryptions take from it, it is paused while the class
	// holder encrypts and resumed while the other parties sum, so that it
	// fills between levels. Its owner closes it.
	Zeros *lattice.ZeroPool
	// maxNodes caps the open nodes of one layout (0: as many as fit), so
	// that a test can make a level take several layouts.
	maxNodes int
}

// CheckStar reports whether g is a star around the class holder's table,
// the joins the lattice path trains (ErrLatticeStar otherwise).
func CheckStar(g *joinprop.Graph) error {
	for i := 1; i < len(g.Tables); i++ {
		if g.Index(g.Edges[g.Tables[i].Parent].Parent) != 0 || len(g.Tables[i].Children) > 0 {
			return fmt.Errorf("%w: table %q is not", ErrLatticeStar, g.Tables[i].Name)
		}
	}
	return nil
}

// TrainLattice is TrainWith on the lattice path: the bin sums of every
// table but the class holder's computed under c's key by plaintext
// products and opened by c.Open. g must be a star (CheckStar).
func TrainLattice(g *joinprop.Graph, data map[string]*table.Table, p Params, c LatticeCrypto) (*Model, error) {
	m, _, err := trainLattice(g, data, p, c)
	return m, err
}

// trainLattice is TrainLattice, with each party's kept Ws.
func trainLattice(g *joinprop.Graph, data map[string]*table.Table, p Params, c LatticeCrypto) (*Model, map[string]*keptWeights, error) {
	if err := CheckStar(g); err != nil {
		return nil, nil, err
	}
	locals, pos, err := prepare(g, data, p)
	if err != nil {
		return nil, nil, err
	}
	kept := keepWeights(g, locals, c)
	h := NewHolder(p)
	var sib *siblings
	for !h.Done() {
		if sib, err = latticeLevel(g, locals, h, c, sib); err != nil {
			return nil, nil, err
		}
	}
	return model(h, locals, pos), kept, nil
}

// keepWeights gives every party of g one budget of kept Ws for its
// tables, as each party's node does in the job (session.keepWeights).
func keepWeights(g *joinprop.Graph, locals []*Local, c LatticeCrypto) map[string]*keptWeights {
	kept := map[string]*keptWeights{}
	for i, l := range locals {
		party := g.Tables[i].Party
		k, ok := kept[party]
		if !ok {
			k = newKeptWeights(c.CacheBytes)
			kept[party] = k
		}
		l.keepWeights(k)
	}
	return kept
}

// keepWeights makes k the table's budget of kept Ws (nil: none).
func (l *Local) keepWeights(k *keptWeights) {
	if k != nil && l.kept == nil {
		l.kept, l.wcol = k, k.table(len(l.feats))
	}
}

// siblings is the class holder's memory for XGBoost's subtraction trick
// (Chen and Guestrin, §3 and the hist method): a node's right child's bin
// sums are its own minus its left child's, so at every level but a
// tree's first only the left children's sums are computed under
// encryption, halving the products and the ciphertexts. The integer sums
// are exact, so the model is the same.
type siblings struct {
	parent []int     // by pair j of open nodes (2j, 2j+1): their parent's index the level before
	sums   []BinSums // by table: the level before's bin sums
}

// latticeLevel is level on the lattice path; sib is the level before's
// (nil at a tree's first level), and it returns this level's.
func latticeLevel(g *joinprop.Graph, locals []*Local, h *Holder, c LatticeCrypto, sib *siblings) (*siblings, error) {
	up, err := upAll(g, locals)
	if err != nil {
		return nil, err
	}
	groups, k, err := locals[0].Groups(childSums(g, 0, up))
	if err != nil {
		return nil, err
	}
	gv, err := h.Level(groups, locals[0].Labels())
	if err != nil || gv == nil {
		return nil, err
	}
	if err := checkLatticeRange(c.PK, groups, gv); err != nil {
		return nil, err
	}
	open := h.Open()
	nodes := make([]int, 0, open) // the nodes summed under encryption
	for i := 0; i < open; i++ {
		if sib == nil || i%2 == 0 {
			nodes = append(nodes, i)
		}
	}
	sums := make([]BinSums, len(g.Tables))
	ds, own := locals[0].RootDown(groups, k, gv)
	sums[0] = own
	for j, e := range g.Tables[0].Children {
		i := e + 1
		if sums[i], err = latticeBins(c, i, locals[i], ds[j], open, nodes); err != nil {
			return nil, err
		}
		fillFirstBins(sums[i], nodes, h.Totals)
		if sib != nil {
			sib.subtract(sums[i], sib.sums[i])
		}
	}
	decisions := h.Choose(sums)
	if len(decisions) == 0 {
		return nil, nil
	}
	next := &siblings{parent: make([]int, len(decisions)), sums: sums}
	ords := make([]int, len(decisions))
	for j, d := range decisions {
		next.parent[j] = d.Node
		ords[j] = locals[d.Table].Split(d.Feature, d.Bin)
	}
	h.Apply(decisions, ords)
	return next, nil
}

// subtract fills the right children's sums of a table's bins (odd open
// nodes) from their parents' (prev) and their left siblings'.
func (sib *siblings) subtract(bs, prev BinSums) {
	for f := range bs {
		for b := range bs[f] {
			v, pv := bs[f][b], prev[f][b]
			for j, p := range sib.parent {
				l, r := 2*j, 2*j+1
				v[2*r], v[2*r+1] = pv[2*p]-v[2*l], pv[2*p+1]-v[2*l+1]
			}
		}
	}
}

// checkLatticeRange checks that every sum the lattice path forms fits the
// plaintext modulus T as a signed value: any entry's and any bin's
// gradient or hessian sum is at most the sum over the join rows of its
// absolute value, Σ_groups |v|·count, which must stay below T/2 (logistic
// loss: |g| ≤ 1 and h ≤ 1/4 at FracBits, so about 2^26 join rows; squared
// loss with large labels sooner). Without the check a sum past T/2 would
// wrap and decrypt to another number.
func checkLatticeRange(pk *lattice.PublicKey, groups []Group, gv []Vec) error {
	half := pk.Params.PlaintextModulus() / 2
	for s := 0; s < 2; s++ { // gradients, hessians
		var acc uint64
		for k, gr := range groups {
			for i := s; i < len(gv[k]); i += 2 {
				v := gv[k][i]
				if v < 0 {
					v = -v
				}
				hi, lo := bits.Mul64(uint64(v), gr.Count)
				var carry uint64
				if acc, carry = bits.Add64(acc, lo, 0); hi != 0 || carry != 0 || acc >= half {
					return ErrLatticeRange
				}
			}
		}
	}
	return nil
}

// latticeBins is table t's bin sums from the class holder's down message
// ds on the lattice path for the given open nodes (of open; the others'
// sums are left zero): the class holder encrypts, the table sums and
// masks, c.Open decrypts towards the class holder. The layout has as
// many bins as the table's column with the most (binary columns: 2; the
// class holder learns every column's number of bins, as in the job),
// and as many nodes to a slot as it holds.
func latticeBins(c LatticeCrypto, t int, l *Local, ds DownSummary, open int, nodes []int) (BinSums, error) {
	if len(l.feats) == 0 {
		return nil, nil
	}
	bins := l.maxBins()
	entries, err := l.entryRows(ds)
	if err != nil {
		return nil, err
	}
	out := make(BinSums, len(l.feats))
	for f := range out {
		out[f] = make([]Vec, len(l.feats[f].Cuts)+1)
		for b := range out[f] {
			out[f][b] = make(Vec, 2*open)
		}
	}
	counts := layoutNodes(c.PK.Params, bins, len(nodes), len(entries), c.maxNodes)
	lays := make([]*lattice.BinLayout, len(counts))
	var all []*rlwe.Ciphertext // the layouts' ciphertexts, one after the other
	k0 := 0
	pauseZeros(c.Zeros) // the class holder's cores for its own encryptions
	for x, k := range counts {
		if lays[x], err = lattice.NewNodeBinLayout(c.PK.Params, bins, k); err != nil {
			return nil, err
		}
		cts, err := encryptEntries(c.PK, c.Zeros, lays[x], ds, nodes[k0:k0+k])
		if err != nil {
			return nil, err
		}
		all, k0 = append(all, cts...), k0+k
	}
	resumeZeros(c.Zeros) // while the other parties sum and decrypt
	sums, err := sumLayouts(c.PK, nil, bins, counts, len(entries), l, entries, all)
	if err != nil {
		return nil, err
	}
	pack, err := l.pack(bins)
	if err != nil {
		return nil, err
	}
	k0 = 0
	for x, lay := range lays {
		gs, hs, err := c.Open(t, lay, sums[x*pack.groups:(x+1)*pack.groups])
		if err != nil {
			return nil, err
		}
		if len(gs) != pack.groups || len(hs) != pack.groups {
			return nil, fmt.Errorf("boost: table %q: %d bin sums opened for %d groups of columns", l.name, len(gs), pack.groups)
		}
		for g := range pack.groups {
			pack.unpack(out, g, gs[g], hs[g], nodes[k0:k0+lay.Nodes()])
		}
		k0 += lay.Nodes()
	}
	return out, nil
}

// maxBins is the most bins of any of the table's columns.
func (l *Local) maxBins() int {
	b := 1
	for _, f := range l.feats {
		b = max(b, len(f.Cuts)+1)
	}
	return b
}

// rowCount is one of a table's rows and the join rows it forms with an
// entry of its parent's down message.
type rowCount struct {
	row   int
	count uint64
}

// entryRows lists, for each entry of ds (in order: values, then each
// value's entries), the table's rows that form join rows with it.
//
// A row finds its entry among its value's entries by its combo: by a scan
// of them, from the last (a combo named twice is its last entry), or
// through a map for a value of more than entryScan entries. On a9a's
// one-to-one edge a map per value and a slice per entry had been most of
// the time the table's party spends here at every level, before its sums
// can start.
func (l *Local) entryRows(ds DownSummary) ([][]rowCount, error) {
	pe := l.g.Tables[l.ti].Parent
	ek := l.edges[pe]
	if ds.Edge != pe || len(ds.Entries) != len(ds.Values) {
		return nil, fmt.Errorf("boost: table %q: down summary for edge %s does not fit", l.name, l.g.EdgeName(pe))
	}
	type entries struct{ lo, hi int } // a value's entries, numbered over all
	of := make([]entries, len(ek.Vals))
	var combos []string // by entry
	many := map[int]map[string]int{}
	f := newFinder(ek.Vals)
	for i, v := range ds.Values {
		j, ok := f.find(v)
		if !ok {
			return nil, fmt.Errorf("boost: table %q edge %s: the summary names a join value the table does not hold", l.name, l.g.EdgeName(pe))
		}
		of[j] = entries{len(combos), len(combos)}
		delete(many, j) // a value named twice: its last entries, as a map per value kept
		for _, e := range ds.Entries[i] {
			combos = append(combos, e.Combo)
		}
		of[j].hi = len(combos)
		if of[j].hi-of[j].lo > entryScan {
			m := map[string]int{}
			for e := of[j].lo; e < of[j].hi; e++ {
				m[combos[e]] = e
			}
			many[j] = m
		}
	}
	var hits []keyed[rowCount] // by entry, in row order
	k := make(kids, 0)
	for r := 0; r < l.n; r++ {
		j := int(ek.Row[r])
		es := of[j]
		if es.lo == es.hi {
			continue
		}
		l.eachCombo(r, k, func(parts []int) {
			c, cnt := l.combo(r, k, parts)
			e := -1
			if m, ok := many[j]; ok {
				if x, ok := m[c]; ok {
					e = x
				}
			} else {
				for x := es.hi - 1; x >= es.lo; x-- {
					if combos[x] == c {
						e = x
						break
					}
				}
			}
			if e >= 0 {
				hits = append(hits, keyed[rowCount]{e, rowCount{row: r, count: cnt}})
			}
		})
	}
	// Each entry's rows, in row order, as parts of one slice.
	flat, start := groupByKey(hits, len(combos))
	out := make([][]rowCount, len(combos))
	for e := range out {
		if start[e] < start[e+1] {
			out[e] = group(flat, start, e)
		}
	}
	return out, nil
}

// entryScan is the most entries of one join value entryRows scans for a
// row's combo; past it, a map.
const entryScan = 8

// encryptEntries is the class holder's: ds's entries' sums of the given
// open nodes in lay, encrypted on every core.
func encryptEntries(pk *lattice.PublicKey, zeros *lattice.ZeroPool, lay *lattice.BinLayout, ds DownSummary, nodes []int) ([]*rlwe.Ciphertext, error) {
	g, h, err := entrySums(ds, nodes)
	if err != nil {
		return nil, err
	}
	return encryptChunks(pk, zeros, lay, g, h, 0, lay.Chunks(len(g)/lay.Nodes()))
}

// entrySums is the class holder's: ds's entries' gradient and hessian
// sums of the given open nodes, entry by entry, node by node (the order
// EncryptPairs takes).
func entrySums(ds DownSummary, nodes []int) (g, h []int64, err error) {
	for _, es := range ds.Entries {
		for _, e := range es {
			v, ok := e.Sums.(Vec)
			if !ok || len(v) < 2*(nodes[len(nodes)-1]+1) {
				return nil, nil, fmt.Errorf("boost: a down entry's sums do not fit the level")
			}
			for _, k := range nodes {
				g, h = append(g, v[2*k]), append(h, v[2*k+1])
			}
		}
	}
	return g, h, nil
}

// encryptChunks encrypts chunks lo to hi-1 of g and h (entrySums) in lay,
// on every core, so that a sender can encrypt a part of its message at a
// time; each encryption of zero from zeros while it has one ready (nil:
// none), the rest computed.
func encryptChunks(pk *lattice.PublicKey, zeros *lattice.ZeroPool, lay *lattice.BinLayout, g, h []int64, lo, hi int) ([]*rlwe.Ciphertext, error) {
	out := make([]*rlwe.Ciphertext, hi-lo)
	w := lay.Nodes() * lay.Rows() // values per chunk
	err := onCores(hi-lo, func() (func(i int) error, error) {
		enc, err := lattice.NewEncryptor(pk)
		if err != nil {
			return nil, err
		}
		if err := enc.UseZeros(zeros); err != nil {
			return nil, err
		}
		return func(i int) error {
			from, to := (lo+i)*w, min(len(g), (lo+i+1)*w)
			cts, err := enc.EncryptPairs(lay, g[from:to], h[from:to])
			if err == nil {
				out[i] = cts[0]
			}
			return err
		}, nil
	})
	return out, err
}

// sumGroups is the table's: every group's masked bin sums (the columns
// packed by pack: lattice_pack.go) over each of sets (vectors of the same
// entries in lay), by set then group, the rows of each entry counted in
// their bins, on every core; each chunk's W is made once for all the
// sets. Each mask's encryption of zero comes from zeros while it has one
// ready (nil: none; lattice_zeros.go).
//
// Each group's W per chunk is kept in l.kept (the node's cap,
// kept_weights.go) and taken again while the entries' rows stay: at every
// level whose layouts have as many nodes a slot (one, on most levels:
// lattice_layouts.go) and at every tree's, on a join whose rows all stay
// in open nodes, only the gradients differ.
//
// Rows in bin 0 make no term: the class holder takes bin 0's sums as its
// nodes' totals less the other bins' (fillFirstBins), so a W holds the
// other bins' rows only (on a9a's one-hot columns, bin 0 holds most rows).
func sumGroups(pk *lattice.PublicKey, zeros *lattice.ZeroPool, lay *lattice.BinLayout, l *Local, pack *colPack, entries [][]rowCount, sets [][]*rlwe.Ciphertext) ([][]*rlwe.Ciphertext, error) {
	var cache *lattice.WeightCache
	if l.kept != nil {
		cache = l.kept.cache
	}
	out := make([][]*rlwe.Ciphertext, len(sets))
	for j := range out {
		out[j] = make([]*rlwe.Ciphertext, pack.groups)
	}
	err := onCores(pack.groups, func() (func(g int) error, error) {
		s, err := lattice.NewBinSummer(pk, lay)
		if err != nil {
			return nil, err
		}
		if err := s.UseZeros(zeros); err != nil {
			return nil, err
		}
		var terms []lattice.BinTerm // the worker's, group after group
		return func(g int) error {
			terms = l.groupTermsFrom(terms[:0], pack, g, entries, 0)
			sums, e := s.SumTermsEach(sets, terms, cache, l.wcol+g)
			for j, ct := range sums {
				out[j][g] = ct
			}
			return e
		}, nil
	})
	return out, err
}

// onCores runs work(i) for i < n on every core, each worker with its own
// state from newWorker; the first error stops the others' next items.
func onCores(n int, newWorker func() (func(i int) error, error)) error {
	workers := min(n, runtime.GOMAXPROCS(0))
	var (
		mu   sync.Mutex
		next int
		errs = make([]error, workers)
		wg   sync.WaitGroup
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= n {
			return -1
		}
		next++
		return next - 1
	}
	for w := range workers {
		wg.Go(func() {
			work, err := newWorker()
			if err != nil {
				errs[w] = err
				return
			}
			for i := take(); i >= 0; i = take() {
				if errs[w] = work(i); errs[w] != nil {
					mu.Lock()
					next = n
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
