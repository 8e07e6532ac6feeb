package psi

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// OT is the fast mode: the OT-extension PSI of Kolesnikov, Kumaresan,
// Rosulek and Trieu ("Efficient batched oblivious PRF with applications to
// private set intersection", CCS 2016), semi-honest. The Receiver is the
// OPRF receiver: it learns the intersection and tells the Sender which of
// the Sender's elements matched, so both end with the same Result as ECDH
// would give them. See the package doc for the rounds and the leakage.
// Its zero value uses the default Config.
type OT struct {
	Config Config
	// firstAttempt is the receiver's first cuckoo attempt (tests only).
	firstAttempt int
}

var _ Intersector = OT{}

// Intersect runs the KKRT PSI with peer; the two parties must take
// different roles.
func (o OT) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	if role != Receiver && role != Sender {
		return nil, fmt.Errorf("%w: role %d", ErrConfig, role)
	}
	set, err := otSetup(p, step, peer, o.Config, elems)
	if err != nil {
		return nil, err
	}
	return o.intersect(ctx, p, step, peer, role, set)
}

// intersect runs the exchange on a prepared set (otSetup).
func (o OT) intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, set *otSet) (*Result, error) {
	switch role {
	case Receiver:
		x, err := otReceive(ctx, p, step, peer, set, o.firstAttempt)
		if err != nil {
			return nil, err
		}
		bits := make([]bool, x.peerSize)
		in := make([]bool, len(x.uniq))
		for u, pos := range x.matched {
			if pos >= 0 {
				bits[pos], in[u] = true, true
			}
		}
		if err := sendFilter(ctx, p, step, peer, bits, x.peerRun); err != nil {
			return nil, err
		}
		e := &exchange{uniq: x.uniq, of: x.of, peerSize: x.peerSize}
		return e.result(in), nil
	case Sender:
		return otSendAndFilter(ctx, p, step, peer, set)
	}
	return nil, fmt.Errorf("%w: role %d", ErrConfig, role)
}

// sendFilter sends the OPRF sender (a spoke) one bit per element it sent.
func sendFilter(ctx context.Context, p job.Party, step job.Step, to string, bits []bool, echo []byte) error {
	body, err := encodeFilter(bits, echo)
	if err != nil {
		return fmt.Errorf("psi: encode %s: %w", TypeFilter, err)
	}
	if err := p.Send(ctx, to, step.Message(p.Self(), TypeFilter, body), protocol.DisclosePSIBlinded); err != nil {
		return fmt.Errorf("psi: send %s to %s: %w", TypeFilter, to, err)
	}
	return nil
}

// otSendAndFilter is the OPRF sender's whole part: the exchange, then the
// receiver's filter over its shuffled elements, mapped back to its own.
func otSendAndFilter(ctx context.Context, p job.Party, step job.Step, peer string, set *otSet) (*Result, error) {
	x, err := otSend(ctx, p, step, peer, set)
	if err != nil {
		return nil, err
	}
	m, err := p.Receive(ctx, peer, step.Key(TypeFilter))
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeFilter, peer, err)
	}
	bits, err := decodeFilter(m.Body, len(x.uniq), x.run)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeFilter, peer, err)
	}
	in := make([]bool, len(x.uniq))
	for j, ok := range bits {
		in[x.perm[j]] = ok
	}
	return x.result(in), nil
}

// otReceived is the OPRF receiver's view of a finished exchange.
type otReceived struct {
	uniq     [][]byte
	of       []int
	matched  []int // for each distinct element, the peer's sent position that matched it, or −1
	peerSize int
	peerRun  []byte
}

// matrixRows is the number of extension-matrix rows per TypeOTMatrix
// chunk: as many bytes as a chunk of ChunkSize points, in whole 128-row
// blocks, at least one.
func matrixRows(cfg Config) int {
	return max(otBlockRows, cfg.ChunkSize*PointLen/otRowBytes/otBlockRows*otBlockRows)
}

