package boost

// Re-used gradient ciphertexts on the lattice path (params.reuse, as on
// the Paillier path: reuse.go). A join row's gradient and hessian do not
// change within a tree, so the class holder encrypts a table's down
// message in full only at the tree's first level (First: one open node,
// a one-node layout), and the table's party keeps those chunks. At a
// deeper level an entry whose join rows outside the table all lie in one
// open node (markReuse) is not encrypted again: the head names, per
// entry, At: −1 encrypted afresh in the level's layouts (as before), −2
// in no summed node (a right child, summed by subtraction, or none), y ≥ 0
// re-used for the y-th summed node with Refs its first-level entry. The
// table's party then sums, per summed node (Kept of them) and column, the
// kept chunks with a W of that node's entries only (sumKept): one product
// per kept chunk, node and column, the same products as a fresh layout of
// those nodes takes, but each W made for its node (none kept across
// levels). Each node's sums are a target of their own, a one-node layout
// appended to the level's layouts, which the class holder adds to the
// fresh layouts' sums of the same node.
//
// What it discloses is what the Paillier path's re-use does: the table's
// party learns the open node of each re-used entry (SecureBoost's instance
// space); part 0 of the down message is recorded as split-summary.
// params.reuse: false keeps every entry's node hidden. On a one-to-one
// join a tree of depth d costs the class holder one encryption and the
// wire one ciphertext per chunk of the first level instead of about d.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// reuseColumns is the most numeric columns of a table whose chunks the
// lattice path re-uses. A re-used chunk spares the class holder one
// encryption and the wire one ciphertext, and costs the table's party
// one W transform per column and summed node instead of a kept W: past
// this many columns the transforms cost more than the encryption and the
// bytes they spare (docs/boost.md, "Re-used chunks on the lattice
// path"), so such a table is sent fresh ciphertexts at every level, as
// with params.reuse false, and its party learns no node.
const reuseColumns = 16

// Places of an entry in a deeper level's down message (latticeMsg.At).
const (
	atFresh = -1 // encrypted in the level's layouts
	atNone  = -2 // in no summed node
)

// holderFirst is the class holder's first-level down summary of a tree to
// one edge, in the clear, from which it marks a deeper level's entries.
type holderFirst struct {
	tree int
	ds   *DownSummary
}

// markLattice is the class holder's: each entry of ds (in the clear, a
// deeper level's) placed (latticeMsg.At) with its first-level entry in
// first (Refs, −1 where not re-used), given the level's summed nodes;
// and ds with its fresh entries only, which the level's layouts hold.
func markLattice(first, ds *DownSummary, nodes []int) (at, refs []int, fresh DownSummary) {
	m := cloneSummary(*ds)
	markReuse(first, m, 0)
	start := make([]int, len(first.Values)) // each value's first entry, counted over the first level
	n := 0
	for v, es := range first.Entries {
		start[v], n = n, n+len(es)
	}
	fresh = DownSummary{Edge: ds.Edge, Values: ds.Values, Entries: make([][]DownEntry, len(ds.Entries))}
	f := newFinder(first.Values)
	for v, es := range m.Entries {
		for j, e := range es {
			if e.Reuse == nil {
				at, refs = append(at, atFresh), append(refs, -1)
				fresh.Entries[v] = append(fresh.Entries[v], ds.Entries[v][j])
				continue
			}
			y := slices.Index(nodes, e.Reuse.Node) // -1: a right child's or no open node's
			if y < 0 {
				at, refs = append(at, atNone), append(refs, -1)
				continue
			}
			fv, _ := f.find(ds.Values[v])
			at, refs = append(at, y), append(refs, start[fv]+e.Reuse.Ref)
		}
	}
	return at, refs, fresh
}

// entryCount is the number of ds's entries.
func entryCount(ds *DownSummary) int {
	n := 0
	for _, es := range ds.Entries {
		n += len(es)
	}
	return n
}

// summedLayouts is, for the class holder's reading of a table's bin sums,
// the layouts' node counts (the fresh ones, then one per kept node) and
// the summed nodes they hold, in order.
func summedLayouts(fresh []int, kept int, nodes []int) (counts, summed []int) {
	counts = slices.Clone(fresh)
	if len(fresh) > 0 {
		summed = slices.Clone(nodes)
	}
	for range kept {
		counts = append(counts, 1)
	}
	if kept > 0 {
		summed = append(summed, nodes...)
	}
	return counts, summed
}

