package psi

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"sync"

	"github.com/cohortdm/cohort/wire"
)

// otReceive is the OPRF receiver's part of the exchange (package doc):
// the base OTs (receiverHandshake), cuckoo hashing of its digests under
// keys from the joint seed, the OT extension (sendMatrix), and matching
// the sender's OPRF values against its own outputs (matchValues).
//
// firstAttempt is the first cuckoo attempt tried: 0, except in tests of
// the sender's handling of a rehashed table.
func otReceive(ctx context.Context, net Network, peer string, set *otSet, firstAttempt int) (*otReceived, error) {
	h, err := receiverHandshake(ctx, net, peer, set)
	if err != nil {
		return nil, err
	}
	// Rehashing with the next attempt's keys on failure.
	tbl, attempt, err := placeCuckoo(set.ds, h.seed, numBins(len(set.uniq)), firstAttempt)
	if err != nil {
		return nil, fmt.Errorf("psi: OT exchange with %s: %w", peer, err)
	}
	own, err := h.sendMatrix(ctx, net, peer, set, tbl, attempt)
	if err != nil {
		return nil, err
	}
	return h.matchValues(ctx, net, peer, set, tbl, own)
}

// receiverRun is the receiver's state after the base OTs.
type receiverRun struct {
	run      []byte // our run id
	ids      *runs
	bs       *baseSender // our base-OT seeds k0_j, k1_j
	seed     [32]byte    // the joint seed
	peerSize int         // n_S
	l        int         // bytes of an OPRF value
}

// receiverHandshake sends the base OTs' first message with our set size
// and seed share (TypeOTBase), reads the sender's answer (TypeOTChoice)
// and sends both encryptions of each OT's seeds (TypeOTKeys).
func receiverHandshake(ctx context.Context, net Network, peer string, set *otSet) (*receiverRun, error) {
	n := len(set.uniq)
	h := &receiverRun{run: newRunID()}
	h.ids = &runs{echo: h.run}
	share := newRunID() // seedLen random bytes
	bs, a := newBaseSender(otWidth)
	h.bs = bs
	body, err := encodeHello(h.run, nil, n, share, a)
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeOTBase, err)
	}
	if err := net.Send(ctx, peer, TypeOTBase, body); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeOTBase, peer, err)
	}
	m, err := net.Receive(ctx, peer, TypeOTChoice)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeOTChoice, peer, err)
	}
	nS, peerShare, b, err := decodeHello(m, set.cfg.MaxElements, otWidth, h.ids)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTChoice, peer, err)
	}
	keysBody, err := wire.Marshal(&otKeysBody{Run: h.run, Echo: h.ids.peer, Cipher: bs.finish(b)})
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeOTKeys, err)
	}
	if err := net.Send(ctx, peer, TypeOTKeys, keysBody); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeOTKeys, peer, err)
	}
	h.seed = set.seed(share, peerShare)
	h.peerSize = nS
	h.l = outLen(n, nS)
	return h, nil
}

