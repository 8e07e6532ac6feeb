package psi

import (
	"bytes"
	"fmt"

	"github.com/cohortdm/cohort/wire"
)

// Message types. Each travels in a wire.Message that carries the
// step's job, phase, round, attempt and channel, so messages of different
// steps, attempts or edges never answer each other's receives. All carry
// the disclosure wire.DisclosePSIBlinded.
const (
	// TypeBlinded carries one chunk of a party's blinded set {H(x)^k},
	// shuffled.
	TypeBlinded = "psi/blinded"
	// TypeDouble carries one chunk of the peer's blinded set raised to our
	// secret, {H(y)^(k_peer·k)}, in the order the peer sent it.
	TypeDouble = "psi/double"
	// TypeFilter carries, from the hub of an Align to a spoke, one bit per
	// element the spoke sent: whether it is in every party's set.
	TypeFilter = "psi/filter"
)

// chunkBody is the body of blinded and double messages: chunk Index of a
// set of Total elements, as concatenated 32-byte encodings. Chunk i holds
// elements [i·c, min((i+1)·c, Total)) for the chunk size c of Config; an
// empty set is one empty chunk.
type chunkBody struct {
	Total int    `msgpack:"n"`
	Index int    `msgpack:"i"`
	Elems []byte `msgpack:"e"`
	// Run is the sender's run id (runIDLen random bytes, fresh per run
	// of the exchange); Echo, on double chunks, is the run id of the set
	// they answer. A party that restarts mid-exchange draws a new secret
	// and a new run id, and the ids let both sides see it instead of
	// mixing two secrets into a wrong intersection.
	Run  []byte `msgpack:"r"`
	Echo []byte `msgpack:"a,omitempty"`
}

// filterBody is the body of a filter message: bit k (LSB first) of Bits
// says whether the spoke's k-th sent element is in the intersection.
type filterBody struct {
	Total int    `msgpack:"n"`
	Bits  []byte `msgpack:"b"`
	Echo  []byte `msgpack:"a"` // the spoke's run id the filter answers
}

// runIDLen is the length of a run id: random, so two runs never share one.
const runIDLen = 16

// runs ties the messages of one run of an exchange together.
type runs struct {
	// peer is the peer's run id, fixed by its first chunk (nil until then).
	peer []byte
	// echo is the run id answers must echo (ours); nil where the messages
	// answer nothing of ours.
	echo []byte
}

// check accepts a message's run and echo ids, or says which side restarted.
func (r *runs) check(run, echo []byte) error {
	if len(run) != runIDLen {
		return fmt.Errorf("%w: %w: run id of %d bytes, want %d", ErrPeer, wire.ErrMalformed, len(run), runIDLen)
	}
	if r.peer == nil {
		r.peer = bytes.Clone(run)
	} else if !bytes.Equal(run, r.peer) {
		return fmt.Errorf("%w: the peer's messages come from a new run of it", ErrRestarted)
	}
	if r.echo != nil && !bytes.Equal(echo, r.echo) {
		return fmt.Errorf("%w: the peer answers a set this party sent before it restarted", ErrRestarted)
	}
	return nil
}

// numChunks is how many chunks of c elements carry a set of n.
func numChunks(n, c int) int {
	if n == 0 {
		return 1
	}
	return (n + c - 1) / c
}

// chunkLen is how many elements chunk i of a set of n carries.
func chunkLen(n, c, i int) int {
	return min(c, n-i*c)
}

// encodeChunk encodes chunk index of a set of total elements, sent by run
// (and answering the set of run echo, for doubles).
func encodeChunk(total, index int, elems []Point, run, echo []byte) ([]byte, error) {
	b := make([]byte, 0, len(elems)*PointLen)
	for i := range elems {
		b = append(b, elems[i][:]...)
	}
	return wire.Marshal(&chunkBody{Total: total, Index: index, Elems: b, Run: run, Echo: echo})
}

// decodeChunk decodes chunk index of a peer's set strictly: Total must be
// in [0, max] and equal total when total ≥ 0 (the first chunk fixes it),
// the index must be the one expected, and the chunk must carry exactly
// the elements its position calls for, from the run r expects. It returns
// the set's total and the chunk's encodings (their validity as points is
// DoubleBlind's to check).
func decodeChunk(b []byte, index, chunk, max, total int, r *runs) (int, []Point, error) {
	var body chunkBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if err := r.check(body.Run, body.Echo); err != nil {
		return 0, nil, err
	}
	switch {
	case body.Total < 0 || body.Total > max:
		return 0, nil, fmt.Errorf("%w: %w: peer's set has %d elements, limit %d", ErrPeer, ErrTooLarge, body.Total, max)
	case total >= 0 && body.Total != total:
		return 0, nil, fmt.Errorf("%w: %w: chunk says the set has %d elements, expected %d", ErrPeer, wire.ErrMalformed, body.Total, total)
	case body.Index != index || index >= numChunks(body.Total, chunk):
		return 0, nil, fmt.Errorf("%w: %w: chunk %d, expected %d of %d", ErrPeer, wire.ErrMalformed, body.Index, index, numChunks(body.Total, chunk))
	}
	n := chunkLen(body.Total, chunk, index)
	if len(body.Elems) != n*PointLen {
		return 0, nil, fmt.Errorf("%w: %w: chunk %d holds %d bytes, expected %d elements of %d", ErrPeer, wire.ErrMalformed, index, len(body.Elems), n, PointLen)
	}
	out := make([]Point, n)
	for i := range out {
		copy(out[i][:], body.Elems[i*PointLen:])
	}
	return body.Total, out, nil
}

// encodeFilter encodes one bit per element of the spoke's run echo.
func encodeFilter(in []bool, echo []byte) ([]byte, error) {
	bits := make([]byte, (len(in)+7)/8)
	for k, ok := range in {
		if ok {
			bits[k/8] |= 1 << (k % 8)
		}
	}
	return wire.Marshal(&filterBody{Total: len(in), Bits: bits, Echo: echo})
}

// decodeFilter decodes a filter over the total elements run sent,
// strictly: the right length, no bit set beyond the last element, and an
// answer to this run, not to one before a restart.
func decodeFilter(b []byte, total int, run []byte) ([]bool, error) {
	var body filterBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if !bytes.Equal(body.Echo, run) {
		return nil, fmt.Errorf("%w: the hub's filter answers a set this party sent before it restarted", ErrRestarted)
	}
	if body.Total != total || len(body.Bits) != (total+7)/8 {
		return nil, fmt.Errorf("%w: %w: filter over %d elements in %d bytes, we sent %d", ErrPeer, wire.ErrMalformed, body.Total, len(body.Bits), total)
	}
	if r := total % 8; r != 0 && body.Bits[len(body.Bits)-1]>>r != 0 {
		return nil, fmt.Errorf("%w: %w: filter sets bits beyond element %d", ErrPeer, wire.ErrMalformed, total)
	}
	out := make([]bool, total)
	for k := range out {
		out[k] = body.Bits[k/8]&(1<<(k%8)) != 0
	}
	return out, nil
}
