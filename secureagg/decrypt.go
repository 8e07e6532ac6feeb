package secureagg

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// Decryption is one joint threshold decryption of a list of ciphertexts by
// parties of a step (threshold Damgård–Jurik after Shoup, package
// paillier): the root asks parties for decryption shares, verifies each
// share's proof, which binds the key, the party's share index and the
// step's job, phase, round and attempt, asks the parties it held back when
// fewer than t+1 shares (its own included) are valid, names and excludes
// every party whose share is late, malformed or invalid, and combines t+1
// valid shares. Decrypt is the root's part, Share every other party's;
// every party of it builds the same Decryption from the committed step.
//
// It is the one threshold decryption of the repository: an aggregation's
// root decrypts its total with it, and a kind whose root must decrypt
// values the parties do not hold (bicluster's merge test) sends them with
// the requests, each decryptor vetting them before it makes a share.
// Nothing here checks what is decrypted beyond the proofs: that the
// ciphertexts are what the parties may decrypt is the caller's check (the
// parties form an aggregation's total themselves; Share's vet otherwise).
type Decryption struct {
	// Net carries the requests and shares (StepNetwork of the step, or
	// of a sub-channel of it to separate several decryptions of one step).
	Net Network
	// Step binds the share proofs to its job, phase, round and attempt.
	Step job.Step
	Keys *Keys
	// Root asks for the shares and combines them.
	Root string
	// Decryptors are the parties the root may ask for shares, in the
	// order it asks them, without the root.
	Decryptors []string
	// Ask is how many of Decryptors are asked at once; the others are
	// asked only when fewer than t+1 shares are valid.
	Ask int
	// Count is how many ciphertexts are decrypted.
	Count int
	// Held is set when every party holds the ciphertexts (it formed them
	// itself): the first Ask decryptors then share without being asked,
	// and a request carries no ciphertexts. Otherwise every request
	// carries them, and a decryptor shares only what its vet accepts.
	Held bool
	// Release has the root tell the decryptors it did not ask that it
	// needs nothing of them, for parties that have no other sign that the
	// decryption is over.
	Release bool
	// First is when the shares of the first Ask decryptors are due at the
	// root, Late when the others' are (zero: when ctx ends).
	First, Late time.Time
	// Random is the randomness of the share proofs (nil: crypto/rand).
	Random io.Reader
	// Announce, when set, is called as this party makes its share (the
	// root's own included), while the share is computed; a decryptor's
	// share leaves once it returned: an aggregation tells every party of
	// the step directly that a share of its total left (formed.go).
	Announce func(context.Context)
}

// announce runs d.Announce, when set, in the background of wg.
func (d *Decryption) announce(ctx context.Context, wg *sync.WaitGroup) {
	if d.Announce != nil {
		wg.Go(func() { d.Announce(ctx) })
	}
}

// requestBody is the body of a share request (TypeShareRequest): the
// ciphertexts to decrypt when the decryptors do not hold them, or, with
// Release, the root's word that it needs no share of this party.
type requestBody struct {
	C       []byte `msgpack:"c"`
	Release bool   `msgpack:"release"`
}

// Digest binds ciphertexts, encoded as one party sent them, to the step
// and that party: a party that sends a root ciphertexts which others will
// be asked to decrypt sends every other party their digest directly (as
// an aggregation's children of the root do, TypeDigest), so that each can
// check, before it makes a share, that the root asks what that party sent.
func Digest(step job.Step, from string, ciphertexts []byte) []byte {
	return digest(step, from, ciphertexts)
}

// check validates the parameters every party must agree on.
func (d *Decryption) check() error {
	if err := d.Keys.Check(); err != nil {
		return err
	}
	pk := d.Keys.Public()
	if d.Count < 1 {
		return fmt.Errorf("secureagg: a decryption of %d ciphertexts", d.Count)
	}
	if d.Ask < 0 || d.Ask > len(d.Decryptors) {
		return fmt.Errorf("secureagg: %d of %d decryptors asked at once", d.Ask, len(d.Decryptors))
	}
	if 1+len(d.Decryptors) < pk.Threshold+1 {
		return fmt.Errorf("%w: %d parties cannot reach the %d shares needed to decrypt", ErrTooFewShares, 1+len(d.Decryptors), pk.Threshold+1)
	}
	named := append([]string{d.Root}, d.Decryptors...)
	for i, q := range named {
		if d.Keys.Index(q) == 0 {
			return fmt.Errorf("secureagg: party %s holds no share of the consortium key", q)
		}
		if slices.Contains(named[:i], q) {
			return fmt.Errorf("secureagg: party %s is named twice among the decryptors", q)
		}
	}
	return nil
}

func (d *Decryption) random() io.Reader {
	if d.Random == nil {
		return rand.Reader
	}
	return d.Random
}

func (d *Decryption) proofContext() paillier.ProofContext {
	return paillier.ProofContext{Job: d.Step.Job, Phase: d.Step.Phase, Round: d.Step.Round, Attempt: d.Step.Attempt}
}

