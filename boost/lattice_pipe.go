package boost

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/cohortdm/cohort/lattice"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// A table's party's bin sums of a down message made a part at a time, as
// the parts arrive (issue 34). The class holder sends a level's down
// message in parts of about 33 MB, encrypting the next part while the
// last travels; a party that summed only after the last part left its
// cores idle while the parts came and then spent about 0.3 s a tree's
// first level on products alone. Here each part's products are done as
// soon as it is decoded, while the next part is still being encrypted
// and sent, and each group's sums are masked once after the last part
// (lattice.EachSums): the same masked sums in distribution, the same
// decrypted sums, the same messages.
//
// A down message with no re-used entries is summed so when it has one
// layout (every tree's first level and the single-layout levels after it)
// or several of one node count, whose ciphertexts then come chunk by chunk
// across the layouts (interleaved): each chunk's W is made once for every
// layout, as sumLayouts makes it. Layouts of unequal node counts, and
// re-used entries, summed from the kept chunks after the message
// (addKept), keep the one-shot path.

// pipelined reports whether a down message with head m is summed as its
// parts come.
func pipelined(m *latticeMsg) bool {
	return m.Kept == 0 && (len(m.Nodes) == 1 || interleaved(m))
}

// partSums is the sums of a down message of n entries in sets layouts of
// one node count under way: one lattice.EachSums per group of columns
// (lattice_pack.go).
type partSums struct {
	lay     *lattice.BinLayout
	zeros   *lattice.ZeroPool
	pk      *lattice.PublicKey
	l       *Local
	entries [][]rowCount
	cache   *lattice.WeightCache
	pack    colPack
	cols    []*lattice.EachSums  // by group
	summers []*lattice.BinSummer // one a worker, made at the first part that needs it
	next    int                  // the chunks added (of every layout)
	sets    int                  // the layouts
	pending []*rlwe.Ciphertext   // a chunk's ciphertexts of the first layouts, its last yet to come
}

// newPartSums returns the empty sums of table l's columns over entries
// in sets layouts of nodes nodes a slot, for bins bins; the masks'
// encryptions of zero from zeros while it has them (nil: none).
func newPartSums(pk *lattice.PublicKey, zeros *lattice.ZeroPool, bins, nodes, sets int, l *Local, entries [][]rowCount) (*partSums, error) {
	lay, err := lattice.NewNodeBinLayout(pk.Params, bins, nodes)
	if err != nil {
		return nil, err
	}
	pack, err := l.pack(bins)
	if err != nil {
		return nil, err
	}
	p := &partSums{lay: lay, zeros: zeros, pk: pk, l: l, entries: entries, pack: pack, sets: sets}
	if l.kept != nil {
		p.cache = l.kept.cache
	}
	s, err := p.summer(0)
	if err != nil {
		return nil, err
	}
	chunks := lay.Chunks(len(entries))
	p.cols = make([]*lattice.EachSums, pack.groups)
	for f := range p.cols {
		if p.cols[f], err = s.NewEachSums(sets, chunks); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// summer is worker w's BinSummer: made once for all the parts, as
// sumGroups makes one a worker for all the groups.
func (p *partSums) summer(w int) (*lattice.BinSummer, error) {
	for len(p.summers) <= w {
		p.summers = append(p.summers, nil)
	}
	if p.summers[w] == nil {
		s, err := lattice.NewBinSummer(p.pk, p.lay)
		if err != nil {
			return nil, err
		}
		if err := s.UseZeros(p.zeros); err != nil {
			return nil, err
		}
		p.summers[w] = s
	}
	return p.summers[w], nil
}

// perWorker runs work(s, f) for every group f on every core, each worker
// with its own BinSummer s.
func (p *partSums) perWorker(work func(s *lattice.BinSummer, terms *[]lattice.BinTerm, f int) error) error {
	var made atomic.Int32
	for w := range min(len(p.cols), runtime.GOMAXPROCS(0)) { // made here: onCores' workers start at once
		if _, err := p.summer(w); err != nil {
			return err
		}
	}
	return onCores(len(p.cols), func() (func(int) error, error) {
		s := p.summers[made.Add(1)-1]
		var terms []lattice.BinTerm // the worker's, group after group
		return func(f int) error { return work(s, &terms, f) }, nil
	})
}

// add adds the products of the message's next ciphertexts, cts, to every
// group's sums, each group's terms those of the chunks' entries: the
// chunks whose every layout's ciphertext has come, the rest kept for the
// next part.
func (p *partSums) add(cts []*rlwe.Ciphertext) error {
	p.pending = append(p.pending, cts...)
	chunks := len(p.pending) / p.sets
	if chunks == 0 {
		return nil
	}
	sets := make([][]*rlwe.Ciphertext, p.sets) // by layout, the chunks' ciphertexts
	for l := range sets {
		sets[l] = make([]*rlwe.Ciphertext, chunks)
		for c := range sets[l] {
			sets[l][c] = p.pending[c*p.sets+l]
		}
	}
	p.pending = append(p.pending[:0], p.pending[chunks*p.sets:]...)
	k0, rows := p.next, p.lay.Rows()
	e0, e1 := min(k0*rows, len(p.entries)), min((k0+chunks)*rows, len(p.entries))
	err := p.perWorker(func(s *lattice.BinSummer, terms *[]lattice.BinTerm, f int) error {
		*terms = p.l.groupTermsFrom((*terms)[:0], &p.pack, f, p.entries[e0:e1], e0)
		return s.AddEach(p.cols[f], sets, k0, *terms, p.cache, p.l.wcol+f)
	})
	p.next += chunks
	return err
}

// finish masks every group's sums (every part added) and returns them,
// layout by layout, group by group: sumLayouts' sums.
func (p *partSums) finish() ([]*rlwe.Ciphertext, error) {
	if len(p.pending) != 0 {
		return nil, fmt.Errorf("%w: a lattice down message ends within a chunk of its layouts", ErrWire)
	}
	groups := len(p.cols)
	out := make([]*rlwe.Ciphertext, p.sets*groups)
	err := p.perWorker(func(s *lattice.BinSummer, _ *[]lattice.BinTerm, f int) error {
		sums, err := s.FinishEach(p.cols[f])
		for l, ct := range sums {
			out[l*groups+f] = ct
		}
		return err
	})
	return out, err
}
