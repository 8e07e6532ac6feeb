package secureagg

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/wire"
)

// frames is one message as it travels: the bodies of its parts, part i on
// the sub-channel partNet(i) (one part but for the lattice backend's
// blobs, lattice_wire.go).
type frames [][]byte

// reader assembles one message from the bodies of its parts as they
// arrive, checking each; it does no I/O (schedule.receiveFrames does).
type reader interface {
	// part takes the body of part i and returns how many parts the
	// message has in all.
	part(i int, body []byte) (int, error)
	// message returns what arrived: the message's data, or the parties
	// an abort names (a Paillier message names them inside its data).
	message() (data []byte, missing []string)
}

// vouching says how a child of the root vouches for its subtree's sum to
// every other party but the root (the Paillier backend: a digest; the
// lattice backend: a sketch under the recipient's key): the message type,
// whether each recipient first sends a key (TypeSeed), when party p stops
// waiting, and what the voucher discloses.
type vouching struct {
	typ        string
	keyed      bool
	hops       func(p string) int
	disclosure wire.Disclosure
}

// backend is one cryptosystem's side of an aggregation, in the manner of
// Lattigo's encoders and evaluators: one method per round of the tree,
// typed values in and out, no messages and no clock. runTree, the one
// tree schedule, sends and receives what they encode and decode (and the
// schedule's exchange the decryption's requests and shares), so both
// backends run the same stages, waits, exclusions and fault handling. C is what the
// backend sums (a party's or a subtree's ciphertexts), T what a party
// decrypts (the total, vetted).
type backend[C, T any] interface {
	// seed is this party's key for the vouchers of the root's children,
	// which it sends each of them (nil: the backend's vouchers need none).
	seed() (any, error)
	// contribute checks, noises and encrypts this party's input.
	contribute(ctx context.Context, input []float64) (C, error)
	// component encodes the root's own contribution as it commits to it.
	component(own C) ([]byte, error)
	// up encodes a subtree's sum as it travels up.
	up(acc C) (frames, error)
	// aborted encodes an abort naming the missing parties, up or down.
	aborted(missing []string) (frames, error)
	// reader assembles a message of type typ (TypeUp, TypeDown,
	// TypeResult).
	reader(typ string) reader
	// child decodes child c's up message: its subtree's sum, or the
	// parties it names missing.
	child(data []byte, missing []string, c string) (C, []string, error)
	// addChild adds a child's subtree sum into acc, and keeps it among
	// parts when the down message carries it.
	addChild(acc C, parts []C, sum C) (C, []C, error)
	// total is the root's middle: the down message with the total's
	// components (its own as committed, own), and the computation of what
	// the root decrypts, which runTree runs once the message is sent.
	total(own []byte, acc C, parts []C) (frames, func() (T, error), error)
	// components decodes the down message: the total's components, or
	// the parties it names missing; relay encodes them, as they came, to
	// pass down.
	components(data []byte, missing []string) ([][]byte, []string, error)
	relay(data []byte, comps [][]byte) (frames, error)
	// vouching is how the root's children vouch for their subtrees;
	// vouchers returns a child of the root's voucher for each recipient,
	// given the key that recipient sent (nil when unkeyed).
	vouching() vouching
	vouchers(acc C) (func(key []byte) (any, error), error)
	// noVoucher is the error of a voucher that did not come from c.
	noVoucher(c string, err error) error
	// check forms what this party decrypts from the total's components,
	// its own subtree's sum acc and the vouchers of the root's children
	// (by name; none of its own), or refuses (ErrTampered).
	check(comps [][]byte, acc C, vouchers map[string][]byte) (T, error)
	// opening is the root's side of the decryption of total, and sharing
	// a non-root party's: the share exchange's rounds without I/O, which
	// the schedule's exchange (exchange.go) carries.
	opening(total T) totalOpener
	sharing(total T) (sharer, error)
	// result decodes the result from the parent: the message to pass
	// down and this party's outcome (nil frames: malformed);
	// resultMissing is the result that names missing parties.
	result(data []byte, missing []string) (frames, *Result, error)
	resultMissing(missing []string) (frames, error)
}