// checkMarks checks a down message head's re-use marks against its n
// entries: none at a first level, else one place per entry, each fresh,
// none or a kept node below Kept with a first-level entry at or above 0.
func (m *latticeMsg) checkMarks(n int) bool {
	if m.At == nil {
		return m.Refs == nil && m.Kept == 0
	}
	if m.First || len(m.At) != n || len(m.Refs) != n || m.Kept < 1 || m.Kept > maxWidth {
		return false
	}
	for e, y := range m.At {
		if y < atNone || y >= m.Kept || (y >= 0) != (m.Refs[e] >= 0) || m.Refs[e] < -1 {
			return false
		}
	}
	return true
}

// freshOnly is entries (by entry, as entryRows gives them) of the entries
// at places at that are encrypted afresh (all when at is nil).
func freshOnly(entries [][]rowCount, at []int) [][]rowCount {
	if at == nil {
		return entries
	}
	var out [][]rowCount
	for e, y := range at {
		if y == atFresh {
			out = append(out, entries[e])
		}
	}
	return out
}

// latticeKept is a table's party's kept first-level chunks of a tree, and
// each first-level entry's join value (for the checks of a re-use).
type latticeKept struct {
	tree   int
	values []string
	cts    []*rlwe.Ciphertext
}

// keptEntry is a re-used entry's first-level row and its table rows.
type keptEntry struct {
	ref  int
	rows []rowCount
}

// sumKept is the table's bin sums of a deeper level's re-used entries:
// for each of the kept nodes, every group's masked sums over the kept
// first-level chunks (a one-node layout), each entry whose place is the
// node counted at its first-level row; by node, then group. ds names the
// entries' join values, which must be their first-level entries'.
func sumKept(pk *lattice.PublicKey, zeros *lattice.ZeroPool, bins int, l *Local, ds *DownSummary, entries [][]rowCount, m *latticeMsg, kept *latticeKept) ([]*rlwe.Ciphertext, error) {
	lay, err := lattice.NewNodeBinLayout(pk.Params, bins, 1)
	if err != nil {
		return nil, err
	}
	byNode := make([][]keptEntry, m.Kept)
	e := 0
	for v, es := range ds.Entries {
		for range es {
			if y := m.At[e]; y >= 0 {
				ref := m.Refs[e]
				if ref >= len(kept.values) || kept.values[ref] != ds.Values[v] || ref >= lay.Rows()*len(kept.cts) {
					return nil, fmt.Errorf("%w: a re-used lattice gradient sum on edge %s names another join value's first-level entry", ErrWire, l.g.EdgeName(ds.Edge))
				}
				byNode[y] = append(byNode[y], keptEntry{ref: ref, rows: entries[e]})
			}
			e++
		}
	}
	for _, ke := range byNode {
		slices.SortStableFunc(ke, func(a, b keptEntry) int { return a.ref - b.ref })
	}
	pack, err := l.pack(bins)
	if err != nil {
		return nil, err
	}
	groups := pack.groups
	out := make([]*rlwe.Ciphertext, m.Kept*groups)
	err = onCores(len(out), func() (func(i int) error, error) {
		s, err := lattice.NewBinSummer(pk, lay)
		if err != nil {
			return nil, err
		}
		if err := s.UseZeros(zeros); err != nil {
			return nil, err
		}
		var terms []lattice.BinTerm
		return func(i int) error {
			terms = keptTerms(terms[:0], l, &pack, i%groups, byNode[i/groups])
			sums, err := s.SumTermsEach([][]*rlwe.Ciphertext{kept.cts}, terms, nil, 0)
			if err == nil {
				out[i] = sums[0]
			}
			return err
		}, nil
	})
	return out, err
}

// keptTerms is group g's terms of re-used entries: each entry's terms at
// its first-level row (entries sorted by it; two entries of one row add).
func keptTerms(terms []lattice.BinTerm, l *Local, pack *colPack, g int, entries []keptEntry) []lattice.BinTerm {
	for _, ke := range entries {
		terms = l.groupTermsFrom(terms, pack, g, [][]rowCount{ke.rows}, ke.ref)
	}
	return terms
}

// keptSecret is where a table's party keeps a tree's first-level chunks
// for table i, so that a restart within the tree finds them.
func keptSecret(id string, i int) string { return fmt.Sprintf("jobs/%s/boost-lattice-first-%d", id, i) }

// keptHead is the kept chunks' file's head: the tree, each first-level
// entry's join value, and the number and size of the encodings that
// follow it.
type keptHead struct {
	Tree   int      `msgpack:"tree"`
	Values []string `msgpack:"values"`
	Count  int      `msgpack:"count"`
	Size   int      `msgpack:"size"`
}

// keptWriter streams a table's first-level chunks, as they arrive, into
// its kept file in the job scratch (replaced atomically once whole), so
// that the party holds no second copy of a level's message (3 GB at
// 1,000,000 join rows). Its goroutine ends when finish returns.
type keptWriter struct {
	pw     *io.PipeWriter
	done   chan error
	who    string
	values []string // each first-level entry's join value, as the file's head has them
}

