package psi

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Limits of the unbalanced mode (package doc, "Unbalanced sets").
const (
	// UnbalancedMaxServer bounds the server's distinct elements: a
	// fingerprint of h + 40 bits must fit 64 (upMaxHigh).
	UnbalancedMaxServer = 1 << upMaxHigh
	// UnbalancedMinServer is the smallest server set Auto runs the
	// unbalanced mode for: below it OT's fixed 0.13 core-seconds weigh
	// more than a filter saves.
	UnbalancedMinServer = 1 << 12
	// UnbalancedRatio is how many times the client's set the server's must
	// be for Auto to pick the unbalanced mode: the online phase costs
	// about 4 exponentiations per client element (≈ 300 core-µs), against
	// OT's ≈ 2 core-µs per element of either side and ECDH's 140.
	UnbalancedRatio = 64
)

// Unbalanced is the unbalanced-set PSI after Kiss, Liu, Schneider,
// Asokan and Pinkas, "Private Set Intersection for Unequal Set Sizes with
// Mobile Applications" (PETS 2017, "KLSAP17"): the Sender is the server
// (the large set; its Config.Store keeps its long-term key and
// encodings), the Receiver the client. Both learn the intersection. Its
// zero value has no Store and cannot serve.
type Unbalanced struct {
	Config Config
}

var _ Intersector = Unbalanced{}

// Run runs the unbalanced PSI with peer: as the server for role Sender,
// as the client for Receiver.
func (u Unbalanced) Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error) {
	cfg, err := u.Config.withDefaults()
	if err != nil {
		return nil, err
	}
	if peer == "" || peer == net.Self() {
		return nil, fmt.Errorf("%w: peer %q for party %q", ErrConfig, peer, net.Self())
	}
	switch role {
	case Sender:
		if cfg.Store == nil {
			return nil, fmt.Errorf("%w: the unbalanced server needs a Store", ErrConfig)
		}
		s, err := cfg.Store.prepare(elems)
		if err != nil {
			return nil, err
		}
		return upServe(ctx, net, peer, cfg, s)
	case Receiver:
		return upClient(ctx, net, peer, cfg, elems)
	}
	return nil, fmt.Errorf("%w: role %d", ErrConfig, role)
}

// Intersect runs u over StepNetwork(p, step).
func (u Unbalanced) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	return u.Run(ctx, StepNetwork(p, step), peer, role, elems)
}

// upServe is the server's online phase over its prepared state s: offer,
// the filter if the client asks, one exponentiation per query, and the
// client's matches mapped back to the positions of its elems.
func upServe(ctx context.Context, net Network, peer string, cfg Config, s *upServer) (*Result, error) {
	run := newRunID()
	o := upOffer{Run: run, ID: s.key.ID, Epoch: s.key.Epoch, N: s.key.N, FN: s.key.FN, H: s.key.H}
	if err := sendBody(ctx, net, peer, TypeUpOffer, &o); err != nil {
		return nil, err
	}
	b, err := receive(ctx, net, peer, TypeUpFetch)
	if err != nil {
		return nil, err
	}
	f, err := decodeFetch(b, run)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeUpFetch, peer, err)
	}
	if f.Fetch {
		if err := sendUpFilter(ctx, net, peer, cfg.Store, s, f.Run); err != nil {
			return nil, err
		}
	}
	ids := &runs{peer: f.Run, echo: run}
	total := -1
	for i := 0; i < numChunks(max(total, 0), cfg.ChunkSize); i++ {
		m, err := receive(ctx, net, peer, TypeUpQuery)
		if err != nil {
			return nil, err
		}
		t, chunk, err := decodeChunk(m, i, cfg.ChunkSize, cfg.MaxElements, total, ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeUpQuery, peer, err)
		}
		total = t
		d, err := DoubleBlind(chunk, s.k) // H(x)^(r·k)
		if err != nil {
			return nil, fmt.Errorf("%s from %s chunk %d: %w", TypeUpQuery, peer, i, err)
		}
		if err := sendChunk(ctx, net, peer, TypeUpEval, total, i, d, run, f.Run); err != nil {
			return nil, err
		}
	}
	if b, err = receive(ctx, net, peer, TypeUpMatch); err != nil {
		return nil, err
	}
	matched, err := decodeMatch(b, total, s.key.H, run)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeUpMatch, peer, err)
	}
	return s.result(matched, total), nil
}

// result maps the client's matched fingerprints to the positions of the
// server's elems holding them.
func (s *upServer) result(matched []uint64, peerSize int) *Result {
	want := make(map[uint64]bool, len(matched))
	// The fingerprints are uniform: a bitmap of their low 16 bits turns
	// away almost every position of a 2^24 set with one bit test before
	// the map is asked.
	var sieve [1 << 16 / 64]uint64
	for _, v := range matched {
		want[v] = false
		sieve[v&0xffff/64] |= 1 << (v & 63)
	}
	r := &Result{Indices: []int{}, PeerSize: peerSize}
	for i, v := range s.enc {
		if sieve[v&0xffff/64]&(1<<(v&63)) == 0 {
			continue
		}
		if hit, ok := want[v]; ok {
			r.Indices = append(r.Indices, i)
			if !hit {
				want[v] = true
				r.Size++
			}
		}
	}
	return r
}

