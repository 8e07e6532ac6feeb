package boost

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// The lattice path's large messages made and read a part at a time. A
// level's down message holds one 393 KB ciphertext per chunk of a
// layout's entries: at 1,000,000 join rows and 32 bins, 7,813 a node of
// a layout (3 GB) and twice that at two nodes a slot. The class holder
// encrypts and encodes each part's ciphertexts just before sending it,
// and the receiver decodes each part as it arrives, so that neither
// holds the message's encodings whole (docs/boost.md, "Scale"). The
// parts are the ones sendLattice makes of the whole list: every message
// is as before.

// latticeDown is the class holder's down message to one table, made on
// demand: per layout, its entries' sums and its number of chunks.
type latticeDown struct {
	pk         *lattice.PublicKey
	zeros      *lattice.ZeroPool // the class holder's node's, or nil (lattice_zeros.go)
	layouts    []downLayout
	count      int  // the chunks of all layouts
	interleave bool // chunk by chunk across the layouts (interleaved)
}

// interleaved reports whether a down message with head m carries its
// ciphertexts chunk by chunk across its layouts (chunk 0 of every layout,
// then chunk 1, …) rather than layout after layout: when it has several
// layouts, all of one node count, and no re-used entries. Such a message
// is summed as its parts come (lattice_pipe.go), each chunk's W made once
// for every layout as sumLayouts makes it, which needs every layout's
// chunk at hand; a9a's deep levels are two layouts of four and of eight
// nodes. Both ends read it from the head: the order is no one's choice.
func interleaved(m *latticeMsg) bool {
	if m.Kept != 0 || len(m.Nodes) < 2 {
		return false
	}
	for _, n := range m.Nodes[1:] {
		if n != m.Nodes[0] {
			return false
		}
	}
	return true
}

type downLayout struct {
	lay    *lattice.BinLayout
	g, h   []int64
	chunks int
}

// newLatticeDown lays ds's entries out: the layouts of head.Nodes (node
// counts), taking nodes in order, for bins bins, in the order the head
// says (interleaved).
func newLatticeDown(pk *lattice.PublicKey, zeros *lattice.ZeroPool, ds DownSummary, head *latticeMsg, nodes []int, bins int) (*latticeDown, error) {
	d := &latticeDown{pk: pk, zeros: zeros, interleave: interleaved(head)}
	k0 := 0
	for _, n := range head.Nodes {
		lay, err := lattice.NewNodeBinLayout(pk.Params, bins, n)
		if err != nil {
			return nil, err
		}
		g, h, err := entrySums(ds, nodes[k0:k0+n])
		if err != nil {
			return nil, err
		}
		k0 += n
		dl := downLayout{lay: lay, g: g, h: h, chunks: lay.Chunks(len(g) / lay.Nodes())}
		d.layouts, d.count = append(d.layouts, dl), d.count+dl.chunks
	}
	return d, nil
}

// encrypt encrypts chunks lo to hi-1 of the message (layout after
// layout, or interleaved), one ciphertext a chunk.
func (d *latticeDown) encrypt(lo, hi int) ([]*rlwe.Ciphertext, error) {
	if d.interleave {
		return d.encryptInterleaved(lo, hi)
	}
	var out []*rlwe.Ciphertext
	base := 0
	for _, dl := range d.layouts {
		from, to := max(lo-base, 0), min(hi-base, dl.chunks)
		if from < to {
			cts, err := encryptChunks(d.pk, d.zeros, dl.lay, dl.g, dl.h, from, to)
			if err != nil {
				return nil, err
			}
			out = append(out, cts...)
		}
		base += dl.chunks
	}
	return out, nil
}

// encryptInterleaved is encrypt of an interleaved message, whose
// ciphertext i is chunk i/L of layout i mod L (L layouts).
func (d *latticeDown) encryptInterleaved(lo, hi int) ([]*rlwe.Ciphertext, error) {
	layouts := len(d.layouts)
	first := func(i, l int) int { // the first chunk c of layout l with c·L + l ≥ i
		if i <= l {
			return 0
		}
		return (i - l + layouts - 1) / layouts
	}
	out := make([]*rlwe.Ciphertext, hi-lo)
	for l, dl := range d.layouts {
		from, to := first(lo, l), first(hi, l)
		if from >= to {
			continue
		}
		cts, err := encryptChunks(d.pk, d.zeros, dl.lay, dl.g, dl.h, from, to)
		if err != nil {
			return nil, err
		}
		for j, ct := range cts {
			out[(from+j)*layouts+l-lo] = ct
		}
	}
	return out, nil
}

// sendLatticeEach is sendLattice of a list of count ciphertexts, made a
// part at a time by next(lo, hi): the same parts, of at most limit bytes
// of encodings, as sendLattice makes of the whole list's encodings. The
// next part is made while the one before is encoded and sent, so that
// the class holder's cores encrypt while its messages travel; at most two
// parts are held.
func (s *session) sendLatticeEach(ctx context.Context, step job.Step, base, to, typ string, head latticeMsg, count, limit int,
	next func(lo, hi int) ([]*rlwe.Ciphertext, error), d wire.Disclosure) error {
	parts := eachRuns(count, s.lkeys.PublicKey.Params.CiphertextBytes(), limit)
	type made struct {
		cts []*rlwe.Ciphertext
		err error
	}
	ahead := make(chan made, 1) // the part being made; always received before returning
	start := func(k int) {
		go func() {
			cts, err := next(parts[k][0], parts[k][1])
			ahead <- made{cts, err}
		}()
	}
	start(0)
	for k := range parts {
		got := <-ahead
		if got.err != nil {
			return got.err
		}
		if k+1 < len(parts) {
			start(k + 1)
		}
		if err := s.sendPart(ctx, step, base, to, typ, head, k, len(parts), got.cts, d); err != nil {
			if k+1 < len(parts) {
				<-ahead // the part being made: wait for it, so that no goroutine outlives the call
			}
			return err
		}
	}
	return nil
}

// sendPart sends part k of parts of a lattice message, head's other
// fields in part 0, each ciphertext encoded straight into the message
// (wire.MarshalBlobs): no encoding made apart and copied in.
func (s *session) sendPart(ctx context.Context, step job.Step, base, to, typ string, head latticeMsg, k, parts int, cts []*rlwe.Ciphertext, d wire.Disclosure) error {
	m, d := head.part(k, parts, d)
	params := s.lkeys.PublicKey.Params
	b, err := wire.MarshalBlobs(&m, "c", len(cts), params.CiphertextBytes(), func(j int, dst []byte) error {
		out, err := params.AppendCiphertexts(dst[:0], cts[j:j+1])
		if err == nil && (len(out) != len(dst) || len(dst) > 0 && &out[0] != &dst[0]) {
			err = fmt.Errorf("boost: a lattice encoding of %d bytes, not %d", len(out), len(dst))
		}
		return err
	})
	if err != nil {
		return err
	}
	return s.sendBody(ctx, step.Sub(fmt.Sprintf("%s/%d", base, k)), to, typ, b, d)
}

// eachRuns is splitRuns' runs of count encodings of size bytes each
// under limit, as index ranges [lo, hi).
func eachRuns(count, size, limit int) [][2]int {
	per := max(limit/size, 1)
	runs := make([][2]int, max((count+per-1)/per, 1))
	for k := range runs {
		runs[k] = [2]int{k * per, min(count, (k+1)*per)}
	}
	return runs
}