// otMaxElements caps Config.MaxElements in OT mode, for our own set and
// the peer's announced one: 2^28 elements per side.
const otMaxElements = 1 << 28

// otSet is a party's input to one OT exchange: the checked config, and
// its distinct elements with their digests under the step's domain tag.
type otSet struct {
	cfg  Config
	dg   digester
	uniq [][]byte
	of   []int // position in elems -> index in uniq
	ds   [][digestLen]byte
}

// otSetup checks the arguments, digests the elements under the step's
// domain tag and removes repeats (by digest; two different elements with
// one digest are an error, never a silent merge).
func otSetup(p job.Party, step job.Step, peer string, cfg Config, elems [][]byte) (*otSet, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Positions, bins and value indices are int32 (3 per element).
	cfg.MaxElements = min(cfg.MaxElements, otMaxElements)
	if peer == "" || peer == p.Self() {
		return nil, fmt.Errorf("%w: peer %q for party %q", ErrConfig, peer, p.Self())
	}
	dg := newDigester(DomainTag(step.Job, step.Phase, step.Round, step.Channel, cfg.Edge))
	uniq, of, ds, err := dg.distinctDigests(elems)
	if err != nil {
		return nil, err
	}
	if len(uniq) > cfg.MaxElements {
		return nil, fmt.Errorf("%w: %d distinct elements, limit %d", ErrTooLarge, len(uniq), cfg.MaxElements)
	}
	return &otSet{cfg: cfg, dg: dg, uniq: uniq, of: of, ds: ds}, nil
}

func newRunID() []byte {
	b := make([]byte, runIDLen)
	rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return b
}

