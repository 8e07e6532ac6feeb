package secureagg

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cohortdm/cohort/wire"
)

// The decryption's share exchange, one driver for both backends and for
// Decryption (which kinds run on networks of their own). At the root it
// sends each round's requests, collects every asked party's shares by the
// round's deadline, names and excludes the parties whose shares are late,
// malformed or refused, and asks the backend for the next round; at a
// decryptor it waits for the root's request (or shares unasked), has the
// backend vet it, tells every party of the step that it makes a share
// (formed.go) while the share is made, and sends the share once they are
// told. The backends contribute only the rounds, without I/O: an opener at
// the root, a sharer at a decryptor.

// shareRound is one round of a decryption's share exchange at the root.
type shareRound struct {
	// seq numbers the rounds from 0.
	seq int
	// asked are the parties whose shares the round awaits (of a release:
	// the parties told that none is needed).
	asked []string
	// request is the body of the request the asked are sent
	// (TypeShareRequest), or nil: they share unasked.
	request []byte
	// disclosure is what the request discloses.
	disclosure wire.Disclosure
	// release marks a request that needs no share: none is awaited.
	release bool
	// due is when the shares are due at the root, and when the requests
	// are given up (zero: when ctx ends).
	due time.Time
}

// inShare is where one share of a party arrives: the sub-channel of the
// exchange's network ("" for the network itself) and the reader that
// assembles the share from its parts.
type inShare struct {
	sub string
	r   reader
}

// outShare is one share of this party as it leaves: the sub-channel it
// travels on and its parts.
type outShare struct {
	sub string
	f   frames
}

// opener is a backend's side of a decryption at the root, without I/O:
// the rounds of requests and the checks of the shares that answer them.
type opener interface {
	// first plans the first round.
	first() (*shareRound, error)
	// own makes the root's own shares of round r; it runs while the
	// others' shares arrive and are checked, and touches nothing that
	// check or its add does.
	own(r *shareRound) error
	// slots lists where party p's shares of round r arrive, in order.
	slots(r *shareRound, p string) []inShare
	// check decodes and verifies party p's i-th share of round r without
	// touching the shares collected (it runs while other parties' are
	// checked); the add it returns adds the share, one add at a time.
	// Each returns why the share is refused, or "".
	check(r *shareRound, p string, i int, data []byte) (add func() string, why string)
	// next plans the round after r from the parties excluded so far (it
	// may name more, with why): nil when the shares needed are in, or an
	// error when they cannot be.
	next(r *shareRound, excluded map[string]string) (*shareRound, error)
}

// sharer is a backend's side of a decryption at a decryptor, without I/O.
type sharer interface {
	// unasked says whether this party's first shares go without a
	// request.
	unasked() bool
	// waitUntil is how long this party waits for the root's next request.
	waitUntil() time.Time
	// answer decodes and vets the root's request: false when the root
	// released this party. A decryptor that shares whatever a root asks
	// is a decryption oracle: answer refuses what this party may not
	// decrypt.
	answer(req []byte) (bool, error)
	// shares makes this party's shares of what it was asked last (or of
	// the first round, unasked), and says when they are due at the root.
	shares() ([]outShare, time.Time, error)
	// more says whether the root may ask for another round.
	more() bool
}

// exchange is the network side of one party's share exchange.
type exchange struct {
	net  Network
	root string
	// announce tells every party of the step that this party makes a
	// share (nil: nobody is told); it runs while the share is made, and a
	// decryptor's share leaves once it returned.
	announce func()
}

// open is the root's part: it runs o's rounds and returns the parties
// excluded, with why (nil when the first round could not be planned).
func (x *exchange) open(ctx context.Context, o opener) (map[string]string, error) {
	r, err := o.first()
	if err != nil {
		return nil, err
	}
	var notices sync.WaitGroup // not awaited before combining: the root's are a courtesy
	defer notices.Wait()
	if x.announce != nil {
		notices.Go(x.announce)
	}
	excluded := map[string]string{}
	for r != nil {
		var ownErr error
		var wg sync.WaitGroup
		if !r.release {
			wg.Go(func() { ownErr = o.own(r) })
		}
		if r.request != nil {
			x.request(ctx, r)
		}
		if !r.release {
			x.collect(ctx, o, r, excluded)
		}
		wg.Wait()
		if ownErr != nil {
			return excluded, fmt.Errorf("secureagg: decryption share: %w", ownErr)
		}
		if err := ctx.Err(); err != nil {
			return excluded, fmt.Errorf("secureagg: %w", err)
		}
		if r, err = o.next(r, excluded); err != nil {
			return excluded, err
		}
	}
	return excluded, nil
}

