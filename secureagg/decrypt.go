package secureagg

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"slices"
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
//
// Decryption is a thin driver: its rounds, without I/O, are
// paillierOpening's and paillierSharing's (decrypt_rounds.go), and
// Decrypt and Share run them on the aggregations' share exchange
// (exchange.go), so the Paillier share exchange has one implementation.
type Decryption struct {
	// Net carries the requests and shares (StepNetwork of the step, or
	// of a sub-channel of it to separate several decryptions of one step);
	// Decrypt and Share need it, the I/O-free rounds do not (an
	// aggregation, whose schedule carries them, leaves it unset).
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
	// share leaves once it returned (the exchange's announce, which an
	// aggregation's schedule sets to its formed notices, formed.go).
	Announce func(context.Context)
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

// exchange is the share exchange's driver on d.Net, with d.Announce.
func (d *Decryption) exchange(ctx context.Context) *exchange {
	x := &exchange{net: d.Net, root: d.Root}
	if d.Announce != nil {
		x.announce = func() { d.Announce(ctx) }
	}
	return x
}

// Decrypt is the root's part: it asks for shares of cts, computes its own,
// verifies and combines them, and returns the plaintexts and the parties
// it excluded, with why. With fewer than t+1 valid shares it returns
// ErrTooFewShares naming the excluded parties, and the exclusions. The
// exchange is the aggregations' (exchange.go), its rounds paillierOpening's.
func (d *Decryption) Decrypt(ctx context.Context, cts []*paillier.Ciphertext) ([]*big.Int, map[string]string, error) {
	o := d.opening(d.Net.Self(), cts)
	excluded, err := d.exchange(ctx).open(ctx, o)
	if err != nil {
		return nil, excluded, err
	}
	plain, err := o.combine(excluded)
	if err != nil {
		return nil, excluded, err
	}
	return plain, excluded, nil
}

// Share is a decryptor's part. With Held, held are the ciphertexts this
// party holds: it shares them at once when it is among the first Ask
// decryptors, else when the root asks. Otherwise held is nil and it waits
// for the root's request, which brings Count ciphertexts; vet must accept
// them before any share is made (its error is returned as it is: a
// decryptor that shares whatever a root sends is a decryption oracle). It
// returns nil once it has sent its share or the root released it.
func (d *Decryption) Share(ctx context.Context, held []*paillier.Ciphertext, vet func([]*paillier.Ciphertext) error) error {
	sh, err := d.sharing(d.Net.Self(), held, vet)
	if err != nil {
		return err
	}
	return d.exchange(ctx).serve(ctx, sh)
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

func truncate(s string) string {
	if len(s) > maxReason {
		return s[:maxReason]
	}
	return s
}