// runTree is one party's aggregation on backend b: encrypt its input,
// gather its subtree's sum and send it up (the root, having committed to
// its own input first, forms the total), receive the total's components
// from above and check them, then share and decrypt. It does every send
// and receive of the tree's rounds; b only encodes, decodes and computes.
func runTree[C, T any](ctx context.Context, s *schedule, b backend[C, T], input []float64) (*Result, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	var bg sync.WaitGroup // the seeds' and vouchers' sends
	ctx, cancel := s.within(ctx, s.totalHops())
	defer func() { cancel(); bg.Wait() }()
	heard := s.listen(ctx)
	defer heard.stop()
	own, err := start(ctx, s, b, input, &bg)
	if err != nil {
		abortTree(ctx, s, b, []string{s.self})
		s.announce(ctx, false)
		return nil, err
	}
	var ownComp []byte // at the root: its own component, committed to now
	if parent == "" {
		if ownComp, err = b.component(own); err != nil {
			return nil, err
		}
		s.commitOwn(ctx, ownComp)
	}
	acc, parts, missing, err := gatherUp(ctx, s, b, own, children)
	if err != nil {
		return nil, s.unheld(ctx, heard, err)
	}
	var total T
	switch {
	case parent != "":
		total, err = upAndDown(ctx, s, b, acc, missing, &bg)
	case len(missing) > 0:
		abortDown(ctx, s, b, missing)
		err = &MissingError{Parties: missing}
	default:
		var down frames
		var form func() (T, error)
		if down, form, err = b.total(ownComp, acc, parts); err == nil {
			s.sendFramesAll(ctx, s.downHops, children, TypeDown, down, wire.DiscloseCiphertext)
			total, err = form()
		}
	}
	if err != nil {
		// This party never held the total: a decryptor's notice is how
		// it learns whether one was decrypted (formed.go).
		return nil, s.unheld(ctx, heard, err)
	}
	return finish(ctx, s, b, total)
}

// totalOpener is a backend's side of the decryption of the total at the
// root: the exchange's rounds, and the result made of them (the message
// for the root's children and its own outcome) once the exchange ended
// with the parties excluded and err.
type totalOpener interface {
	opener
	result(excluded map[string]string, err error) (frames, *Result, error)
}

// exchange is this party's share exchange, which tells every party of the
// step as this party makes a share, on ctx (the aggregation's: a share's
// own context ends when the result arrives, and the notices must not end
// with it).
func (s *schedule) exchange(ctx context.Context) *exchange {
	return &exchange{net: s.net, root: s.tree.root(), announce: func() { s.announce(ctx, true) }}
}

// finish decrypts (at the root) or shares and waits for the result from
// the parent (elsewhere), passes the result down and returns this party's
// outcome.
func finish[C, T any](ctx context.Context, s *schedule, b backend[C, T], total T) (*Result, error) {
	var res frames
	var out *Result
	var err error
	if s.tree.parent(s.self) == "" {
		o := b.opening(total)
		excluded, xerr := s.exchange(ctx).open(ctx, o)
		res, out, err = o.result(excluded, xerr)
	} else if res, out, err = awaitResult(ctx, s, b, total); res == nil {
		return nil, err
	}
	if res != nil {
		s.sendFramesAll(ctx, s.resultHops, s.tree.children(s.self), TypeResult, res, wire.DisclosePublicResult)
	}
	return out, err
}