// startKept starts table i's kept file for tree: its head (each
// first-level entry's join value, count encodings) and then what write
// is given.
func (s *session) startKept(i, tree int, values []string, count int) *keptWriter {
	pr, pw := io.Pipe()
	w := &keptWriter{pw: pw, done: make(chan error, 1), who: s.p.Self(), values: values}
	head := keptHead{Tree: tree, Values: values, Count: count, Size: s.lkeys.PublicKey.Params.CiphertextBytes()}
	go func() {
		err := job.WriteSecretFrom(s.p.Secrets(), keptSecret(s.p.JobID(), i), func(out io.Writer) error {
			h, err := wire.Marshal(&head)
			if err != nil {
				return err
			}
			if _, err := out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(h)))); err != nil {
				return err
			}
			if _, err := out.Write(h); err != nil {
				return err
			}
			_, err = io.Copy(out, pr)
			return err
		})
		pr.CloseWithError(err) // a write still waiting returns the file's error
		w.done <- err
	}()
	return w
}

// write appends encodings to the kept file.
func (w *keptWriter) write(c [][]byte) error {
	for _, b := range c {
		if _, err := w.pw.Write(b); err != nil {
			return fmt.Errorf("party %s: keep the first-level lattice gradient sums: %w", w.who, err)
		}
	}
	return nil
}

// finishKept finishes table i's kept file still being made durable, if
// any, and returns its error.
func (s *session) finishKept(i int) error {
	kw := s.kpending[i]
	if kw == nil {
		return nil
	}
	delete(s.kpending, i)
	return kw.finish(nil)
}

// finish ends the kept file: whole when cause is nil, else abandoned
// (the old file, if any, stays), and returns cause or the file's error.
func (w *keptWriter) finish(cause error) error {
	w.pw.CloseWithError(cause)
	err := <-w.done
	if cause != nil {
		return cause
	}
	if err != nil {
		return fmt.Errorf("party %s: keep the first-level lattice gradient sums: %w", w.who, err)
	}
	return nil
}

// keptFirst is table i's kept first-level chunks of tree, from memory or,
// after a restart, from the job scratch (ErrResume when neither has them).
func (s *session) keptFirst(i, tree int) (*latticeKept, error) {
	if k := s.lkept[i]; k != nil && k.tree == tree {
		return k, nil
	}
	r, err := s.openKept(i)
	if err != nil {
		return nil, fmt.Errorf("%w: party %s has not kept the first-level lattice gradient sums of tree %d", ErrResume, s.p.Self(), tree)
	}
	defer r.Close()
	k, err := readKept(r, s.lkeys.PublicKey, tree)
	if err != nil {
		return nil, fmt.Errorf("%w: party %s: its kept first-level lattice gradient sums of tree %d: %w", ErrResume, s.p.Self(), tree, err)
	}
	s.lkept[i] = k
	return k, nil
}

// openKept opens table i's kept file: streamed from the data dir where
// the party's secrets are a directory (a second copy of 3 GB at
// 1,000,000 join rows is not read into memory), else read whole.
func (s *session) openKept(i int) (io.ReadCloser, error) {
	name := keptSecret(s.p.JobID(), i)
	if sd, ok := s.p.Secrets().(job.ScratchDir); ok {
		dir, err := sd.Dir(path.Dir(name))
		if err != nil {
			return nil, err
		}
		return os.Open(filepath.Join(dir, path.Base(name)))
	}
	b, err := s.p.Secrets().ReadSecret(name)
	return io.NopCloser(bytes.NewReader(b)), err
}

// readKept reads a kept file of tree: its head, then its encodings one at
// a time, each decoded as it is read.
func readKept(r io.Reader, pk *lattice.PublicKey, tree int) (*latticeKept, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var n [4]byte
	if _, err := io.ReadFull(br, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 64<<20 {
		return nil, fmt.Errorf("%w: a kept file's head of %d bytes", ErrWire, size)
	}
	hb := make([]byte, size)
	var h keptHead
	if _, err := io.ReadFull(br, hb); err != nil {
		return nil, err
	}
	if err := wire.Unmarshal(hb, &h); err != nil || h.Tree != tree || h.Size != pk.Params.CiphertextBytes() || h.Count < 0 {
		return nil, fmt.Errorf("%w: a kept file of another tree or key", ErrWire)
	}
	k := &latticeKept{tree: tree, values: h.Values}
	b := make([]byte, h.Size)
	for range h.Count { // appended: a count the file does not back allocates nothing
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		cts, err := decodeEach(pk, [][]byte{b})
		if err != nil {
			return nil, err
		}
		k.cts = append(k.cts, cts[0])
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: a kept file longer than its head says", ErrWire)
	}
	return k, nil
}
