package lattice

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"slices"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// KeyID names a collective key: the first 16 bytes of a SHA-256 over the
// parameter set, the members, the quorum and the public key.
type KeyID [16]byte

// Digest is a SHA-256 over a domain-separated, length-prefixed encoding.
type Digest [32]byte

// maxName bounds the job and phase names of a Context (as protocol's
// envelope bounds its fields).
const maxName = 256

// Context names one aggregate: the key it is encrypted under and the step
// of the job it belongs to. Every contribution, aggregate, mask, target and
// decryption share carries it and is refused under another, so a share made
// for one aggregate is never combined into another (a replay from another
// job, phase, round or attempt fails the check instead of corrupting a
// result).
type Context struct {
	Key     KeyID
	Job     string
	Phase   string
	Round   int
	Attempt int
}

func (c Context) check() error {
	if c.Job == "" || len(c.Job) > maxName || len(c.Phase) > maxName || c.Round < 0 || c.Attempt < 0 {
		return fmt.Errorf("%w: context needs a job name, names of at most %d bytes, round and attempt ≥ 0", ErrMismatch, maxName)
	}
	return nil
}

// wire is the msgpack form of a Context.
type contextWire struct {
	Key     []byte `msgpack:"key"`
	Job     string `msgpack:"job"`
	Phase   string `msgpack:"phase"`
	Round   int    `msgpack:"round"`
	Attempt int    `msgpack:"attempt"`
}

func (c Context) wire() contextWire {
	return contextWire{Key: c.Key[:], Job: c.Job, Phase: c.Phase, Round: c.Round, Attempt: c.Attempt}
}

func (w contextWire) context() (Context, error) {
	if len(w.Key) != len(KeyID{}) {
		return Context{}, fmt.Errorf("%w: key id of %d bytes", ErrMalformed, len(w.Key))
	}
	c := Context{Job: w.Job, Phase: w.Phase, Round: w.Round, Attempt: w.Attempt}
	copy(c.Key[:], w.Key)
	if err := c.check(); err != nil {
		return Context{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return c, nil
}

// hasher writes a domain-separated, length-prefixed encoding into SHA-256,
// so that no two different sequences of fields hash the same bytes.
type hasher struct{ h hash.Hash }

func newHasher(domain string) *hasher {
	h := &hasher{h: sha256.New()}
	h.bytes([]byte(domain))
	return h
}

func (h *hasher) uint(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.h.Write(b[:])
}

func (h *hasher) bytes(b []byte) {
	h.uint(uint64(len(b)))
	h.h.Write(b)
}

func (h *hasher) context(c Context) {
	h.bytes(c.Key[:])
	h.bytes([]byte(c.Job))
	h.bytes([]byte(c.Phase))
	h.uint(uint64(c.Round))
	h.uint(uint64(c.Attempt))
}

// roster hashes what fixes a key apart from its polynomials.
func (h *hasher) roster(params Params, quorum int, members []string) {
	h.bytes([]byte(params.Name()))
	h.uint(uint64(quorum))
	h.uint(uint64(len(members)))
	for _, m := range members {
		h.bytes([]byte(m))
	}
}

func (h *hasher) ints(v []int) {
	h.uint(uint64(len(v)))
	for _, x := range v {
		h.uint(uint64(x))
	}
}

func (h *hasher) inputs(in []Input) {
	h.uint(uint64(len(in)))
	for _, x := range in {
		h.uint(uint64(x.Party))
		h.h.Write(x.Digest[:])
	}
}

// polys hashes the coefficients of polys in their wire encoding.
func (h *hasher) polys(ps []ring.Poly) {
	h.uint(uint64(len(ps)))
	buf := make([]byte, 0, 8*1024)
	for _, p := range ps {
		for _, row := range p.Coeffs {
			for _, c := range row {
				buf = binary.LittleEndian.AppendUint64(buf, c)
				if len(buf) == cap(buf) {
					h.h.Write(buf)
					buf = buf[:0]
				}
			}
		}
	}
	h.h.Write(buf)
}

func (h *hasher) sum() Digest {
	var d Digest
	h.h.Sum(d[:0])
	return d
}

// Input is one contribution inside an aggregate: the member (its share
// point, 1..N) and the digest of its ciphertexts.
type Input struct {
	Party  int
	Digest Digest
}

type inputWire struct {
	Party  int    `msgpack:"party"`
	Digest []byte `msgpack:"digest"`
}

func inputsWire(in []Input) []inputWire {
	out := make([]inputWire, len(in))
	for i, x := range in {
		out[i] = inputWire{Party: x.Party, Digest: x.Digest[:]}
	}
	return out
}

// inputsFromWire decodes inputs, which must be sorted by party, unique and
// name members 1..members.
func inputsFromWire(w []inputWire, members int) ([]Input, error) {
	out := make([]Input, len(w))
	for i, x := range w {
		if len(x.Digest) != len(Digest{}) {
			return nil, fmt.Errorf("%w: input digest of %d bytes", ErrMalformed, len(x.Digest))
		}
		out[i].Party = x.Party
		copy(out[i].Digest[:], x.Digest)
	}
	if err := checkParties(parties(out), members); err != nil {
		return nil, err
	}
	return out, nil
}

func parties(in []Input) []int {
	out := make([]int, len(in))
	for i, x := range in {
		out[i] = x.Party
	}
	return out
}

// checkParties checks that points are sorted, unique and within 1..members.
func checkParties(points []int, members int) error {
	for i, p := range points {
		if p < 1 || p > members || (i > 0 && points[i-1] >= p) {
			return fmt.Errorf("%w: parties must be sorted, unique members 1..%d", ErrMalformed, members)
		}
	}
	return nil
}

// mergeInputs merges two disjoint sorted input lists.
func mergeInputs(a, b []Input) ([]Input, error) {
	out := make([]Input, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	slices.SortFunc(out, func(x, y Input) int { return x.Party - y.Party })
	for i := 1; i < len(out); i++ {
		if out[i].Party == out[i-1].Party {
			return nil, fmt.Errorf("%w: party %d contributes twice", ErrMismatch, out[i].Party)
		}
	}
	return out, nil
}
