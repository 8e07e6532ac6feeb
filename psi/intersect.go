package psi

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Defaults of Config.
const (
	// DefaultMaxElements bounds each party's distinct set: 4 Mi elements
	// are 128 MiB of blinded values, sent in chunks.
	DefaultMaxElements = 1 << 22
	// DefaultChunkSize is the number of elements per message: 1 MiB of
	// points, well under protocol.MaxMessageSize.
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
	// (the zero value) or ModeOT. ECDH and OT are their own protocol
	// whatever Mode says.
	Mode Mode
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
	// elements in all, OT from there (Auto).
	ModeAuto
)

// Intersector returns the two-party protocol of c.Mode with config c.
func (c Config) Intersector() Intersector {
	switch c.Mode {
	case ModeOT:
		return OT{Config: c}
	case ModeAuto:
		return Auto{Config: c}
	}
	return ECDH{Config: c}
}

// ParseMode reads a mode's name as job params give it: "ecdh", "ot" or
// "auto".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ecdh":
		return ModeECDH, nil
	case "ot":
		return ModeOT, nil
	case "auto":
		return ModeAuto, nil
	}
	return 0, fmt.Errorf("%w: PSI mode %q: want ecdh, ot or auto", ErrConfig, s)
}

func (c Config) withDefaults() (Config, error) {
	if c.MaxElements == 0 {
		c.MaxElements = DefaultMaxElements
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.MaxElements < 0 || c.ChunkSize < 0 || c.ChunkSize > protocol.MaxMessageSize/(2*PointLen) || (c.Mode != ModeECDH && c.Mode != ModeOT && c.Mode != ModeAuto) {
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

// Intersector is a two-party PSI protocol run over job.Party: ECDH, or
// OT, the KKRT16 OT-extension PSI (the fast mode; see the package doc). Both parties call Intersect with the same step and
// config, naming each other as peer and taking different roles; both get
// the intersection as positions in their own elems. Elements are
// arbitrary byte strings, normally EncodeKey's output; repeats are
// allowed and count once.
type Intersector interface {
	Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error)
}

// ECDH is the commutative-blinding PSI on ristretto255 (see the package
// doc for its rounds and leakage). Its zero value uses the default Config.
type ECDH struct {
	Config Config
}

var _ Intersector = ECDH{}

// Intersect runs the symmetric ECDH PSI with peer: both learn the
// intersection. role is checked but does not change the protocol.
func (e ECDH) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	if role != Receiver && role != Sender {
		return nil, fmt.Errorf("%w: role %d", ErrConfig, role)
	}
	x, err := run(ctx, p, step, peer, e.Config, elems, true, true)
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
	r := &Result{PeerSize: x.peerSize, Indices: []int{}}
	for _, ok := range in {
		if ok {
			r.Size++
		}
	}
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
func run(ctx context.Context, p job.Party, step job.Step, peer string, cfg Config, elems [][]byte, sendDoubles, wantDoubles bool) (*exchange, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if peer == "" || peer == p.Self() {
		return nil, fmt.Errorf("%w: peer %q for party %q", ErrConfig, peer, p.Self())
	}
	x := &exchange{}
	x.uniq, x.of = distinct(elems)
	n := len(x.uniq)
	if n > cfg.MaxElements {
		return nil, fmt.Errorf("%w: %d distinct elements, limit %d", ErrTooLarge, n, cfg.MaxElements)
	}
	dst := DomainTag(step.Job, step.Phase, step.Round, step.Channel, cfg.Edge)
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
	if err := sendChunks(ctx, p, step, peer, TypeBlinded, sent, cfg.ChunkSize, x.run); err != nil {
		return nil, err
	}

	// Round 1 in, round 2 out: double-blind each chunk of the peer's set
	// as it arrives and, if asked, send it back in the peer's order.
	seen := map[Point]struct{}{}
	total := -1
	for i := 0; i < numChunks(max(total, 0), cfg.ChunkSize); i++ {
		m, err := p.Receive(ctx, peer, step.Key(TypeBlinded))
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeBlinded, i, peer, err)
		}
		t, chunk, err := decodeChunk(m.Body, i, cfg.ChunkSize, cfg.MaxElements, total, ids)
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
			if err := sendChunk(ctx, p, step, peer, TypeDouble, total, i, d, x.run, ids.peer); err != nil {
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
	clear(seen)
	ids.echo = x.run // doubles answer our set of this run
	x.mine = make([]Point, 0, n)
	for i := range numChunks(n, cfg.ChunkSize) {
		m, err := p.Receive(ctx, peer, step.Key(TypeDouble))
		if err != nil {
			return nil, fmt.Errorf("psi: receive %s chunk %d from %s: %w", TypeDouble, i, peer, err)
		}
		_, chunk, err := decodeChunk(m.Body, i, cfg.ChunkSize, cfg.MaxElements, n, ids)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeDouble, peer, err)
		}
		// Distinct elements stay distinct under a bijection; a repeat
		// means the peer is cheating or broken.
		if err := noRepeats(seen, chunk, i*cfg.ChunkSize); err != nil {
			return nil, fmt.Errorf("%s from %s: %w", TypeDouble, peer, err)
		}
		x.mine = append(x.mine, chunk...)
	}
	return x, nil
}