// sendUpFilter sends the filter of s in chunks to the client of run.
func sendUpFilter(ctx context.Context, net Network, peer string, st *Store, s *upServer, run []byte) error {
	filter, err := st.filterBytes(s)
	if err != nil {
		return err
	}
	for i := 0; i == 0 || i*upFilterChunk < len(filter); i++ {
		p := upFilterPart{Echo: run, Index: i, Bytes: filter[i*upFilterChunk : min(len(filter), (i+1)*upFilterChunk)]}
		if err := sendBody(ctx, net, peer, TypeUpFilter, &p); err != nil {
			return err
		}
	}
	return nil
}

// upClient is the client's side: the offer, the filter from its cache or
// the server, its blinded queries, and the matches it finds.
func upClient(ctx context.Context, net Network, peer string, cfg Config, elems [][]byte) (*Result, error) {
	uniq, of := distinct(elems)
	n := len(uniq)
	if n > cfg.MaxElements {
		return nil, fmt.Errorf("%w: %d distinct elements, limit %d", ErrTooLarge, n, cfg.MaxElements)
	}
	b, err := receive(ctx, net, peer, TypeUpOffer)
	if err != nil {
		return nil, err
	}
	o, err := decodeOffer(b)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeUpOffer, peer, err)
	}
	var f *upFilter
	if cfg.Store != nil {
		f = cfg.Store.cachedFilter(peer, o)
	}
	run := newRunID()
	if err := sendBody(ctx, net, peer, TypeUpFetch, &upFetch{Run: run, Echo: o.Run, Fetch: f == nil}); err != nil {
		return nil, err
	}
	// The queries go out before the filter comes in: the server answers
	// them after sending it.
	r := NewSecret()
	perm := permutation(n)
	sent := make([][]byte, n)
	for j, u := range perm {
		sent[j] = uniq[u]
	}
	q := HashBlind(sent, upTag(o.ID, o.Epoch), r)
	for i := range numChunks(n, cfg.ChunkSize) {
		lo := i * cfg.ChunkSize
		if err := sendChunk(ctx, net, peer, TypeUpQuery, n, i, q[lo:lo+chunkLen(n, cfg.ChunkSize, i)], run, o.Run); err != nil {
			return nil, err
		}
	}
	if f == nil {
		if f, err = fetchFilter(ctx, net, peer, cfg.Store, o, run); err != nil {
			return nil, err
		}
	}
	evals, err := receiveEvals(ctx, net, peer, cfg, n, &runs{peer: o.Run, echo: run})
	if err != nil {
		return nil, err
	}
	// H(x)^k = (H(x)^(r·k))^(1/r); DoubleBlind also refuses what is not
	// a canonical, non-identity point.
	inv := &Secret{k: r.k.Copy()}
	inv.k.Inv(r.k)
	oprf, err := DoubleBlind(evals, inv)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeUpEval, peer, err)
	}
	in := make([]bool, n)
	var matched []uint64
	for j := range oprf {
		if v := fingerprint(&oprf[j], o.H); f.contains(v) {
			in[perm[j]] = true
			matched = append(matched, v)
		}
	}
	slices.Sort(matched)
	matched = slices.Compact(matched)
	fps := make([]byte, 0, 8*len(matched))
	for _, v := range matched {
		fps = binary.BigEndian.AppendUint64(fps, v)
	}
	if err := sendBody(ctx, net, peer, TypeUpMatch, &upMatch{Echo: o.Run, FPs: fps}); err != nil {
		return nil, err
	}
	x := &exchange{uniq: uniq, of: of, peerSize: o.N}
	return x.result(in), nil
}

// fetchFilter receives the filter the offer o names, decodes it strictly
// and keeps it in st (when there is one) for the next exchange.
func fetchFilter(ctx context.Context, net Network, peer string, st *Store, o *upOffer, run []byte) (*upFilter, error) {
	total := filterLen(o.FN, o.H)
	buf := make([]byte, 0, total) // bounded: decodeOffer checked FN and H
	for i := 0; i == 0 || len(buf) < total; i++ {
		b, err := receive(ctx, net, peer, TypeUpFilter)
		if err != nil {
			return nil, err
		}
		part, err := decodeFilterPart(b, i, total, run)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeUpFilter, peer, err)
		}
		buf = append(buf, part...)
	}
	f, err := decodeUpFilter(buf, o.FN, o.H)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeUpFilter, peer, err)
	}
	if st != nil {
		if err := st.keepFilter(peer, o, buf); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// receiveEvals reads the server's n answers (TypeUpEval) in order.
func receiveEvals(ctx context.Context, net Network, peer string, cfg Config, n int, ids *runs) ([]Point, error) {
	out := make([]Point, 0, n)
	for i := range numChunks(n, cfg.ChunkSize) {
		m, err := receive(ctx, net, peer, TypeUpEval)
		if err != nil {
			return nil, err
		}
		_, chunk, err := decodeChunk(m, i, cfg.ChunkSize, cfg.MaxElements, n, ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeUpEval, peer, err)
		}
		out = append(out, chunk...)
	}
	return out, nil
}

// sendBody sends body, msgpack-encoded, as a message of type typ.
func sendBody(ctx context.Context, net Network, to, typ string, body any) error {
	b, err := wire.Marshal(body)
	if err != nil {
		return fmt.Errorf("psi: encode %s: %w", typ, err)
	}
	if err := net.Send(ctx, to, typ, b); err != nil {
		return fmt.Errorf("psi: send %s to %s: %w", typ, to, err)
	}
	return nil
}

// receive receives the next message of type typ from peer.
func receive(ctx context.Context, net Network, from, typ string) ([]byte, error) {
	b, err := net.Receive(ctx, from, typ)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", typ, from, err)
	}
	return b, nil
}
