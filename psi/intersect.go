package psi

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Defaults of Config.
const (
	// DefaultMaxElements bounds each party's distinct set: 4 Mi elements
	// are 128 MiB of blinded values, sent in chunks.
	DefaultMaxElements = 1 << 22
	// DefaultChunkSize is the number of elements per message: 1 MiB of
	// points, well under wire.MaxMessageSize.
	DefaultChunkSize = 1 << 15
)

// Config is the public setting of one PSI; both parties must use the same.
type Config struct {
	// Edge names what the PSI is for (a join edge "L.ssn=S.dealer", an
	// alignment); it enters the domain tag with the step's job, phase,
	// round and channel.
	Edge string
	// MaxElements bounds each party's number of distinct elements
	// (DefaultMaxElements when 0); a larger peer set is refused before it
	// is read.
	MaxElements int
	// ChunkSize is the number of elements per message (DefaultChunkSize
	// when 0). OT mode sends its extension matrix in chunks of as many
	// bytes (whole blocks of 128 bins, at least one).
	ChunkSize int
	// Mode picks the protocol of Align and of Config.Intersector: ModeECDH
	// (the zero value), ModeOT or ModeVOLE. ECDH, OT and VOLE are their
	// own protocol whatever Mode says.
	Mode Mode
	// Store is where this party keeps the unbalanced mode's key and
	// encodings (as a server) and fetched filters (as a client): local,
	// never sent, and not part of what both parties must share. Without
	// one a party cannot serve the unbalanced mode, and as a client it
	// fetches the filter every time.
	Store *Store
}

// Mode is a PSI protocol.
type Mode int

// Modes.
const (
	// ModeECDH is the commutative-blinding PSI on ristretto255 (ECDH).
	ModeECDH Mode = iota
	// ModeOT is the KKRT16 OT-extension PSI (OT): much less CPU, more
	// bytes, and asymmetric (the receiver tells the sender).
	ModeOT
	// ModeAuto exchanges set sizes first and runs ECDH below AutoOTMin
	// elements in all, OT from there and VOLE from AutoVOLEMin (Auto), and
	// the unbalanced mode for
	// very unequal sets whose larger side keeps a Store (pickMode).
	ModeAuto
	// ModeUnbalanced is the unbalanced-set PSI (Unbalanced): the Sender
	// serves its large set from precomputed encodings under a long-term
	// key, the Receiver queries its small one.
	ModeUnbalanced
	// ModeVOLE is the VOLE-based PSI of RR22 (VOLE): like OT, asymmetric,
	// with less CPU and fewer bytes at large sets (package doc).
	ModeVOLE
)

// Intersector returns the two-party protocol of c.Mode with config c.
func (c Config) Intersector() Intersector {
	switch c.Mode {
	case ModeOT:
		return OT{Config: c}
	case ModeAuto:
		return Auto{Config: c}
	case ModeUnbalanced:
		return Unbalanced{Config: c}
	case ModeVOLE:
		return VOLE{Config: c}
	}
	return ECDH{Config: c}
}

// ParseMode reads a mode's name as job params give it: "ecdh", "ot",
// "vole" or "auto".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ecdh":
		return ModeECDH, nil
	case "ot":
		return ModeOT, nil
	case "vole":
		return ModeVOLE, nil
	case "auto":
		return ModeAuto, nil
	}
	return 0, fmt.Errorf("%w: PSI mode %q: want ecdh, ot, vole or auto", ErrConfig, s)
}

func (c Config) withDefaults() (Config, error) {
	if c.MaxElements == 0 {
		c.MaxElements = DefaultMaxElements
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.MaxElements < 0 || c.ChunkSize < 0 || c.ChunkSize > wire.MaxMessageSize/(2*PointLen) || (c.Mode < ModeECDH || c.Mode > ModeVOLE) {
		return c, fmt.Errorf("%w: max elements %d, chunk size %d, mode %d", ErrConfig, c.MaxElements, c.ChunkSize, c.Mode)
	}
	return c, nil
}

// Role says which side of a two-party PSI a party plays. ECDH is
// symmetric and both sides learn the intersection whatever the roles; OT
// is asymmetric: the Receiver computes the intersection and tells it to
// the Sender. The two parties must take
// different roles.
type Role int

// Roles.
const (
	Receiver Role = iota + 1
	Sender
)

// Result is what one party learns from a PSI.
type Result struct {
	// Indices are the positions in the party's elems whose value is in
	// the intersection, ascending; a value given more than once yields
	// every position it was given at.
	Indices []int
	// Size is the number of distinct values in the intersection.
	Size int
	// PeerSize is the number of distinct values the peer put in (0 from
	// Align, where no one peer is meant).
	PeerSize int
}

// Intersector is a two-party PSI protocol: ECDH, OT (the KKRT16
// OT-extension PSI, the fast mode; see the package doc) or Auto. Both
// parties run it with the same config, over networks of the same scope
// (the same step), naming each other as peer and taking different roles;
// both get the intersection as positions in their own elems. Elements
// are arbitrary byte strings, normally EncodeKey's output; repeats are
// allowed and count once.
type Intersector interface {
	// Run runs the PSI with peer over net.
	Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error)
	// Intersect is Run over StepNetwork(p, step), for a job's step.
	Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error)
}