// noRepeats adds chunk to seen, failing on an element already there.
func noRepeats(seen map[Point]struct{}, chunk []Point, offset int) error {
	for k, q := range chunk {
		if _, ok := seen[q]; ok {
			return fmt.Errorf("%w: %w: element %d repeats an earlier one", ErrPeer, protocol.ErrMalformed, offset+k)
		}
		seen[q] = struct{}{}
	}
	return nil
}

// sendChunks sends a whole set as chunks of c elements.
func sendChunks(ctx context.Context, p job.Party, step job.Step, to, typ string, set []Point, c int, run []byte) error {
	for i := range numChunks(len(set), c) {
		lo := i * c
		if err := sendChunk(ctx, p, step, to, typ, len(set), i, set[lo:lo+chunkLen(len(set), c, i)], run, nil); err != nil {
			return err
		}
	}
	return nil
}

func sendChunk(ctx context.Context, p job.Party, step job.Step, to, typ string, total, i int, elems []Point, run, echo []byte) error {
	body, err := encodeChunk(total, i, elems, run, echo)
	if err != nil {
		return fmt.Errorf("psi: encode %s chunk %d: %w", typ, i, err)
	}
	if err := p.Send(ctx, to, step.Message(p.Self(), typ, body), protocol.DisclosePSIBlinded); err != nil {
		return fmt.Errorf("psi: send %s chunk %d to %s: %w", typ, i, to, err)
	}
	return nil
}

// Align intersects the sets of several parties (issue 13: aligning record
// ids), as a star around hub: every other party runs a one-sided ECDH
// exchange (or, with cfg.Mode = ModeOT, a KKRT exchange in which the hub
// is the OPRF receiver; with ModeAuto, whichever of the two the spoke and
// the hub pick from their set sizes) with the hub on its own sub-channel
// ("psi-align/<party>"), in which only the hub learns the pairwise
// intersection; the hub intersects
// those, and tells every spoke, by one bit per element it sent, which of
// them are in every party's set (TypeFilter). Every party of parties
// calls Align with the same step, hub, parties and config; every party
// gets the positions of its elems in the common intersection. See the
// package doc for the leakage (the hub learns more than the spokes).
func Align(ctx context.Context, p job.Party, step job.Step, hub string, parties []string, cfg Config, elems [][]byte) (*Result, error) {
	self := p.Self()
	if !slices.Contains(parties, hub) || !slices.Contains(parties, self) {
		return nil, fmt.Errorf("%w: hub %q and party %q must be among %v", ErrConfig, hub, self, parties)
	}
	sorted := slices.Clone(parties)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(parties) {
		return nil, fmt.Errorf("%w: parties %v repeat a name", ErrConfig, parties)
	}
	channel := func(spoke string) job.Step { return step.Sub("psi-align/" + spoke) }
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if self != hub {
		mode, set, err := exchangeMode(ctx, p, channel(self), hub, cfg, elems)
		if err != nil {
			return nil, err
		}
		var r *Result
		if mode == ModeOT {
			r, err = otSendAndFilter(ctx, p, channel(self), hub, set)
		} else {
			r, err = ecdhSpoke(ctx, p, channel(self), hub, cfg, elems)
		}
		if err != nil {
			return nil, err
		}
		r.PeerSize = 0
		return r, nil
	}

	// The hub: one exchange per spoke, all at once.
	var spokes []string
	for _, q := range sorted {
		if q != hub {
			spokes = append(spokes, q)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	views := make([]*spokeView, len(spokes))
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error // the first failure, not the cancellations it causes
	)
	for i, q := range spokes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := hubExchange(ctx, p, channel(q), q, cfg, elems)
			if err != nil {
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			views[i] = v
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	// Every exchange removed our repeats in the same (first-seen) order,
	// so any view's distinct elements index every view's got.
	var x *exchange
	if len(views) > 0 {
		x = &exchange{uniq: views[0].uniq, of: views[0].of}
	} else {
		uniq, of := distinct(elems)
		x = &exchange{uniq: uniq, of: of}
	}
	// in[u]: our distinct element u is in every spoke's set.
	in := make([]bool, len(x.uniq))
	for u := range in {
		in[u] = true
	}
	for _, v := range views {
		for u := range in {
			in[u] = in[u] && v.got[u]
		}
	}
	for i, q := range spokes {
		if err := sendFilter(ctx, p, channel(q), q, views[i].filter(in), views[i].echo); err != nil {
			return nil, err
		}
	}
	return x.result(in), nil
}

// exchangeMode is the protocol of one exchange of Align: cfg.Mode, or in
// ModeAuto the one both sides pick from their set sizes; for OT, with our
// set prepared (otSetup).
func exchangeMode(ctx context.Context, p job.Party, step job.Step, peer string, cfg Config, elems [][]byte) (Mode, *otSet, error) {
	switch cfg.Mode {
	case ModeAuto:
		return agreeMode(ctx, p, step, peer, cfg, elems)
	case ModeOT:
		set, err := otSetup(p, step, peer, cfg, elems)
		return ModeOT, set, err
	}
	return cfg.Mode, nil, nil
}

// ecdhSpoke is a spoke's part of an ECDH Align exchange: its set, blinded
// twice, goes to the hub, which returns nothing of its own set but a filter.
func ecdhSpoke(ctx context.Context, p job.Party, step job.Step, hub string, cfg Config, elems [][]byte) (*Result, error) {
	x, err := run(ctx, p, step, hub, cfg, elems, true, false)
	if err != nil {
		return nil, err
	}
	m, err := p.Receive(ctx, hub, step.Key(TypeFilter))
	if err != nil {
		return nil, fmt.Errorf("psi: receive %s from %s: %w", TypeFilter, hub, err)
	}
	bits, err := decodeFilter(m.Body, len(x.uniq), x.run)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeFilter, hub, err)
	}
	in := make([]bool, len(x.uniq))
	for j, ok := range bits {
		in[x.perm[j]] = ok
	}
	return x.result(in), nil
}