// Decrypt is the root's part: it asks for shares of cts, computes its own,
// verifies and combines them, and returns the plaintexts and the parties
// it excluded, with why. With fewer than t+1 valid shares it returns
// ErrTooFewShares naming the excluded parties, and the exclusions.
func (d *Decryption) Decrypt(ctx context.Context, cts []*paillier.Ciphertext) ([]*big.Int, map[string]string, error) {
	if err := d.check(); err != nil {
		return nil, nil, err
	}
	if self := d.Net.Self(); self != d.Root {
		return nil, nil, fmt.Errorf("secureagg: %s decrypts, but %s is the root", self, d.Root)
	}
	if len(cts) != d.Count {
		return nil, nil, fmt.Errorf("secureagg: %d ciphertexts to decrypt, expected %d", len(cts), d.Count)
	}
	pk := d.Keys.Public()
	req, disclosure := requestBody{}, wire.DiscloseControl
	if !d.Held {
		var err error
		if req.C, err = pk.MarshalCiphertexts(cts); err != nil {
			return nil, nil, fmt.Errorf("secureagg: marshal ciphertexts: %w", err)
		}
		disclosure = wire.DiscloseCiphertext
	}
	first, rest := d.Decryptors[:d.Ask], d.Decryptors[d.Ask:]
	// Compute our own share while the others' arrive and are verified.
	var own *paillier.DecryptionShare
	var ownErr error
	var notices sync.WaitGroup // not awaited before combining: the root's are a courtesy
	defer notices.Wait()
	d.announce(ctx, &notices)
	var wg sync.WaitGroup
	wg.Go(func() { own, ownErr = d.Keys.Share.DecryptShare(d.random(), cts, d.proofContext()) })
	if !d.Held {
		d.sendAll(ctx, d.First, first, req, disclosure)
	}
	excluded := map[string]string{}
	others := d.collect(ctx, cts, first, d.First, excluded)
	wg.Wait()
	if ownErr != nil {
		return nil, nil, fmt.Errorf("secureagg: decryption share: %w", ownErr)
	}
	valid := append([]*paillier.DecryptionShare{own}, others...)
	need := pk.Threshold + 1
	switch {
	case len(valid) < need && len(rest) > 0:
		d.sendAll(ctx, d.Late, rest, req, disclosure)
		valid = append(valid, d.collect(ctx, cts, rest, d.Late, excluded)...)
	case d.Release && len(rest) > 0:
		d.sendAll(ctx, d.Late, rest, requestBody{Release: true}, wire.DiscloseControl)
	}
	if err := ctx.Err(); err != nil {
		return nil, excluded, fmt.Errorf("secureagg: %w", err)
	}
	if len(valid) < need {
		names := slices.Sorted(maps.Keys(excluded))
		return nil, excluded, fmt.Errorf("%w: %d of %d needed; excluded %s", ErrTooFewShares, len(valid), need, strings.Join(names, ", "))
	}
	plain, err := pk.Combine(cts, valid[:need])
	if err != nil {
		return nil, excluded, fmt.Errorf("secureagg: combine shares: %w", err)
	}
	return plain, excluded, nil
}

// collect receives and verifies the shares of from, each by deadline,
// returning the valid ones and naming the others in excluded.
func (d *Decryption) collect(ctx context.Context, cts []*paillier.Ciphertext, from []string, deadline time.Time, excluded map[string]string) []*paillier.DecryptionShare {
	pk := d.Keys.Public()
	shares := make([]*paillier.DecryptionShare, len(from))
	why := make([]string, len(from))
	var wg sync.WaitGroup
	for i, q := range from {
		wg.Go(func() {
			wctx, cancel := by(ctx, deadline)
			defer cancel()
			msg, err := d.Net.Receive(wctx, q, TypeShare)
			if err != nil {
				why[i] = "no decryption share in time"
				return
			}
			sh, err := decodeShare(msg, pk, d.Keys.Index(q), len(cts))
			if err != nil {
				why[i] = "malformed decryption share: " + truncate(err.Error())
				return
			}
			if err := pk.VerifyShare(cts, sh, d.proofContext()); err != nil {
				why[i] = "invalid decryption share: " + truncate(err.Error())
				return
			}
			shares[i] = sh
		})
	}
	wg.Wait()
	var valid []*paillier.DecryptionShare
	for i, sh := range shares {
		if sh == nil {
			excluded[from[i]] = why[i]
		} else {
			valid = append(valid, sh)
		}
	}
	return valid
}

// sendAll sends one request to several parties at once and waits for all.
// A failed send is not the root's error: the party is excluded when its
// share does not come.
func (d *Decryption) sendAll(ctx context.Context, deadline time.Time, to []string, body requestBody, disclosure wire.Disclosure) {
	var wg sync.WaitGroup
	for _, q := range to {
		wg.Go(func() { _ = d.send(ctx, deadline, q, TypeShareRequest, &body, disclosure) })
	}
	wg.Wait()
}