// otReceive is the OPRF receiver's part of the exchange (package doc).
//
// firstAttempt is the first cuckoo attempt tried: 0, except in tests of
// the sender's handling of a rehashed table.
func otReceive(ctx context.Context, p job.Party, step job.Step, peer string, set *otSet, firstAttempt int) (*otReceived, error) {
	cfg, dg, uniq, of, ds := set.cfg, set.dg, set.uniq, set.of, set.ds
	n := len(uniq)
	run := newRunID()
	share := newRunID() // seedLen random bytes
	r := &runs{echo: run}

	// Base OTs, round 1: A_j, our size and seed share.
	bs, a := newBaseSender()
	body, err := encodeHello(run, nil, n, share, a)
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeOTBase, err)
	}
	if err := p.Send(ctx, peer, step.Message(p.Self(), TypeOTBase, body), protocol.DisclosePSIBlinded); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeOTBase, peer, err)
	}

	// Round 2 in: B_j, the sender's size and seed share; round 3 out.
	m, err := p.Receive(ctx, peer, step.Key(TypeOTChoice))
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeOTChoice, peer, err)
	}
	nS, peerShare, b, err := decodeHello(m.Body, cfg.MaxElements, r)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTChoice, peer, err)
	}
	keysBody, err := protocol.Marshal(&otKeysBody{Run: run, Echo: r.peer, Cipher: bs.finish(b)})
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeOTKeys, err)
	}
	if err := p.Send(ctx, peer, step.Message(p.Self(), TypeOTKeys, keysBody), protocol.DisclosePSIBlinded); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeOTKeys, peer, err)
	}

	// Cuckoo hashing under keys from the joint seed, rehashing with the
	// next attempt's keys on failure.
	seed := jointSeed(dg, share, peerShare)
	keys := newOTKeys(seed)
	bins := numBins(n)
	tbl, attempt, err := placeCuckoo(ds, seed, bins, firstAttempt)
	if err != nil {
		return nil, fmt.Errorf("psi: OT exchange with %s: %w", peer, err)
	}

	// The extension, chunk by chunk of rows: send u^j, keep F(i, t_i).
	l := outLen(n, nS)
	g0, g1 := prgCiphers(bs.k0), prgCiphers(bs.k1)
	own := make([]byte, n*l) // own[u·l:]: the OPRF output of distinct element u
	rows := matrixRows(cfg)
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
					keys.codeWord(row, &ds[it-1], int(tbl.fn[lo+i]))
				} else {
					_, _ = dummy.Read(row) // an empty bin: a random input nobody can match
				}
			}
			return nil
		})
		cols := extendReceiver(code, cnt, g0, g1, lo, ubuf, tbuf) // code now holds the rows t_i
		chunk, err := protocol.Marshal(&otChunkBody{Run: run, Echo: r.peer, Total: bins, Index: ci, Attempt: attempt, Data: cols})
		if err != nil {
			return nil, fmt.Errorf("psi: encode %s chunk %d: %w", TypeOTMatrix, ci, err)
		}
		if err := p.Send(ctx, peer, step.Message(p.Self(), TypeOTMatrix, chunk), protocol.DisclosePSIBlinded); err != nil {
			return nil, fmt.Errorf("psi: send %s chunk %d to %s: %w", TypeOTMatrix, ci, peer, err)
		}
		_ = parallel(cnt, func(ilo, ihi int) error {
			buf := newOPRFBuf(&seed)
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

	// Our outputs, with the hash function that placed each element.
	fnOf := make([]uint8, n)
	outs := newIdxTable(n)
	for i, it := range tbl.item {
		if it != 0 {
			fnOf[it-1] = tbl.fn[i]
			outs.add(prefix64(own[int(it-1)*l:int(it)*l]), it-1)
		}
	}

	// The sender's values, in its shuffled order: position k matches our
	// element u if its value under u's hash function is u's output.
	x := &otReceived{uniq: uniq, of: of, matched: make([]int, n), peerSize: nS, peerRun: r.peer}
	for u := range x.matched {
		x.matched[u] = -1
	}
	for ci := range numChunks(nS, cfg.ChunkSize) {
		m, err := p.Receive(ctx, peer, step.Key(TypeOTValues))
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeOTValues, ci, peer, err)
		}
		_, data, err := decodeOTChunk(m.Body, ci, cfg.ChunkSize, nS, hashCount*l, 0, r)
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
				for h := range hashCount {
					v := data[(k*hashCount+h)*l : (k*hashCount+h+1)*l]
					outs.find(prefix64(v), func(u int32) bool {
						if int(fnOf[u]) == h && string(own[int(u)*l:int(u+1)*l]) == string(v) {
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

// otSend is the OPRF sender's part of the exchange (package doc).
func otSend(ctx context.Context, p job.Party, step job.Step, peer string, set *otSet) (*exchange, error) {
	cfg, dg, uniq, of, ds := set.cfg, set.dg, set.uniq, set.of, set.ds
	n := len(uniq)
	x := &exchange{uniq: uniq, of: of, run: newRunID()}
	share := newRunID()
	r := &runs{}

	// Base OTs, round 1 in, round 2 out.
	m, err := p.Receive(ctx, peer, step.Key(TypeOTBase))
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeOTBase, peer, err)
	}
	nR, peerShare, a, err := decodeHello(m.Body, cfg.MaxElements, r)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTBase, peer, err)
	}
	x.peerSize, x.peerRun = nR, r.peer
	br, b := newBaseReceiver(a)
	body, err := encodeHello(x.run, r.peer, n, share, b)
	if err != nil {
		return nil, fmt.Errorf("psi: encode %s: %w", TypeOTChoice, err)
	}
	if err := p.Send(ctx, peer, step.Message(p.Self(), TypeOTChoice, body), protocol.DisclosePSIBlinded); err != nil {
		return nil, fmt.Errorf("psi: send %s to %s: %w", TypeOTChoice, peer, err)
	}
	r.echo = x.run

	// Round 3 in: our seeds k_{s_j}.
	m, err = p.Receive(ctx, peer, step.Key(TypeOTKeys))
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeOTKeys, peer, err)
	}
	cipher, err := decodeKeys(m.Body, r)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTKeys, peer, err)
	}
	ks, err := br.finish(cipher)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeOTKeys, peer, err)
	}
	seed := jointSeed(dg, peerShare, share)
	keys := newOTKeys(seed)
	gs := prgCiphers(ks)
	var sMask [otRowBytes]byte
	for j, c := range br.choice {
		sMask[j/8] |= byte(c) << (j % 8)
	}

	// The extension matrix, chunk by chunk: q^j = G(k_{s_j}) ⊕ s_j·u^j,
	// as rows q_i = t_i ⊕ (C(r_i) ∧ s). Each chunk is used at once, while
	// its rows are in cache, for the values whose bin falls in it: for
	// each of our elements y, in a fresh shuffled order, and each hash
	// function h, F(b, q_b ⊕ (C(y, h) ∧ s)) at its bin b = h(y).
	bins := numBins(nR) // nR ≤ MaxElements: checked by decodeHello
	rows := matrixRows(cfg)
	l := outLen(nR, n)
	x.perm = permutation(n)
	pd := make([][digestLen]byte, n) // digests in sent order
	for k, u := range x.perm {
		pd[k] = ds[u]
	}
	vals := make([]byte, n*hashCount*l)
	q := make([]byte, rows*otRowBytes)
	var byChunk [][]binEntry // the values whose bin is in chunk i
	attempt := -1
	for ci := range numChunks(bins, rows) {
		m, err := p.Receive(ctx, peer, step.Key(TypeOTMatrix))
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeOTMatrix, ci, peer, err)
		}
		att, u, err := decodeOTChunk(m.Body, ci, rows, bins, otRowBytes, attempt, r)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeOTMatrix, peer, err)
		}
		if attempt < 0 {
			// The first chunk names the cuckoo attempt: now we know
			// every element's bins, and which chunk holds each.
			attempt = att
			byChunk = bucketBins(pd, newCuckooHasher(seed, attempt, bins), bins, rows)
		}
		lo, cnt := ci*rows, len(u)/otRowBytes
		extendSender(q, u, cnt, gs, br.choice, lo)
		entries := byChunk[ci]
		_ = parallel(len(entries), func(elo, ehi int) error {
			buf := newOPRFBuf(&seed)
			row := buf.row()
			for i := elo; i < ehi; i++ {
				en := &entries[i]
				b := int(en.b)
				keys.codeWord(row, &en.d, int(en.e)%hashCount)
				qb := q[(b-lo)*otRowBytes : (b-lo+1)*otRowBytes]
				for w := 0; w < otRowBytes; w += 8 {
					v := binary.LittleEndian.Uint64(row[w:])&binary.LittleEndian.Uint64(sMask[w:]) ^ binary.LittleEndian.Uint64(qb[w:])
					binary.LittleEndian.PutUint64(row[w:], v)
				}
				buf.out(vals[int(en.e)*l:], b, l)
			}
			return nil
		})
	}
	for ci := range numChunks(n, cfg.ChunkSize) {
		lo := ci * cfg.ChunkSize
		cnt := 0
		if n > 0 {
			cnt = chunkLen(n, cfg.ChunkSize, ci)
		}
		chunk, err := protocol.Marshal(&otChunkBody{Run: x.run, Echo: r.peer, Total: n, Index: ci, Data: vals[lo*hashCount*l : (lo+cnt)*hashCount*l]})
		if err != nil {
			return nil, fmt.Errorf("psi: encode %s chunk %d: %w", TypeOTValues, ci, err)
		}
		if err := p.Send(ctx, peer, step.Message(p.Self(), TypeOTValues, chunk), protocol.DisclosePSIBlinded); err != nil {
			return nil, fmt.Errorf("psi: send %s chunk %d to %s: %w", TypeOTValues, ci, peer, err)
		}
	}
	return x, nil
}
