package psi

import (
	"bytes"
	"fmt"

	"github.com/cohortdm/cohort/wire"
)

// Messages of the unbalanced mode (see the package doc, "Unbalanced
// sets"). Query and eval chunks are chunkBody, as ECDH's.
const (
	// TypeUpOffer (server → client) names the server's filter: its id,
	// epoch and sizes.
	TypeUpOffer = "psi/up-offer"
	// TypeUpFetch (client → server) says whether the client needs the
	// filter (it has none of this epoch).
	TypeUpFetch = "psi/up-fetch"
	// TypeUpFilter (server → client) carries one chunk of the filter.
	TypeUpFilter = "psi/up-filter"
	// TypeUpQuery (client → server) carries a chunk of the client's
	// blinded set {H(x)^r}, shuffled.
	TypeUpQuery = "psi/up-query"
	// TypeUpEval (server → client) carries a chunk of the queries raised
	// to the server's key, {H(x)^(r·k)}, in the order received.
	TypeUpEval = "psi/up-eval"
	// TypeUpMatch (client → server) carries the fingerprints of the
	// client's values that matched, ascending, so the server learns the
	// intersection too.
	TypeUpMatch = "psi/up-match"
)

// upFilterChunk is the bytes of filter per TypeUpFilter message.
const upFilterChunk = 4 << 20

// upOffer is the body of TypeUpOffer.
type upOffer struct {
	Run   []byte `msgpack:"r"`
	ID    []byte `msgpack:"id"`
	Epoch []byte `msgpack:"e"`
	N     int    `msgpack:"n"`  // the server's distinct elements
	FN    int    `msgpack:"fn"` // the filter's fingerprints
	H     uint   `msgpack:"h"`
}

// decodeOffer decodes an offer strictly: ids of their length, N within
// UnbalancedMaxServer, a filter of FN ≤ N fingerprints of a shape
// checkFilterShape accepts.
func decodeOffer(b []byte) (*upOffer, error) {
	var o upOffer
	if err := wire.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if len(o.Run) != runIDLen || len(o.ID) != upIDLen || len(o.Epoch) != upIDLen {
		return nil, fmt.Errorf("%w: %w: offer ids of %d, %d and %d bytes", ErrPeer, wire.ErrMalformed, len(o.Run), len(o.ID), len(o.Epoch))
	}
	if o.N < 0 || o.N > UnbalancedMaxServer {
		return nil, fmt.Errorf("%w: %w: the server announces %d elements, limit %d", ErrPeer, ErrTooLarge, o.N, UnbalancedMaxServer)
	}
	if o.FN > o.N || o.FN < 0 {
		return nil, fmt.Errorf("%w: %w: a filter of %d fingerprints for %d elements", ErrPeer, wire.ErrMalformed, o.FN, o.N)
	}
	if err := checkFilterShape(o.FN, o.H); err != nil {
		return nil, err
	}
	return &o, nil
}

// upFetch is the body of TypeUpFetch.
type upFetch struct {
	Run   []byte `msgpack:"r"` // the client's run id
	Echo  []byte `msgpack:"a"` // the offer's
	Fetch bool   `msgpack:"f"`
}

// decodeFetch decodes a fetch answering run.
func decodeFetch(b []byte, run []byte) (*upFetch, error) {
	var f upFetch
	if err := wire.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if len(f.Run) != runIDLen {
		return nil, fmt.Errorf("%w: %w: run id of %d bytes", ErrPeer, wire.ErrMalformed, len(f.Run))
	}
	if !bytes.Equal(f.Echo, run) {
		return nil, fmt.Errorf("%w: the client answers an offer this party made before it restarted", ErrRestarted)
	}
	return &f, nil
}

// upFilterPart is the body of TypeUpFilter: chunk Index of the filter.
type upFilterPart struct {
	Echo  []byte `msgpack:"a"` // the client's run id
	Index int    `msgpack:"i"`
	Bytes []byte `msgpack:"b"`
}

// decodeFilterPart decodes chunk index of a filter of total bytes,
// answering run: the chunk must be that index and hold exactly its bytes.
func decodeFilterPart(b []byte, index, total int, run []byte) ([]byte, error) {
	var p upFilterPart
	if err := wire.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if !bytes.Equal(p.Echo, run) {
		return nil, fmt.Errorf("%w: the filter answers a fetch this party made before it restarted", ErrRestarted)
	}
	want := min(upFilterChunk, total-index*upFilterChunk)
	if p.Index != index || want < 0 || len(p.Bytes) != want {
		return nil, fmt.Errorf("%w: %w: filter chunk %d of %d bytes, want chunk %d of %d", ErrPeer, wire.ErrMalformed, p.Index, len(p.Bytes), index, want)
	}
	return p.Bytes, nil
}

// upMatch is the body of TypeUpMatch.
type upMatch struct {
	Echo []byte `msgpack:"a"` // the offer's run id
	FPs  []byte `msgpack:"f"` // 8-byte big-endian fingerprints, ascending
}

// decodeMatch decodes the client's matched fingerprints strictly: at most
// max of them (the client's set size), each below 2^(h+40), strictly
// ascending, answering run.
func decodeMatch(b []byte, max int, h uint, run []byte) ([]uint64, error) {
	var m upMatch
	if err := wire.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if !bytes.Equal(m.Echo, run) {
		return nil, fmt.Errorf("%w: the client's matches answer an offer this party made before it restarted", ErrRestarted)
	}
	if len(m.FPs)%8 != 0 || len(m.FPs)/8 > max {
		return nil, fmt.Errorf("%w: %w: %d bytes of matches for a set of %d", ErrPeer, wire.ErrMalformed, len(m.FPs), max)
	}
	out := make([]uint64, len(m.FPs)/8)
	for i := range out {
		v := uint64(0)
		for _, c := range m.FPs[8*i : 8*i+8] {
			v = v<<8 | uint64(c)
		}
		if v>>(h+fpLowBits) != 0 || (i > 0 && v <= out[i-1]) {
			return nil, fmt.Errorf("%w: %w: match %d out of range or order", ErrPeer, wire.ErrMalformed, i)
		}
		out[i] = v
	}
	return out, nil
}
