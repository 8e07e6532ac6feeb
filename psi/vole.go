package psi

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"

	"github.com/cohortdm/cohort/wire"
)

// VOLE is the VOLE-based PSI of Rindal and Raghuraman ("Blazing Fast PSI
// from Improved OKVS and Subfield VOLE", EUROCRYPT 2022, §4 and Fig. 4),
// semi-honest, over a silent VOLE (svole.go) and the random-band OKVS
// (okvs.go). As in the OT mode the Receiver learns the intersection and
// tells the Sender which of the Sender's elements matched, so both end
// with the same Result. See the package doc for the rounds, parameters
// and leakage. Its zero value uses the default Config.
type VOLE struct {
	Config Config
}

var _ Intersector = VOLE{}

// Run runs the VOLE PSI with peer; the two parties must take different
// roles.
func (v VOLE) Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error) {
	if err := checkRole(role); err != nil {
		return nil, err
	}
	set, err := otSetup(net, peer, v.Config, elems)
	if err != nil {
		return nil, err
	}
	return voleRun(ctx, net, peer, role, set)
}

// voleRun is Run with the set prepared (otSetup), as Auto has it once it
// counted it.
func voleRun(ctx context.Context, net Network, peer string, role Role, set *otSet) (*Result, error) {
	if err := checkRole(role); err != nil {
		return nil, err
	}
	if role == Sender {
		return voleSendAndFilter(ctx, net, peer, set)
	}
	x, err := voleReceive(ctx, net, peer, set)
	if err != nil {
		return nil, err
	}
	return x.filterAndResult(ctx, net, peer)
}

// voleSendAndFilter is the sender's whole part: the exchange, then the
// receiver's filter over its shuffled elements.
func voleSendAndFilter(ctx context.Context, net Network, peer string, set *otSet) (*Result, error) {
	x, err := voleSend(ctx, net, peer, set)
	if err != nil {
		return nil, err
	}
	return receiveFilter(ctx, net, peer, x)
}

// voleRand is a CSPRNG for one party's secrets in one exchange (GGM
// seeds, noise, the OKVS's free columns), seeded from crypto/rand.
func voleRand() *mrand.ChaCha8 {
	var s [32]byte
	rand.Read(s[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return mrand.NewChaCha8(s)
}

// voleReceive is the receiver's part (package doc): base OTs, the IKNP
// matrix for its secret noise, the sender's trees turned into (A, C),
// the OKVS of its elements sent masked by A, and the sender's OPRF
// values matched against its own.
func voleReceive(ctx context.Context, net Network, peer string, set *otSet) (*otReceived, error) {
	h, err := voleReceiverHandshake(ctx, net, peer, set)
	if err != nil {
		return nil, err
	}
	keys := newVoleKeys(h.seed)
	p := newVoleParams(okvsSize(len(set.uniq)))
	sc := newScratch(p.receiverScratch(len(set.ds)))
	defer sc.close() // nothing taken from it is returned
	rng := voleRand()
	ch := p.newVoleChoice(rng)
	rows := cotRows(p.cots())
	u, t := cotChooser(prgCiphers(h.bs.k0), prgCiphers(h.bs.k1), ch.bits, rows)
	body, err := marshalChunk(&otChunkBody{Run: h.run, Echo: h.ids.peer, Total: rows, Data: u})
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeVoleMatrix, err)
	}
	if err := net.Send(ctx, peer, TypeVoleMatrix, body); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeVoleMatrix, peer, err)
	}
	m, err := net.Receive(ctx, peer, TypeVoleTrees)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeVoleTrees, peer, err)
	}
	tm, err := decodeVoleOne(m, p.trees, p.treeMsgLen()*gfLen, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeVoleTrees, peer, err)
	}
	a, c := p.chooserVOLE(t, ch, decodeGFs(tm), keys.ea, sc)
	mo, err := maskedOKVS(keys, set, p.m, a, rng, sc)
	if err != nil {
		return nil, fmt.Errorf("psi: VOLE exchange with %s: %w", peer, err)
	}
	var enc []byte // one chunk's bytes at a time, not a second copy of D
	for ci := range numChunks(p.m, set.cfg.ChunkSize) {
		lo := ci * set.cfg.ChunkSize
		enc = appendGFs(enc[:0], mo.d[lo:lo+chunkLen(p.m, set.cfg.ChunkSize, ci)])
		chunk, err := voleChunkOf(h.run, h.ids.peer, enc, p.m, ci, mo.attempt)
		if err != nil {
			return nil, fmt.Errorf("psi: encode %s %w", TypeVoleOKVS, err)
		}
		if err := net.Send(ctx, peer, TypeVoleOKVS, chunk); err != nil {
			return nil, fmt.Errorf("psi: send %s chunk %d to %s: %w", TypeVoleOKVS, ci, peer, err)
		}
	}
	own := ownOutputs(keys, set, mo, c, h.l, sc)
	// Only own (on the heap) is needed from here: the arena's tables are
	// all dead, and its memory, faulted in already, holds the join's.
	sc.release(0)
	return h.matchVoleValues(ctx, net, peer, set, own, sc)
}