// sendMatrix runs the extension chunk by chunk of rows (TypeOTMatrix):
// the code word of each bin's element under the hash function that
// placed it (a random row for an empty bin), u^j sent, and F(i, t_i)
// kept. It returns the OPRF output of every distinct element u at
// own[u·l:(u+1)·l].
func (h *receiverRun) sendMatrix(ctx context.Context, net Network, peer string, set *otSet, tbl *cuckooTable, attempt int) ([]byte, error) {
	keys := newOTKeys(h.seed)
	bins, l := len(tbl.item), h.l
	g0, g1 := prgCiphers(h.bs.k0), prgCiphers(h.bs.k1)
	own := make([]byte, len(set.uniq)*l)
	rows := matrixRows(set.cfg)
	// One chunk's code rows (then its rows t_i), columns u^j and scratch,
	// reused for every chunk.
	codeBuf, ubuf, tbuf := make([]byte, rows*otRowBytes), make([]byte, rows*otRowBytes), make([]byte, rows*otRowBytes)
	for ci := range numChunks(bins, rows) {
		lo, cnt := ci*rows, chunkLen(bins, rows, ci)
		code := codeBuf[:cnt*otRowBytes]
		_ = parallel(cnt/otBlockRows, func(blo, bhi int) error {
			var s [32]byte
			rand.Read(s[:])
			dummy := mrand.NewChaCha8(s)
			for i := blo * otBlockRows; i < bhi*otBlockRows; i++ {
				row := code[i*otRowBytes : (i+1)*otRowBytes]
				if it := tbl.item[lo+i]; it != 0 {
					keys.codeWord(row, &set.ds[it-1], int(tbl.fn[lo+i]))
				} else {
					_, _ = dummy.Read(row) // an empty bin: a random input nobody can match
				}
			}
			return nil
		})
		cols := extendReceiver(code, cnt, g0, g1, lo, ubuf, tbuf) // code now holds the rows t_i
		chunk, err := marshalChunk(&otChunkBody{Run: h.run, Echo: h.ids.peer, Total: bins, Index: ci, Attempt: attempt, Data: cols})
		if err != nil {
			return nil, fmt.Errorf("psi: encode %s chunk %d: %w", TypeOTMatrix, ci, err)
		}
		if err := net.Send(ctx, peer, TypeOTMatrix, chunk); err != nil {
			return nil, fmt.Errorf("psi: send %s chunk %d to %s: %w", TypeOTMatrix, ci, peer, err)
		}
		_ = parallel(cnt, func(ilo, ihi int) error {
			buf := newOPRFBuf(&h.seed)
			for i := ilo; i < ihi; i++ {
				if it := tbl.item[lo+i]; it != 0 {
					u := int(it - 1)
					copy(buf.row(), code[i*otRowBytes:(i+1)*otRowBytes])
					buf.out(own[u*l:], lo+i, l)
				}
			}
			return nil
		})
	}
	return own, nil
}

// matchValues reads the sender's OPRF values (TypeOTValues), in its
// shuffled order: position k matches our element u if its value under
// u's hash function is u's output.
func (h *receiverRun) matchValues(ctx context.Context, net Network, peer string, set *otSet, tbl *cuckooTable, own []byte) (*otReceived, error) {
	n, l, cfg := len(set.uniq), h.l, set.cfg
	fnOf := make([]uint8, n) // the hash function that placed each element
	outs := newIdxTable(n)
	for i, it := range tbl.item {
		if it != 0 {
			fnOf[it-1] = tbl.fn[i]
			outs.add(prefix64(own[int(it-1)*l:int(it)*l]), it-1)
		}
	}
	x := &otReceived{uniq: set.uniq, of: set.of, matched: make([]int, n), peerSize: h.peerSize, peerRun: h.ids.peer}
	for u := range x.matched {
		x.matched[u] = -1
	}
	for ci := range numChunks(h.peerSize, cfg.ChunkSize) {
		m, err := net.Receive(ctx, peer, TypeOTValues)
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeOTValues, ci, peer, err)
		}
		_, data, err := decodeOTChunk(m, ci, cfg.ChunkSize, h.peerSize, hashCount*l, 0, h.ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeOTValues, peer, err)
		}
		// Look up the chunk's values on every core; the workers' matches
		// are applied after (a cheating sender could make two positions
		// match one element: then either wins, as before).
		cnt := len(data) / (hashCount * l)
		var mu sync.Mutex
		var found [][2]int32 // (element, position) pairs
		_ = parallel(cnt, func(klo, khi int) error {
			var mine [][2]int32
			for k := klo; k < khi; k++ {
				for fn := range hashCount {
					v := data[(k*hashCount+fn)*l : (k*hashCount+fn+1)*l]
					outs.find(prefix64(v), func(u int32) bool {
						if int(fnOf[u]) == fn && string(own[int(u)*l:int(u+1)*l]) == string(v) {
							mine = append(mine, [2]int32{u, int32(ci*cfg.ChunkSize + k)})
							return true
						}
						return false
					})
				}
			}
			mu.Lock()
			found = append(found, mine...)
			mu.Unlock()
			return nil
		})
		for _, m := range found {
			x.matched[m[0]] = int(m[1])
		}
	}
	return x, nil
}