// ECDH is the commutative-blinding PSI on ristretto255 (see the package
// doc for its rounds and leakage). Its zero value uses the default Config.
type ECDH struct {
	Config Config
}

var _ Intersector = ECDH{}

// checkRole refuses a role that is neither Receiver nor Sender.
func checkRole(role Role) error {
	if role != Receiver && role != Sender {
		return fmt.Errorf("%w: role %d", ErrConfig, role)
	}
	return nil
}

// Run runs the symmetric ECDH PSI with peer: both learn the
// intersection. role is checked but does not change the protocol.
func (e ECDH) Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error) {
	if err := checkRole(role); err != nil {
		return nil, err
	}
	x, err := run(ctx, net, peer, e.Config, elems, true, true)
	if err != nil {
		return nil, err
	}
	// Positions in sent order whose double is one of the peer's doubles.
	in := make([]bool, len(x.uniq))
	for _, j := range Match(x.mine, x.theirs) {
		in[x.perm[j]] = true
	}
	return x.result(in), nil
}

// exchange is one party's view of a finished exchange.
type exchange struct {
	run      []byte   // our run id
	peerRun  []byte   // the peer's run id
	uniq     [][]byte // our distinct elements
	of       []int    // for each position in the caller's elems, its index in uniq
	perm     []int    // sent position j held uniq[perm[j]]
	mine     []Point  // our elements double-blinded, in sent order (nil if not asked for)
	theirs   []Point  // the peer's elements double-blinded, in the peer's sent order
	peerSize int
}

// result maps membership of the distinct elements back to the caller's
// positions.
func (x *exchange) result(in []bool) *Result {
	r := &Result{PeerSize: x.peerSize}
	for _, ok := range in {
		if ok {
			r.Size++
		}
	}
	k := 0 // Indices is sized first: appending to 2^19 positions copied 40 MB
	for _, u := range x.of {
		if in[u] {
			k++
		}
	}
	r.Indices = make([]int, 0, k)
	for i, u := range x.of {
		if in[u] {
			r.Indices = append(r.Indices, i)
		}
	}
	return r
}

