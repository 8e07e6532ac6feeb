package secureagg

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/wire"
)

// Formed notices (issue 30): a party learns from the decryptors
// themselves, not through the root, that a total of the step was
// decrypted. Every party that makes a decryption share of the step's total
// (the root included) tells every other party of the step so directly
// (TypeFormed, Formed set) as the share leaves. A party that ends the
// attempt without the total (its parent, or the root, never passed it
// down; it refused a tampered total; it withdrew) tells every other party
// that it made no share (Formed unset), and then, unless it is the root,
// listens until the last honest share can have left: a notice of a share
// means the total may have been decrypted, so the party reports the
// total formed (MissingError.Formed, or ErrFormed) and its guard records
// it, whatever the root says. It stops listening early only once every
// other party said it made no share (an honest abort, all parties live);
// a party that went silent makes the others listen to the deadline.
//
// A root colluding with the coordinator can thus no longer keep a party
// that does not decrypt from learning that a total was decrypted, and have
// it help decrypt a later aggregate without the victim.

// formedBody is the body of a TypeFormed notice.
type formedBody struct {
	Formed bool `msgpack:"formed"`
}

// ErrFormed marks a failure of a party that did not hold the total while
// some decryptor of the step told it it made a decryption share: the
// total may have been decrypted, so the step must not be re-run over
// fewer parties (Contribute records it formed with the guard).
var ErrFormed = errors.New("secureagg: a decryptor made a share of the step's total")

// announce tells every other party of the step whether this party made a
// decryption share. A notice takes one hop: one to a peer that does not
// take it within a hop (or by the late shares' deadline) is given up, so a
// hung peer delays no share beyond that.
func (s *schedule) announce(ctx context.Context, formed bool) {
	ctx, cancel := context.WithTimeout(ctx, s.hop)
	defer cancel()
	s.sendAll(ctx, func(string) int { return s.lateShareHops() }, s.others(), TypeFormed, formedBody{Formed: formed}, wire.DiscloseControl)
}

// others are the step's parties but this one.
func (s *schedule) others() []string {
	return slices.DeleteFunc(slices.Clone(s.parties), func(p string) bool { return p == s.self })
}

// notices listens, for one attempt, to every other party's formed notice.
type notices struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// changed is signalled (without blocking) whenever a notice arrives.
	changed chan struct{}

	mu      sync.Mutex
	formed  bool
	none    int // how many parties said they made no share
	pending int // how many parties may still send a notice
}

// listen starts receiving the other parties' notices until stop.
func (s *schedule) listen(ctx context.Context) *notices {
	ctx, cancel := context.WithCancel(ctx)
	others := s.others()
	n := &notices{cancel: cancel, changed: make(chan struct{}, 1), pending: len(others)}
	for _, q := range others {
		n.wg.Go(func() {
			var b formedBody
			msg, err := s.net.Receive(ctx, q, TypeFormed)
			if err == nil && wire.Unmarshal(msg, &b) != nil {
				err = wire.ErrMalformed // as if q had said nothing
			}
			n.mu.Lock()
			n.pending--
			switch {
			case err != nil:
			case b.Formed:
				n.formed = true
			default:
				n.none++
			}
			n.mu.Unlock()
			select {
			case n.changed <- struct{}{}:
			default:
			}
		})
	}
	return n
}

// stop ends the listening and waits for its goroutines.
func (n *notices) stop() {
	n.cancel()
	n.wg.Wait()
}

// state returns whether a share was announced, how many parties said
// they made none, and how many may still send a notice.
func (n *notices) state() (formed bool, none, pending int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.formed, n.none, n.pending
}

// unheld is the end of an attempt at a non-root party that did not hold
// the total, failing with err: it tells the others it made no share, then
// waits until a decryptor's notice arrives, every other party said it made
// none, no notice can come any more (every receive ended), or the late
// shares' deadline; a notice marks err formed. It cannot stop earlier on
// fewer "none" than every party's: a colluder may say it made none and
// share all the same, and the one honest share a decryption needs could
// still be on its way.
func (s *schedule) unheld(ctx context.Context, n *notices, err error) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.announce(ctx, false) })
	if s.tree.parent(s.self) == "" {
		return err // an honest root that did not decrypt knows no total was
	}
	wctx, stop := s.within(ctx, s.lateShareHops()+1)
	defer stop()
	for {
		formed, none, pending := n.state()
		switch {
		case formed:
			return markFormed(err)
		case none == len(s.parties)-1 || pending == 0:
			return err
		}
		select {
		case <-n.changed:
		case <-wctx.Done():
			if formed, _, _ := n.state(); formed {
				return markFormed(err)
			}
			return err
		}
	}
}

// markFormed marks an attempt's failure as one after which the total may
// have been decrypted.
func markFormed(err error) error {
	var miss *MissingError
	if errors.As(err, &miss) {
		return &MissingError{Parties: miss.Parties, Formed: true}
	}
	return errors.Join(err, ErrFormed)
}