// request sends round r's request to every asked party at once and waits
// for all. A failed send is not the root's error: the party is excluded
// when its share does not come.
func (x *exchange) request(ctx context.Context, r *shareRound) {
	var wg sync.WaitGroup
	for _, q := range r.asked {
		wg.Go(func() { _ = sendBy(ctx, r.due, x.net, q, TypeShareRequest, frames{r.request}, r.disclosure) })
	}
	wg.Wait()
}

// collect receives and checks the shares of round r of every asked party
// at once, naming in excluded each party whose shares are refused.
func (x *exchange) collect(ctx context.Context, o opener, r *shareRound, excluded map[string]string) {
	var mu sync.Mutex // the adds and excluded
	var wg sync.WaitGroup
	for _, p := range r.asked {
		wg.Go(func() {
			if why := x.receiveShares(ctx, o, r, p, &mu); why != "" {
				mu.Lock()
				excluded[p] = why
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// receiveShares receives, checks and adds party p's shares of round r,
// one slot after the other, and returns why p is excluded, or "".
func (x *exchange) receiveShares(ctx context.Context, o opener, r *shareRound, p string, mu *sync.Mutex) string {
	for i, in := range o.slots(r, p) {
		if err := receiveBy(ctx, r.due, subNet(x.net, in.sub), p, TypeShare, in.r); err != nil {
			if ctx.Err() == nil && errors.Is(err, wire.ErrMalformed) {
				return "malformed decryption share: " + truncate(err.Error())
			}
			return "no decryption share in time"
		}
		data, _ := in.r.message()
		add, why := o.check(r, p, i, data)
		if why != "" {
			return why
		}
		mu.Lock()
		why = add()
		mu.Unlock()
		if why != "" {
			return why
		}
	}
	return ""
}

// serve is a decryptor's part: it shares unasked or waits for the root's
// request, and answers each request the backend accepts until it needs
// no more. Before this party's first share leaves, every party of the
// step has been told (or the notices given up at their deadline): a root
// never holds a share before every party could know of it. It returns
// nil once the last share left or the root released this party.
func (x *exchange) serve(ctx context.Context, sh sharer) error {
	var notices sync.WaitGroup
	defer notices.Wait()
	var noticed chan struct{} // closed once the notices are out; nil before they started
	for asked := !sh.unasked(); ; asked = true {
		if asked {
			ok, err := x.awaitRequest(ctx, sh)
			if err != nil || !ok {
				return err
			}
		}
		if noticed == nil {
			noticed = make(chan struct{})
			notices.Go(func() {
				defer close(noticed)
				if x.announce != nil {
					x.announce()
				}
			})
		}
		out, due, err := sh.shares()
		if err != nil {
			return err
		}
		select {
		case <-noticed:
		case <-ctx.Done():
			return fmt.Errorf("secureagg: %w", ctx.Err())
		}
		for _, s := range out {
			if err := sendBy(ctx, due, subNet(x.net, s.sub), x.root, TypeShare, s.f, wire.DiscloseDecryptionShare); err != nil {
				return err
			}
		}
		if !sh.more() {
			return nil
		}
	}
}

// awaitRequest receives the root's next request and has sh answer it.
func (x *exchange) awaitRequest(ctx context.Context, sh sharer) (bool, error) {
	wctx, cancel := by(ctx, sh.waitUntil())
	defer cancel()
	msg, err := x.net.Receive(wctx, x.root, TypeShareRequest)
	if err != nil {
		return false, fmt.Errorf("secureagg: no request for a decryption share from %s: %w", x.root, err)
	}
	return sh.answer(msg)
}

// sendBy sends a message's parts to `to` on net, each part i on
// partNet(net, i), giving up at deadline (zero: when ctx ends).
func sendBy(ctx context.Context, deadline time.Time, net Network, to, typ string, f frames, d wire.Disclosure) error {
	ctx, cancel := by(ctx, deadline)
	defer cancel()
	for i, b := range f {
		if err := partNet(net, i).Send(ctx, to, typ, b, d); err != nil {
			return fmt.Errorf("secureagg: send %s to %s: %w", typ, to, err)
		}
	}
	return nil
}

// receiveBy receives a message of type typ from `from` on net into r,
// part by part, until deadline (zero: until ctx ends).
func receiveBy(ctx context.Context, deadline time.Time, net Network, from, typ string, r reader) error {
	ctx, cancel := by(ctx, deadline)
	defer cancel()
	for i, n := 0, 1; i < n; i++ {
		msg, err := partNet(net, i).Receive(ctx, from, typ)
		if err != nil {
			return err
		}
		if n, err = r.part(i, msg); err != nil {
			return err
		}
	}
	return nil
}

// subNet is net's sub-channel sub, or net itself for "".
func subNet(net Network, sub string) Network {
	if sub == "" {
		return net
	}
	return net.Sub(sub)
}

// by bounds ctx by deadline, when one is set.
func by(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}
