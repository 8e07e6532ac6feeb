package psi

import (
	"context"
	"fmt"
)

// voleSend is the VOLE sender's part (package doc): the base OTs with
// its Δ as choice bits, the correlated OTs from the receiver's matrix,
// the GGM trees (TypeVoleTrees) that leave it B with C = B + A·Δ, then
// K = B + Δ·D from the receiver's masked OKVS D, and the OPRF value of
// each of its elements, hash(Decode(K, x) + Δ·H(x)), sent in a fresh
// shuffled order (TypeVoleValues).
func voleSend(ctx context.Context, net Network, peer string, set *otSet) (*exchange, error) {
	x := &exchange{uniq: set.uniq, of: set.of, run: newRunID()}
	h, err := voleSenderHandshake(ctx, net, peer, set, x)
	if err != nil {
		return nil, err
	}
	keys := newVoleKeys(h.seed)
	p := newVoleParams(okvsSize(h.nR)) // nR ≤ MaxElements: checked by decodeHello
	rows := cotRows(p.cots())
	m, err := net.Receive(ctx, peer, TypeVoleMatrix)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeVoleMatrix, peer, err)
	}
	u, err := decodeVoleOne(m, rows, voleWidth/8, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeVoleMatrix, peer, err)
	}
	q := cotSender(u, prgCiphers(h.ks), h.choice, rows)
	delta := deltaOf(h.choice)
	// The arena holds the noise vector only and is unmapped as soon as
	// the VOLE is done: the sender's tables after it are few and live
	// long (its OPRF phase waits for the receiver's OKVS), and its 92 MB
	// are better back with the kernel by then.
	sc := newScratch(p.senderScratch())
	defer sc.close() // on a panic; closed below otherwise
	b, tm := p.senderVOLE(q, delta, keys.ea, voleRand(), sc)
	sc.close()
	body, err := marshalChunk(&otChunkBody{Run: x.run, Echo: h.ids.peer, Total: p.trees, Data: encodeGFs(tm)})
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeVoleTrees, err)
	}
	if err := net.Send(ctx, peer, TypeVoleTrees, body); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeVoleTrees, peer, err)
	}
	dt := newGFTable(delta)
	attempt, err := h.receiveOKVS(ctx, net, peer, set.cfg, b, dt) // b becomes K
	if err != nil {
		return nil, err
	}
	x.perm = permutation(len(set.uniq))
	vals := make([]byte, len(x.perm)*h.l)
	pd := make([][digestLen]byte, len(x.perm)) // digests in sent order
	for k, u := range x.perm {
		pd[k] = set.ds[u]
	}
	dec := okvsDecodeAll(newOKVSHasher(h.seed, attempt, p.m), b, pd)
	_ = parallel(len(pd), func(lo, hi int) error {
		var hx [okvsBatch]gf // H(x) a batch at a time, not a table of all
		for lo := lo; lo < hi; lo += len(hx) {
			n := min(len(hx), hi-lo)
			keys.valuesInto(hx[:n], pd[lo:lo+n])
			for k := lo; k < lo+n; k++ {
				z := dec[k].add(dt.mul(hx[k-lo]))
				keys.oprfOut(vals[k*h.l:], &pd[k], z, h.l)
			}
		}
		return nil
	})
	for ci := range numChunks(len(x.perm), set.cfg.ChunkSize) {
		chunk, err := voleChunk(x.run, h.ids.peer, vals, len(x.perm), set.cfg.ChunkSize, ci, h.l, 0)
		if err != nil {
			return nil, fmt.Errorf("psi: encode %s %w", TypeVoleValues, err)
		}
		if err := net.Send(ctx, peer, TypeVoleValues, chunk); err != nil {
			return nil, fmt.Errorf("psi: send %s chunk %d to %s: %w", TypeVoleValues, ci, peer, err)
		}
	}
	return x, nil
}

// voleSender is the sender's state after the base OTs.
type voleSender struct {
	ids    *runs
	seed   [32]byte
	ks     [][]byte // our base-OT seeds k_{s_j}
	choice []int    // s, the bits of Δ
	nR     int
	l      int
}

// voleSenderHandshake reads the receiver's first message
// (TypeVoleBase), answers with our set size, seed share and each OT's
// answer for choice bits Δ (TypeVoleChoice), and reads our seeds
// (TypeVoleKeys). It sets x's peer size and peer run.
func voleSenderHandshake(ctx context.Context, net Network, peer string, set *otSet, x *exchange) (*voleSender, error) {
	share := newRunID()
	h := &voleSender{ids: &runs{}}
	m, err := net.Receive(ctx, peer, TypeVoleBase)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeVoleBase, peer, err)
	}
	nR, peerShare, a, err := decodeHello(m, set.cfg.MaxElements, voleWidth, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeVoleBase, peer, err)
	}
	x.peerSize, x.peerRun = nR, h.ids.peer
	br, b := newBaseReceiver(a)
	body, err := encodeHello(x.run, h.ids.peer, len(set.uniq), share, b)
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeVoleChoice, err)
	}
	if err := net.Send(ctx, peer, TypeVoleChoice, body); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeVoleChoice, peer, err)
	}
	h.ids.echo = x.run
	m, err = net.Receive(ctx, peer, TypeVoleKeys)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeVoleKeys, peer, err)
	}
	cipherText, err := decodeKeys(m, voleWidth, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeVoleKeys, peer, err)
	}
	if h.ks, err = br.finish(cipherText); err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeVoleKeys, peer, err)
	}
	h.seed = set.seed(peerShare, share)
	h.choice = br.choice
	h.nR = nR
	h.l = outLen(nR, len(set.uniq))
	return h, nil
}

// receiveOKVS reads D in chunks (TypeVoleOKVS) and turns b into
// K = B + Δ·D in place; it returns the OKVS attempt the chunks name (all
// the same).
func (h *voleSender) receiveOKVS(ctx context.Context, net Network, peer string, cfg Config, b []gf, dt *gfTable) (int, error) {
	attempt := -1
	for ci := range numChunks(len(b), cfg.ChunkSize) {
		m, err := net.Receive(ctx, peer, TypeVoleOKVS)
		if err != nil {
			return 0, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeVoleOKVS, ci, peer, err)
		}
		att, d, err := decodeOTChunk(m, ci, cfg.ChunkSize, len(b), gfLen, attempt, h.ids)
		if err != nil {
			return 0, fmt.Errorf("%s from %s: %w", TypeVoleOKVS, peer, err)
		}
		attempt = att
		lo := ci * cfg.ChunkSize
		for i := range len(d) / gfLen {
			b[lo+i] = b[lo+i].add(dt.mul(gfFrom(d[i*gfLen:])))
		}
	}
	return attempt, nil
}
