package secureagg

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// The rounds of a threshold Paillier decryption (Decryption), without
// I/O: the root's (paillierOpening) and a decryptor's (paillierSharing).
// The share exchange's driver (exchange.go) carries them.

// paillierOpening is the root's side: round 0 asks the first Ask
// decryptors (or, with Held, awaits their shares unasked), round 1 the
// others when fewer than t+1 shares (the root's own included) are valid,
// or releases them.
type paillierOpening struct {
	d    *Decryption
	self string
	cts  []*paillier.Ciphertext
	// req is the request (the ciphertexts unless Held) and what it
	// discloses.
	req        []byte
	disclosure wire.Disclosure
	mine       *paillier.DecryptionShare
	got        map[string]*paillier.DecryptionShare // the valid shares of the others
}

var _ opener = (*paillierOpening)(nil)

// opening is the root's side of d, self being the root, decrypting cts.
func (d *Decryption) opening(self string, cts []*paillier.Ciphertext) *paillierOpening {
	return &paillierOpening{d: d, self: self, cts: cts, got: map[string]*paillier.DecryptionShare{}}
}

// first checks d and asks the first Ask decryptors, by First.
func (o *paillierOpening) first() (*shareRound, error) {
	d := o.d
	if err := d.check(); err != nil {
		return nil, err
	}
	if o.self != d.Root {
		return nil, fmt.Errorf("secureagg: %s decrypts, but %s is the root", o.self, d.Root)
	}
	if len(o.cts) != d.Count {
		return nil, fmt.Errorf("secureagg: %d ciphertexts to decrypt, expected %d", len(o.cts), d.Count)
	}
	req, disclosure := requestBody{}, wire.DiscloseControl
	if !d.Held {
		var err error
		if req.C, err = d.Keys.Public().MarshalCiphertexts(o.cts); err != nil {
			return nil, fmt.Errorf("secureagg: marshal ciphertexts: %w", err)
		}
		disclosure = wire.DiscloseCiphertext
	}
	var err error
	if o.req, err = wire.Marshal(&req); err != nil {
		return nil, fmt.Errorf("secureagg: marshal the request: %w", err)
	}
	o.disclosure = disclosure
	r := &shareRound{asked: d.Decryptors[:d.Ask], due: d.First}
	if !d.Held {
		r.request, r.disclosure = o.req, disclosure
	}
	return r, nil
}

// own makes the root's share, in the first round.
func (o *paillierOpening) own(r *shareRound) error {
	if r.seq > 0 {
		return nil
	}
	var err error
	o.mine, err = o.d.Keys.Share.DecryptShare(o.d.random(), o.cts, o.d.proofContext())
	return err
}

// slots: one share per party, on the decryption's network.
func (o *paillierOpening) slots(*shareRound, string) []inShare {
	return []inShare{{r: &oneBody{}}}
}

// check decodes p's share and verifies its proof, which binds the key,
// p's share index and the step.
func (o *paillierOpening) check(_ *shareRound, p string, _ int, data []byte) (func() string, string) {
	pk := o.d.Keys.Public()
	sh, err := decodeShare(data, pk, o.d.Keys.Index(p), len(o.cts))
	if err != nil {
		return nil, "malformed decryption share: " + truncate(err.Error())
	}
	if err := pk.VerifyShare(o.cts, sh, o.d.proofContext()); err != nil {
		return nil, "invalid decryption share: " + truncate(err.Error())
	}
	return func() string { o.got[p] = sh; return "" }, ""
}

// valid lists the valid shares: the root's own, then the decryptors' in
// the order they are asked.
func (o *paillierOpening) valid() []*paillier.DecryptionShare {
	out := []*paillier.DecryptionShare{o.mine}
	for _, q := range o.d.Decryptors {
		if sh := o.got[q]; sh != nil {
			out = append(out, sh)
		}
	}
	return out
}