// awaitResult is a non-root party's part after the total arrived: share
// it (in the background, until the result arrives) and receive the result
// from its parent. A parent that does not answer, or answers malformed,
// is named missing, and its subtree learns so: nil frames only when ctx
// ended.
func awaitResult[C, T any](ctx context.Context, s *schedule, b backend[C, T], total T) (frames, *Result, error) {
	shareCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	if sh, err := b.sharing(total); err == nil { // else the root excludes us
		// A share the root does not get is the root's to report.
		wg.Go(func() { _ = s.exchange(ctx).serve(shareCtx, sh) })
	}
	parent := s.tree.parent(s.self)
	r := b.reader(TypeResult)
	err := s.receiveFrames(ctx, s.resultHops(s.self), parent, TypeResult, r)
	if err == nil {
		var res frames
		var out *Result
		data, missing := r.message()
		if res, out, err = b.result(data, missing); res != nil {
			return res, out, err
		}
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("secureagg: waiting for the result from %s: %w", parent, err)
	}
	// As for the total: name the parent, and pass the verdict down.
	res, _ := b.resultMissing([]string{parent}) // nil: the children time out and name us
	return res, nil, &MissingError{Parties: []string{parent}, Formed: true}
}

// start sends this party's seed (but at the root) to the root's other
// children in the background, and encrypts its input.
func start[C, T any](ctx context.Context, s *schedule, b backend[C, T], input []float64, bg *sync.WaitGroup) (C, error) {
	if s.tree.parent(s.self) != "" {
		seed, err := b.seed()
		if err != nil {
			var zero C
			return zero, err
		}
		if seed != nil {
			kids := slices.DeleteFunc(slices.Clone(s.tree.children(s.tree.root())), func(p string) bool { return p == s.self })
			bg.Go(func() { s.sendAll(ctx, s.upHops, kids, TypeSeed, seed, wire.DiscloseControl) })
		}
	}
	return b.contribute(ctx, input)
}

// gatherUp receives every child's subtree sum, each within the hops its
// subtree may take, and adds them to own; it returns the sum, the
// children's sums the down message carries, and the parties missing:
// children that failed, with the parties they report missing.
func gatherUp[C, T any](ctx context.Context, s *schedule, b backend[C, T], own C, children []string) (C, []C, []string, error) {
	type got struct {
		sum     C
		missing []string
	}
	results := make([]got, len(children))
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Go(func() {
			r := b.reader(TypeUp)
			err := s.receiveFrames(ctx, s.upHops(c), c, TypeUp, r)
			var sum C
			var miss []string
			if err == nil {
				data, aborted := r.message()
				sum, miss, err = b.child(data, aborted, c)
			}
			switch {
			case err != nil:
				results[i].missing = []string{c}
			case len(miss) > 0:
				results[i].missing = miss
			default:
				results[i].sum = sum
			}
		})
	}
	wg.Wait()
	acc := own
	if err := ctx.Err(); err != nil {
		return acc, nil, nil, fmt.Errorf("secureagg: %w", err)
	}
	var missing []string
	var parts []C
	for _, r := range results {
		if len(r.missing) > 0 {
			missing = append(missing, r.missing...)
			continue
		}
		var err error
		if acc, parts, err = b.addChild(acc, parts, r.sum); err != nil {
			return acc, nil, nil, fmt.Errorf("secureagg: add a subtree: %w", err)
		}
	}
	slices.Sort(missing)
	return acc, parts, missing, nil
}

