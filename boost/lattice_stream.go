package boost

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
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
	pk      *lattice.PublicKey
	zeros   *lattice.ZeroPool // the class holder's node's, or nil (lattice_zeros.go)
	layouts []downLayout
	count   int // the chunks of all layouts
}

type downLayout struct {
	lay    *lattice.BinLayout
	g, h   []int64
	chunks int
}

// newLatticeDown lays ds's entries out: the layouts of head.Nodes (node
// counts), taking nodes in order, for bins bins.
func newLatticeDown(pk *lattice.PublicKey, zeros *lattice.ZeroPool, ds DownSummary, counts, nodes []int, bins int) (*latticeDown, error) {
	d := &latticeDown{pk: pk, zeros: zeros}
	k0 := 0
	for _, n := range counts {
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

// encode encrypts and encodes chunks lo to hi-1 of the message (layout
// after layout), one encoding a ciphertext.
func (d *latticeDown) encode(lo, hi int) ([][]byte, error) {
	var c [][]byte
	base := 0
	for _, dl := range d.layouts {
		from, to := max(lo-base, 0), min(hi-base, dl.chunks)
		if from < to {
			cts, err := encryptChunks(d.pk, d.zeros, dl.lay, dl.g, dl.h, from, to)
			if err != nil {
				return nil, err
			}
			if c, err = appendEncodings(d.pk, c, cts); err != nil {
				return nil, err
			}
		}
		base += dl.chunks
	}
	return c, nil
}

// sendLatticeEach is sendLattice of a list of count encodings of size
// bytes each, made a part at a time by next(lo, hi): the same parts as
// sendLattice makes of the whole list. The next part is made while the
// one before is encoded and sent, so that the class holder's cores
// encrypt while its messages travel; at most two parts are held.
func (s *session) sendLatticeEach(ctx context.Context, step job.Step, base, to, typ string, head latticeMsg, count, size int,
	next func(lo, hi int) ([][]byte, error), d wire.Disclosure) error {
	parts := eachRuns(count, size, s.downPart)
	type made struct {
		c   [][]byte
		err error
	}
	ahead := make(chan made, 1) // the part being made; always received before returning
	start := func(k int) {
		go func() {
			c, err := next(parts[k][0], parts[k][1])
			ahead <- made{c, err}
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
		if err := s.sendPart(ctx, step, base, to, typ, head, k, len(parts), size, got.c, d); err != nil {
			if k+1 < len(parts) {
				<-ahead // the part being made: wait for it, so that no goroutine outlives the call
			}
			return err
		}
	}
	return nil
}

// sendPart checks and sends part k of parts of a lattice message, head's
// other fields in part 0.
func (s *session) sendPart(ctx context.Context, step job.Step, base, to, typ string, head latticeMsg, k, parts, size int, c [][]byte, d wire.Disclosure) error {
	for _, b := range c {
		if len(b) != size {
			return fmt.Errorf("boost: a lattice encoding of %d bytes, not %d", len(b), size)
		}
	}
	m := latticeMsg{Edge: head.Edge, Part: k, Parts: parts, C: c}
	if k == 0 {
		m = m.withHead(&head)
		d = m.headForm(d)
	}
	return s.sendSized(ctx, step.Sub(fmt.Sprintf("%s/%d", base, k)), to, typ, &m, m.encodedSize(), d)
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