// spokeView is what the hub keeps of its exchange with one spoke.
type spokeView struct {
	// uniq and of are the hub's distinct elements and, for each of its
	// elems, the index of its value in uniq.
	uniq [][]byte
	of   []int
	// got[u] says whether the spoke holds the hub's distinct element u.
	got []bool
	// filter turns the common set (over the hub's distinct elements) into
	// the spoke's filter: one bit per element the spoke sent.
	filter func(in []bool) []bool
	// echo is the spoke's run id, which the filter answers.
	echo []byte
}

// hubExchange runs the hub's side of one spoke's exchange, in ECDH (the
// hub returns no doubles of the spoke's set) or OT (the hub is the OPRF
// receiver).
func hubExchange(ctx context.Context, p job.Party, step job.Step, spoke string, cfg Config, elems [][]byte) (*spokeView, error) {
	mode, set, err := exchangeMode(ctx, p, step, spoke, cfg, elems)
	if err != nil {
		return nil, err
	}
	if mode == ModeOT {
		x, err := otReceive(ctx, p, step, spoke, set, 0)
		if err != nil {
			return nil, err
		}
		got := make([]bool, len(x.matched))
		for u, pos := range x.matched {
			got[u] = pos >= 0
		}
		filter := func(in []bool) []bool {
			bits := make([]bool, x.peerSize)
			for u, pos := range x.matched {
				if pos >= 0 && in[u] {
					bits[pos] = true
				}
			}
			return bits
		}
		return &spokeView{uniq: x.uniq, of: x.of, got: got, filter: filter, echo: x.peerRun}, nil
	}
	x, err := run(ctx, p, step, spoke, cfg, elems, false, true)
	if err != nil {
		return nil, err
	}
	got := make([]bool, len(x.uniq))
	for _, j := range Match(x.mine, x.theirs) {
		got[x.perm[j]] = true
	}
	filter := func(in []bool) []bool {
		// Our doubles (with this spoke's secret) of the common elements.
		common := make(map[Point]struct{})
		for j, u := range x.perm {
			if in[u] {
				common[x.mine[j]] = struct{}{}
			}
		}
		bits := make([]bool, len(x.theirs))
		for k, d := range x.theirs {
			_, bits[k] = common[d]
		}
		return bits
	}
	return &spokeView{uniq: x.uniq, of: x.of, got: got, filter: filter, echo: x.peerRun}, nil
}