// run carries out the two rounds of the exchange with peer (package doc).
// With sendDoubles it returns the peer's elements double-blinded to the
// peer; with wantDoubles it waits for its own.
func run(ctx context.Context, net Network, peer string, cfg Config, elems [][]byte, sendDoubles, wantDoubles bool) (*exchange, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if peer == "" || peer == net.Self() {
		return nil, fmt.Errorf("%w: peer %q for party %q", ErrConfig, peer, net.Self())
	}
	x := &exchange{}
	x.uniq, x.of = distinct(elems)
	n := len(x.uniq)
	if n > cfg.MaxElements {
		return nil, fmt.Errorf("%w: %d distinct elements, limit %d", ErrTooLarge, n, cfg.MaxElements)
	}
	dst := net.Scope().tag(cfg.Edge)
	sk := NewSecret()
	x.run = make([]byte, runIDLen)
	if _, err := rand.Read(x.run); err != nil {
		return nil, fmt.Errorf("psi: run id: %w", err)
	}
	ids := &runs{}

	// Round 1: send our blinded set {H(x)^k}, shuffled.
	blinded := HashBlind(x.uniq, dst, sk)
	x.perm = permutation(n)
	sent := make([]Point, n)
	for j, u := range x.perm {
		sent[j] = blinded[u]
	}
	if err := sendChunks(ctx, net, peer, TypeBlinded, sent, cfg.ChunkSize, x.run); err != nil {
		return nil, err
	}

	// Round 1 in, round 2 out: double-blind each chunk of the peer's set
	// as it arrives and, if asked, send it back in the peer's order.
	seen := map[Point]struct{}{}
	total := -1
	for i := 0; i < numChunks(max(total, 0), cfg.ChunkSize); i++ {
		m, err := net.Receive(ctx, peer, TypeBlinded)
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeBlinded, i, peer, err)
		}
		t, chunk, err := decodeChunk(m, i, cfg.ChunkSize, cfg.MaxElements, total, ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeBlinded, peer, err)
		}
		if total < 0 {
			// No allocation sized by the peer's claim: x.theirs grows
			// with what actually arrives.
			total = t
		}
		if err := noRepeats(seen, chunk, i*cfg.ChunkSize); err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeBlinded, peer, err)
		}
		d, err := DoubleBlind(chunk, sk)
		if err != nil {
			return nil, fmt.Errorf("%s from %s chunk %d: %w", TypeBlinded, peer, i, err)
		}
		x.theirs = append(x.theirs, d...)
		if sendDoubles {
			if err := sendChunk(ctx, net, peer, TypeDouble, total, i, d, x.run, ids.peer); err != nil {
				return nil, err
			}
		}
	}
	x.peerSize = total
	x.peerRun = ids.peer
	if !wantDoubles {
		return x, nil
	}

	// Round 2 in: our own set double-blinded, in the order we sent it.
	ids.echo = x.run // doubles answer our set of this run
	if x.mine, err = receiveDoubles(ctx, net, peer, cfg, n, ids); err != nil {
		return nil, err
	}
	return x, nil
}

// receiveDoubles reads our n elements double-blinded by peer
// (TypeDouble), in the order we sent them.
func receiveDoubles(ctx context.Context, net Network, peer string, cfg Config, n int, ids *runs) ([]Point, error) {
	seen := map[Point]struct{}{}
	mine := make([]Point, 0, n)
	for i := range numChunks(n, cfg.ChunkSize) {
		m, err := net.Receive(ctx, peer, TypeDouble)
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeDouble, i, peer, err)
		}
		_, chunk, err := decodeChunk(m, i, cfg.ChunkSize, cfg.MaxElements, n, ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeDouble, peer, err)
		}
		// Distinct elements stay distinct under a bijection; a repeat
		// means the peer is cheating or broken.
		if err := noRepeats(seen, chunk, i*cfg.ChunkSize); err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeDouble, peer, err)
		}
		mine = append(mine, chunk...)
	}
	return mine, nil
}

// noRepeats adds chunk to seen, failing on an element already there.
func noRepeats(seen map[Point]struct{}, chunk []Point, offset int) error {
	for k, q := range chunk {
		if _, ok := seen[q]; ok {
			return fmt.Errorf("%w: %w: element %d repeats an earlier one", ErrPeer, wire.ErrMalformed, offset+k)
		}
		seen[q] = struct{}{}
	}
	return nil
}

// sendChunks sends a whole set as chunks of c elements.
func sendChunks(ctx context.Context, net Network, to, typ string, set []Point, c int, run []byte) error {
	for i := range numChunks(len(set), c) {
		lo := i * c
		if err := sendChunk(ctx, net, to, typ, len(set), i, set[lo:lo+chunkLen(len(set), c, i)], run, nil); err != nil {
			return err
		}
	}
	return nil
}

func sendChunk(ctx context.Context, net Network, to, typ string, total, i int, elems []Point, run, echo []byte) error {
	body, err := encodeChunk(total, i, elems, run, echo)
	if err != nil {
		return fmt.Errorf("psi: encode %s chunk %d: %w", typ, i, err)
	}
	if err := net.Send(ctx, to, typ, body); err != nil {
		return fmt.Errorf("psi: send %s chunk %d to %s: %w", typ, i, to, err)
	}
	return nil
}

// IntersectValues is in's Intersect over string values, as the join kinds
// hold their join values: it returns the values of vals that peer holds
// too, in vals' order.
func IntersectValues(ctx context.Context, in Intersector, p job.Party, step job.Step, peer string, role Role, vals []string) ([]string, error) {
	elems := make([][]byte, len(vals))
	for i, v := range vals {
		elems[i] = []byte(v)
	}
	res, err := in.Intersect(ctx, p, step, peer, role, elems)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Indices))
	for i, k := range res.Indices {
		out[i] = vals[k]
	}
	return out, nil
}
