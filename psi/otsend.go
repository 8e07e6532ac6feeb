package psi

import (
	"context"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// otSend is the OPRF sender's part of the exchange (package doc): the
// base OTs (senderHandshake), the extension matrix turned into OPRF
// values of its elements (oprfValues), and those values sent in a fresh
// shuffled order (sendValues).
func otSend(ctx context.Context, net Network, peer string, set *otSet) (*exchange, error) {
	x := &exchange{uniq: set.uniq, of: set.of, run: newRunID()}
	h, err := senderHandshake(ctx, net, peer, set, x)
	if err != nil {
		return nil, err
	}
	x.perm = permutation(len(set.uniq))
	vals, err := h.oprfValues(ctx, net, peer, set, x.perm)
	if err != nil {
		return nil, err
	}
	if err := h.sendValues(ctx, net, peer, set.cfg, x.run, vals); err != nil {
		return nil, err
	}
	return x, nil
}

// senderRun is the sender's state after the base OTs.
type senderRun struct {
	ids   *runs
	seed  [32]byte       // the joint seed
	gs    []cipher.Block // PRGs of our seeds k_{s_j}
	s     []int          // our choice vector s
	sMask [otRowBytes]byte
	nR    int // the receiver's set size
	l     int // bytes of an OPRF value
}

// senderHandshake reads the receiver's first message (TypeOTBase),
// answers with our set size, seed share and each OT's B_j for a random
// choice vector s (TypeOTChoice), and reads our seeds k_{s_j}
// (TypeOTKeys). It sets x's peer size and peer run.
func senderHandshake(ctx context.Context, net Network, peer string, set *otSet, x *exchange) (*senderRun, error) {
	n := len(set.uniq)
	share := newRunID()
	h := &senderRun{ids: &runs{}}
	m, err := net.Receive(ctx, peer, TypeOTBase)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeOTBase, peer, err)
	}
	nR, peerShare, a, err := decodeHello(m, set.cfg.MaxElements, otWidth, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTBase, peer, err)
	}
	x.peerSize, x.peerRun = nR, h.ids.peer
	br, b := newBaseReceiver(a)
	body, err := encodeHello(x.run, h.ids.peer, n, share, b)
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeOTChoice, err)
	}
	if err := net.Send(ctx, peer, TypeOTChoice, body); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeOTChoice, peer, err)
	}
	h.ids.echo = x.run
	m, err = net.Receive(ctx, peer, TypeOTKeys)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeOTKeys, peer, err)
	}
	cipherText, err := decodeKeys(m, otWidth, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTKeys, peer, err)
	}
	ks, err := br.finish(cipherText)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTKeys, peer, err)
	}
	h.seed = set.seed(peerShare, share)
	h.gs = prgCiphers(ks)
	h.s = br.choice
	for j, c := range br.choice {
		h.sMask[j/8] |= byte(c) << (j % 8)
	}
	h.nR = nR
	h.l = outLen(nR, n)
	return h, nil
}

// oprfValues reads the extension matrix chunk by chunk (TypeOTMatrix):
// q^j = G(k_{s_j}) ⊕ s_j·u^j, as rows q_i = t_i ⊕ (C(r_i) ∧ s). Each
// chunk is used at once, while its rows are in cache, for the values
// whose bin falls in it: for each of our elements y, in the order perm,
// and each hash function h, F(b, q_b ⊕ (C(y, h) ∧ s)) at its bin
// b = h(y). Value (k, h) is at [(k·3+h)·l, (k·3+h+1)·l).
func (h *senderRun) oprfValues(ctx context.Context, net Network, peer string, set *otSet, perm []int) ([]byte, error) {
	keys := newOTKeys(h.seed)
	bins := numBins(h.nR) // nR ≤ MaxElements: checked by decodeHello
	rows := matrixRows(set.cfg)
	l := h.l
	pd := make([][digestLen]byte, len(perm)) // digests in sent order
	for k, u := range perm {
		pd[k] = set.ds[u]
	}
	vals := make([]byte, len(perm)*hashCount*l)
	q := make([]byte, rows*otRowBytes)
	var byChunk [][]binEntry // the values whose bin is in chunk i
	attempt := -1
	for ci := range numChunks(bins, rows) {
		m, err := net.Receive(ctx, peer, TypeOTMatrix)
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeOTMatrix, ci, peer, err)
		}
		att, u, err := decodeOTChunk(m, ci, rows, bins, otRowBytes, attempt, h.ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeOTMatrix, peer, err)
		}
		if attempt < 0 {
			// The first chunk names the cuckoo attempt: now we know
			// every element's bins, and which chunk holds each.
			attempt = att
			byChunk = bucketBins(pd, newCuckooHasher(h.seed, attempt, bins), bins, rows)
		}
		lo, cnt := ci*rows, len(u)/otRowBytes
		extendSender(q, u, cnt, h.gs, h.s, lo)
		entries := byChunk[ci]
		_ = parallel(len(entries), func(elo, ehi int) error {
			buf := newOPRFBuf(&h.seed)
			row := buf.row()
			for i := elo; i < ehi; i++ {
				en := &entries[i]
				b := int(en.b)
				keys.codeWord(row, &en.d, int(en.e)%hashCount)
				qb := q[(b-lo)*otRowBytes : (b-lo+1)*otRowBytes]
				for w := 0; w < otRowBytes; w += 8 {
					v := binary.LittleEndian.Uint64(row[w:])&binary.LittleEndian.Uint64(h.sMask[w:]) ^ binary.LittleEndian.Uint64(qb[w:])
					binary.LittleEndian.PutUint64(row[w:], v)
				}
				buf.out(vals[int(en.e)*l:], b, l)
			}
			return nil
		})
	}
	return vals, nil
}

// sendValues sends the OPRF values in chunks of cfg.ChunkSize elements
// (TypeOTValues).
func (h *senderRun) sendValues(ctx context.Context, net Network, peer string, cfg Config, run, vals []byte) error {
	per := hashCount * h.l
	n := len(vals) / per
	for ci := range numChunks(n, cfg.ChunkSize) {
		lo := ci * cfg.ChunkSize
		cnt := 0
		if n > 0 {
			cnt = chunkLen(n, cfg.ChunkSize, ci)
		}
		chunk, err := marshalChunk(&otChunkBody{Run: run, Echo: h.ids.peer, Total: n, Index: ci, Data: vals[lo*per : (lo+cnt)*per]})
		if err != nil {
			return fmt.Errorf("psi: encode %s chunk %d: %w", TypeOTValues, ci, err)
		}
		if err := net.Send(ctx, peer, TypeOTValues, chunk); err != nil {
			return fmt.Errorf("psi: send %s chunk %d to %s: %w", TypeOTValues, ci, peer, err)
		}
	}
	return nil
}
