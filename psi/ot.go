package psi

import (
	"context"
	"crypto/rand"
	"fmt"
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

// Run runs the KKRT PSI with peer; the two parties must take
// different roles.
func (o OT) Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error) {
	if err := checkRole(role); err != nil {
		return nil, err
	}
	set, err := otSetup(net, peer, o.Config, elems)
	if err != nil {
		return nil, err
	}
	return o.intersect(ctx, net, peer, role, set)
}

// intersect runs the exchange on a prepared set (otSetup).
func (o OT) intersect(ctx context.Context, net Network, peer string, role Role, set *otSet) (*Result, error) {
	switch role {
	case Receiver:
		x, err := otReceive(ctx, net, peer, set, o.firstAttempt)
		if err != nil {
			return nil, err
		}
		return x.filterAndResult(ctx, net, peer)
	case Sender:
		return otSendAndFilter(ctx, net, peer, set)
	}
	return nil, fmt.Errorf("%w: role %d", ErrConfig, role)
}

// filterAndResult ends the receiver's side of an OPRF-based exchange (OT
// or VOLE): it tells the sender which of its shuffled elements matched
// (the filter) and returns the receiver's Result.
func (x *otReceived) filterAndResult(ctx context.Context, net Network, peer string) (*Result, error) {
	bits := make([]bool, x.peerSize)
	in := make([]bool, len(x.uniq))
	for u, pos := range x.matched {
		if pos >= 0 {
			bits[pos], in[u] = true, true
		}
	}
	if err := sendFilter(ctx, net, peer, bits, x.peerRun); err != nil {
		return nil, err
	}
	e := &exchange{uniq: x.uniq, of: x.of, peerSize: x.peerSize}
	return e.result(in), nil
}

// sendFilter sends the OPRF sender (a spoke) one bit per element it sent.
func sendFilter(ctx context.Context, net Network, to string, bits []bool, echo []byte) error {
	body, err := encodeFilter(bits, echo)
	if err != nil {
		return fmt.Errorf("psi: encode %s: %w", TypeFilter, err)
	}
	if err := net.Send(ctx, to, TypeFilter, body); err != nil {
		return fmt.Errorf("psi: send %s to %s: %w", TypeFilter, to, err)
	}
	return nil
}

// otSendAndFilter is the OPRF sender's whole part: the exchange, then the
// receiver's filter over its shuffled elements, mapped back to its own.
func otSendAndFilter(ctx context.Context, net Network, peer string, set *otSet) (*Result, error) {
	x, err := otSend(ctx, net, peer, set)
	if err != nil {
		return nil, err
	}
	return receiveFilter(ctx, net, peer, x)
}

// receiveFilter reads the filter (TypeFilter) that answers the elements
// of exchange x, one bit per element in the order sent, and maps it back
// to the caller's positions.
func receiveFilter(ctx context.Context, net Network, peer string, x *exchange) (*Result, error) {
	m, err := net.Receive(ctx, peer, TypeFilter)
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeFilter, peer, err)
	}
	bits, err := decodeFilter(m, len(x.uniq), x.run)
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
	// seeded is set once seed has re-keyed ds: a set serves one exchange.
	seeded bool
}

// seed is the joint seed of the receiver's and the sender's shares, and
// re-keys the set's digests under it (digester): every use of a digest
// after the handshake sees the re-keyed one, on both sides.
func (s *otSet) seed(recvShare, sendShare []byte) [32]byte {
	if s.seeded {
		panic("psi: internal error: a prepared set seeded twice")
	}
	seed := jointSeed(s.dg, recvShare, sendShare)
	rekey(s.ds, seed)
	s.seeded = true
	return seed
}

// otSetup checks the arguments, digests the elements under the step's
// domain tag and removes repeats (by digest; two different elements with
// one digest are an error, never a silent merge).
func otSetup(net Network, peer string, cfg Config, elems [][]byte) (*otSet, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Positions, bins and value indices are int32 (3 per element).
	cfg.MaxElements = min(cfg.MaxElements, otMaxElements)
	if peer == "" || peer == net.Self() {
		return nil, fmt.Errorf("%w: peer %q for party %q", ErrConfig, peer, net.Self())
	}
	dg := newDigester(net.Scope().tag(cfg.Edge))
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