// maskedOKVS encodes the receiver's elements (digest → H(x)) into an
// OKVS of m columns, trying fresh hash keys on a failure, and returns the
// attempt that succeeded and D = P + A, with its hasher and keys' layout
// for decoding the same keys (ownOutputs). Its tables come from sc.
func maskedOKVS(keys *voleKeys, set *otSet, m int, a []gf, rng *mrand.ChaCha8, sc *scratch) (*maskedOKVSOut, error) {
	for attempt := range okvsAttempts {
		mark := sc.mark()
		h := newOKVSHasher(keys.seed, attempt, m)
		lay := h.layout(set.ds, sc)
		// H(x) straight in the layout's order: no table in the set's
		// order to gather from.
		svals := take[gf](sc, len(set.ds))
		keys.valuesInto(svals, lay.sds)
		p, err := okvsEncodeIn(h, lay, svals, rng, sc)
		if errors.Is(err, errOKVS) {
			sc.release(mark)
			continue
		}
		if err != nil {
			return nil, err
		}
		for i := range p {
			p[i] = p[i].add(a[i])
		}
		return &maskedOKVSOut{attempt: attempt, d: p, h: h, lay: lay}, nil
	}
	return nil, fmt.Errorf("%w: %d OKVS attempts for %d elements", errOKVS, okvsAttempts, len(set.ds))
}

// maskedOKVSOut is maskedOKVS's result.
type maskedOKVSOut struct {
	attempt int
	d       []gf // D = P + A
	h       okvsHasher
	lay     *okvsLayout
}

// ownOutputs is the receiver's OPRF output of each of its elements u at
// [u·l, (u+1)·l): the hash of Decode(C, y), over the keys mo encoded.
// The decoded values come from sc, the outputs from the heap.
func ownOutputs(keys *voleKeys, set *otSet, mo *maskedOKVSOut, c []gf, l int, sc *scratch) []byte {
	dec := okvsDecodeIn(mo.h, c, mo.lay, sc)
	own := make([]byte, len(set.ds)*l)
	_ = parallel(len(set.ds), func(lo, hi int) error {
		for u := lo; u < hi; u++ {
			keys.oprfOut(own[u*l:], &set.ds[u], dec[u], l)
		}
		return nil
	})
	return own
}

// voleReceiver is the receiver's state after the base OTs.
type voleReceiver struct {
	run      []byte
	ids      *runs
	bs       *baseSender
	seed     [32]byte
	peerSize int
	l        int
}

// voleReceiverHandshake sends the base OTs' first message with our set
// size and seed share (TypeVoleBase), reads the sender's answer
// (TypeVoleChoice) and sends both encryptions of each OT's seeds
// (TypeVoleKeys).
func voleReceiverHandshake(ctx context.Context, net Network, peer string, set *otSet) (*voleReceiver, error) {
	n := len(set.uniq)
	h := &voleReceiver{run: newRunID()}
	h.ids = &runs{echo: h.run}
	share := newRunID()
	bs, a := newBaseSender(voleWidth)
	h.bs = bs
	body, err := encodeHello(h.run, nil, n, share, a)
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeVoleBase, err)
	}
	if err := net.Send(ctx, peer, TypeVoleBase, body); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeVoleBase, peer, err)
	}
	m, err := net.Receive(ctx, peer, TypeVoleChoice)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeVoleChoice, peer, err)
	}
	nS, peerShare, b, err := decodeHello(m, set.cfg.MaxElements, voleWidth, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeVoleChoice, peer, err)
	}
	keysBody, err := wire.Marshal(&otKeysBody{Run: h.run, Echo: h.ids.peer, Cipher: bs.finish(b)})
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeVoleKeys, err)
	}
	if err := net.Send(ctx, peer, TypeVoleKeys, keysBody); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeVoleKeys, peer, err)
	}
	h.seed = set.seed(share, peerShare)
	h.peerSize = nS
	h.l = outLen(n, nS)
	return h, nil
}

// matchVoleValues reads the sender's OPRF values (TypeVoleValues) in its
// shuffled order: position k matches our element u if it equals u's
// output. The values are gathered first and joined with ours by
// matchOutputs, both in tables from sc.
func (h *voleReceiver) matchVoleValues(ctx context.Context, net Network, peer string, set *otSet, own []byte, sc *scratch) (*otReceived, error) {
	n, l, cfg := len(set.uniq), h.l, set.cfg
	theirs := take[byte](sc, h.peerSize*l)[:0]
	for ci := range numChunks(h.peerSize, cfg.ChunkSize) {
		m, err := net.Receive(ctx, peer, TypeVoleValues)
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeVoleValues, ci, peer, err)
		}
		_, data, err := decodeOTChunk(m, ci, cfg.ChunkSize, h.peerSize, l, 0, h.ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeVoleValues, peer, err)
		}
		theirs = append(theirs, data...) // chunk ci holds positions ci·ChunkSize on
	}
	matched := matchOutputs(own, n, theirs, h.peerSize, l, sc)
	return &otReceived{uniq: set.uniq, of: set.of, matched: matched, peerSize: h.peerSize, peerRun: h.ids.peer}, nil
}