func (d *Decryption) send(ctx context.Context, deadline time.Time, to, typ string, body any, disclosure wire.Disclosure) error {
	b, err := wire.Marshal(body)
	if err != nil {
		return err
	}
	sctx, cancel := by(ctx, deadline)
	defer cancel()
	if err := d.Net.Send(sctx, to, typ, b, disclosure); err != nil {
		return fmt.Errorf("secureagg: send %s to %s: %w", typ, to, err)
	}
	return nil
}

// Share is a decryptor's part. With Held, held are the ciphertexts this
// party holds: it shares them at once when it is among the first Ask
// decryptors, else when the root asks. Otherwise held is nil and it waits
// for the root's request, which brings Count ciphertexts; vet must accept
// them before any share is made (its error is returned as it is: a
// decryptor that shares whatever a root sends is a decryption oracle). It
// returns nil once it has sent its share or the root released it.
func (d *Decryption) Share(ctx context.Context, held []*paillier.Ciphertext, vet func([]*paillier.Ciphertext) error) error {
	if err := d.check(); err != nil {
		return err
	}
	self := d.Net.Self()
	at := slices.Index(d.Decryptors, self)
	if at < 0 {
		return fmt.Errorf("secureagg: %s is not a decryptor of step %s/%d", self, d.Step.Phase, d.Step.Round)
	}
	deadline := d.Late
	if at < d.Ask {
		deadline = d.First
	}
	cts := held
	switch {
	case d.Held && len(held) != d.Count:
		return fmt.Errorf("secureagg: %d ciphertexts held, expected %d", len(held), d.Count)
	case !d.Held && vet == nil:
		return fmt.Errorf("secureagg: %s would decrypt whatever root %s sends: no vetting", self, d.Root)
	}
	if !d.Held || at >= d.Ask {
		req, err := d.awaitRequest(ctx, deadline)
		if err != nil || req == nil {
			return err
		}
		if !d.Held {
			if cts, err = d.Keys.Public().UnmarshalCiphertexts(req.C); err != nil {
				return fmt.Errorf("secureagg: the request from %s: %w", d.Root, err)
			}
			if err := vet(cts); err != nil {
				return err
			}
		}
	}
	// The notices go out while the share is computed, and the share
	// leaves only once they are delivered (or given up at the deadline):
	// a root never holds it before every party could know of it.
	var notices sync.WaitGroup
	defer notices.Wait()
	d.announce(ctx, &notices)
	share, err := d.Keys.Share.DecryptShare(d.random(), cts, d.proofContext())
	if err != nil {
		return fmt.Errorf("secureagg: decryption share: %w", err)
	}
	b, err := share.MarshalBinary()
	if err != nil {
		return fmt.Errorf("secureagg: marshal share: %w", err)
	}
	notices.Wait()
	return d.send(ctx, deadline, d.Root, TypeShare, shareBody{Share: b}, wire.DiscloseDecryptionShare)
}

// awaitRequest waits for the root's request until deadline: nil when the
// root released this party.
func (d *Decryption) awaitRequest(ctx context.Context, deadline time.Time) (*requestBody, error) {
	wctx, cancel := by(ctx, deadline)
	defer cancel()
	msg, err := d.Net.Receive(wctx, d.Root, TypeShareRequest)
	if err != nil {
		return nil, fmt.Errorf("secureagg: no request for a decryption share from %s: %w", d.Root, err)
	}
	req, err := decodeRequest(msg, &d.Keys.Public().PublicKey, d.Count, d.Held)
	if err != nil {
		return nil, fmt.Errorf("secureagg: the request from %s: %w", d.Root, err)
	}
	if req.Release {
		return nil, nil
	}
	return req, nil
}

// decodeRequest decodes a share request: a release, or a request that
// carries count ciphertexts under pk exactly when the decryptors do not
// hold them.
func decodeRequest(b []byte, pk *paillier.PublicKey, count int, held bool) (*requestBody, error) {
	var r requestBody
	if err := wire.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	switch {
	case r.Release && len(r.C) > 0:
		return nil, fmt.Errorf("%w: a release that carries ciphertexts", wire.ErrMalformed)
	case r.Release:
		return &r, nil
	case held && len(r.C) > 0:
		return nil, fmt.Errorf("%w: a request that carries ciphertexts the decryptors hold", wire.ErrMalformed)
	case held:
		return &r, nil
	case len(r.C) > 2*count*pk.CiphertextSize()+64:
		return nil, fmt.Errorf("%w: %d bytes for %d ciphertexts", wire.ErrMalformed, len(r.C), count)
	}
	cts, err := pk.UnmarshalCiphertexts(r.C)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", wire.ErrMalformed, err)
	}
	if len(cts) != count {
		return nil, fmt.Errorf("%w: %d ciphertexts to decrypt, expected %d", wire.ErrMalformed, len(cts), count)
	}
	return &r, nil
}

// by bounds ctx by deadline, when one is set.
func by(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}

func truncate(s string) string {
	if len(s) > maxReason {
		return s[:maxReason]
	}
	return s
}