// upAndDown is a non-root party's middle: send its subtree's sum up (and,
// as a child of the root, vouch for it to every other party but the
// root), then receive the total's components from its parent, pass them
// down, and check them. A parent that does not answer, or answers
// malformed, is the party it names missing, and its subtree learns so too.
func upAndDown[C, T any](ctx context.Context, s *schedule, b backend[C, T], acc C, missing []string, bg *sync.WaitGroup) (T, error) {
	var zero T
	parent, root := s.tree.parent(s.self), s.tree.root()
	var up frames
	var err error
	d := wire.DiscloseControl
	if len(missing) > 0 {
		if up, err = b.aborted(missing); err != nil {
			return zero, err
		}
	} else {
		if up, err = b.up(acc); err != nil {
			return zero, err
		}
		d = wire.DiscloseCiphertext
		if parent == root {
			if err := s.awaitCommit(ctx); err != nil {
				return zero, rootMissing(ctx, s, b, err)
			}
		}
	}
	if err := s.sendFrames(ctx, s.upHops(s.self), parent, TypeUp, up, d); err != nil {
		if ctx.Err() != nil {
			return zero, err
		}
		// The parent is unreachable: our subtree's inputs cannot reach
		// the root through it.
		abortDown(ctx, s, b, []string{parent})
		return zero, &MissingError{Parties: []string{parent}}
	}
	if parent == root && len(missing) == 0 {
		vouch(ctx, s, b, acc, bg)
	}
	r := b.reader(TypeDown)
	err = s.receiveFrames(ctx, s.downHops(s.self), parent, TypeDown, r)
	data, miss := r.message()
	var comps [][]byte
	if err == nil {
		comps, miss, err = b.components(data, miss)
	}
	if err != nil {
		if ctx.Err() != nil {
			return zero, fmt.Errorf("secureagg: waiting for the aggregate from %s: %w", parent, err)
		}
		miss = []string{parent}
	}
	if len(miss) > 0 {
		abortDown(ctx, s, b, miss)
		return zero, &MissingError{Parties: miss}
	}
	// Pass the components on as they came: every party checks them itself.
	if down, err := b.relay(data, comps); err == nil {
		s.sendFramesAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, down, wire.DiscloseCiphertext)
	} // else the children time out and name us
	vouchers, err := receiveVouchers(ctx, s, b)
	if err != nil {
		return zero, err
	}
	return b.check(comps, acc, vouchers)
}

// vouch is a child of the root's voucher for its subtree's sum acc, sent
// in the background to every party but the root and itself, each as soon
// as that party's key (when the backend's vouchers are keyed) has come.
func vouch[C, T any](ctx context.Context, s *schedule, b backend[C, T], acc C, bg *sync.WaitGroup) {
	v := b.vouching()
	voucher, err := b.vouchers(acc)
	if err != nil {
		return // the others' checks fail without it, and they name us
	}
	for _, p := range s.tree.order {
		if p == s.self || p == s.tree.root() {
			continue
		}
		bg.Go(func() {
			var key []byte
			if v.keyed {
				var err error
				if key, err = s.receive(ctx, v.hops(p), p, TypeSeed); err != nil {
					return // p's check fails without it, and p names us
				}
			}
			body, err := voucher(key)
			if err != nil {
				return
			}
			_ = s.send(ctx, v.hops(p), p, v.typ, body, v.disclosure)
		})
	}
}

// receiveVouchers receives the voucher of each child of the root but
// this party, in tree order.
func receiveVouchers[C, T any](ctx context.Context, s *schedule, b backend[C, T]) (map[string][]byte, error) {
	v := b.vouching()
	out := map[string][]byte{}
	for _, c := range s.tree.children(s.tree.root()) {
		if c == s.self {
			continue
		}
		msg, err := s.receive(ctx, v.hops(s.self), c, v.typ)
		if err != nil {
			return nil, b.noVoucher(c, err)
		}
		out[c] = msg
	}
	return out, nil
}

// rootMissing ends the attempt of a child of the root that got no
// commitment from the root: its subtree learns so, and the root is named
// missing.
func rootMissing[C, T any](ctx context.Context, s *schedule, b backend[C, T], cause error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("secureagg: %w", cause)
	}
	root := s.tree.root()
	abortDown(ctx, s, b, []string{root})
	return &MissingError{Parties: []string{root}}
}

// abortTree tells the parent and the children at once (and, at the root,
// the children waiting for its commitment) that the attempt failed for
// want of missing, so nobody waits for this party in vain.
func abortTree[C, T any](ctx context.Context, s *schedule, b backend[C, T], missing []string) {
	f, err := b.aborted(missing)
	if err != nil {
		return
	}
	s.abort(ctx, f)
}

// abortDown passes an abort naming missing to every child.
func abortDown[C, T any](ctx context.Context, s *schedule, b backend[C, T], missing []string) {
	if f, err := b.aborted(missing); err == nil {
		s.abortDown(ctx, f)
	}
}