// next asks the decryptors held back, by Late, when fewer than t+1
// shares are valid after the first round; else, with Release, tells them
// that none of theirs is needed.
func (o *paillierOpening) next(r *shareRound, _ map[string]string) (*shareRound, error) {
	d := o.d
	rest := d.Decryptors[d.Ask:]
	if r.seq > 0 || len(rest) == 0 {
		return nil, nil
	}
	switch {
	case len(o.valid()) < d.Keys.Public().Threshold+1:
		return &shareRound{seq: 1, asked: rest, request: o.req, disclosure: o.disclosure, due: d.Late}, nil
	case d.Release:
		release, err := wire.Marshal(&requestBody{Release: true})
		if err != nil {
			return nil, fmt.Errorf("secureagg: marshal the release: %w", err)
		}
		return &shareRound{seq: 1, asked: rest, request: release, disclosure: wire.DiscloseControl, release: true, due: d.Late}, nil
	}
	return nil, nil
}

// combine combines t+1 valid shares into the plaintexts, or returns
// ErrTooFewShares naming the excluded parties.
func (o *paillierOpening) combine(excluded map[string]string) ([]*big.Int, error) {
	pk := o.d.Keys.Public()
	valid, need := o.valid(), pk.Threshold+1
	if len(valid) < need {
		names := slices.Sorted(maps.Keys(excluded))
		return nil, fmt.Errorf("%w: %d of %d needed; excluded %s", ErrTooFewShares, len(valid), need, strings.Join(names, ", "))
	}
	plain, err := pk.Combine(o.cts, valid[:need])
	if err != nil {
		return nil, fmt.Errorf("secureagg: combine shares: %w", err)
	}
	return plain, nil
}

// paillierSharing is a decryptor's side: one share, unasked (Held, among
// the first Ask) or for the root's request, whose ciphertexts (unless
// Held) vet must accept first.
type paillierSharing struct {
	d        *Decryption
	at       int // this party's place among the decryptors
	cts      []*paillier.Ciphertext
	vet      func([]*paillier.Ciphertext) error
	deadline time.Time // when its share is due
}

var _ sharer = (*paillierSharing)(nil)

// sharing is decryptor self's side of d; held and vet as for Share.
func (d *Decryption) sharing(self string, held []*paillier.Ciphertext, vet func([]*paillier.Ciphertext) error) (*paillierSharing, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	at := slices.Index(d.Decryptors, self)
	if at < 0 {
		return nil, fmt.Errorf("secureagg: %s is not a decryptor of step %s/%d", self, d.Step.Phase, d.Step.Round)
	}
	switch {
	case d.Held && len(held) != d.Count:
		return nil, fmt.Errorf("secureagg: %d ciphertexts held, expected %d", len(held), d.Count)
	case !d.Held && vet == nil:
		return nil, fmt.Errorf("secureagg: %s would decrypt whatever root %s sends: no vetting", self, d.Root)
	}
	sh := &paillierSharing{d: d, at: at, cts: held, vet: vet, deadline: d.Late}
	if at < d.Ask {
		sh.deadline = d.First
	}
	return sh, nil
}

func (s *paillierSharing) unasked() bool        { return s.d.Held && s.at < s.d.Ask }
func (s *paillierSharing) waitUntil() time.Time { return s.deadline }
func (s *paillierSharing) more() bool           { return false }

// answer decodes the request; unless Held, vet must accept the
// ciphertexts it carries.
func (s *paillierSharing) answer(msg []byte) (bool, error) {
	d := s.d
	req, err := decodeRequest(msg, &d.Keys.Public().PublicKey, d.Count, d.Held)
	if err != nil {
		return false, fmt.Errorf("secureagg: the request from %s: %w", d.Root, err)
	}
	if req.Release {
		return false, nil
	}
	if !d.Held {
		cts, err := d.Keys.Public().UnmarshalCiphertexts(req.C)
		if err != nil {
			return false, fmt.Errorf("secureagg: the request from %s: %w", d.Root, err)
		}
		if err := s.vet(cts); err != nil {
			return false, err
		}
		s.cts = cts
	}
	return true, nil
}

// shares makes this party's share, with its proof.
func (s *paillierSharing) shares() ([]outShare, time.Time, error) {
	share, err := s.d.Keys.Share.DecryptShare(s.d.random(), s.cts, s.d.proofContext())
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("secureagg: decryption share: %w", err)
	}
	b, err := share.MarshalBinary()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("secureagg: marshal share: %w", err)
	}
	f, err := frame(shareBody{Share: b})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("secureagg: marshal share: %w", err)
	}
	return []outShare{{f: f}}, s.deadline, nil
}
