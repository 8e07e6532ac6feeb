package psi

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/wire"
)

// TypeSize carries a party's number of distinct elements before an
// exchange in ModeAuto, so that both sides pick the same protocol. Every
// protocol discloses the set sizes anyway.
const TypeSize = "psi/size"

// AutoOTMin is the combined number of distinct elements of the two
// parties from which ModeAuto picks OT over ECDH. OT's 512 base OTs cost
// about 0.13 core-seconds per exchange whatever the sets, then about 2
// core-µs per element; ECDH costs about 140 core-µs per element of either
// side (docs/psi.md), so the two meet near 950 elements in all.
const AutoOTMin = 1024

// AutoVOLEMin is the combined number of distinct elements from which
// ModeAuto picks VOLE over OT. VOLE takes 2.5–6 times less CPU than OT at
// every size measured, balanced or not, but its silent VOLE sends a fixed
// 1.5 MB or so (the GGM trees and base correlations) and then about 15
// bytes per element, where OT sends about 57: the two send as much near
// 36,000 elements in all (docs/psi.md, "Auto"). Below 2^15, at the 10
// Mbit/s secureagg's auto assumes, OT's fewer bytes outweigh VOLE's CPU;
// from there VOLE wins on both.
const AutoVOLEMin = 1 << 15

// autoMode is the protocol ModeAuto runs for sets of n and m distinct
// elements: the same on both sides, since both know both sizes.
func autoMode(n, m int) Mode {
	switch {
	case n+m >= AutoVOLEMin:
		return ModeVOLE
	case n+m >= AutoOTMin:
		return ModeOT
	}
	return ModeECDH
}

// Auto exchanges set sizes with the peer (TypeSize) and then runs ECDH
// for small sets, OT for middling ones and VOLE for large ones
// (autoMode), so a small join edge does not pay OT's base OTs, a middling
// one not VOLE's fixed bytes, and a large one neither ECDH's scalar
// multiplications nor OT's CPU. Its zero value uses the default Config.
type Auto struct {
	Config Config
}

var _ Intersector = Auto{}

// Run agrees the protocol with peer and runs it.
func (a Auto) Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error) {
	ag, err := agreeMode(ctx, net, peer, a.Config, elems)
	if err != nil {
		return nil, err
	}
	switch {
	case ag.mode == ModeECDH:
		return ECDH{Config: a.Config}.Run(ctx, net, peer, role, elems)
	case ag.mode == ModeUnbalanced && ag.server:
		if ag.up == nil {
			// The offline phase, in this step: the set is new or changed.
			if ag.up, err = a.Config.Store.prepare(elems); err != nil {
				return nil, err
			}
		}
		return upServe(ctx, net, peer, ag.cfg, ag.up)
	case ag.mode == ModeUnbalanced:
		return upClient(ctx, net, peer, ag.cfg, elems)
	}
	if ag.set == nil {
		if ag.set, err = otSetup(net, peer, a.Config, elems); err != nil {
			return nil, err
		}
	}
	if ag.mode == ModeVOLE {
		return voleRun(ctx, net, peer, role, ag.set)
	}
	return OT{Config: a.Config}.intersect(ctx, net, peer, role, ag.set)
}

// agreed is what agreeMode settled.
type agreed struct {
	mode   Mode
	cfg    Config    // with defaults
	set    *otSet    // our set as OT takes it, if it was counted that way
	up     *upServer // our prepared unbalanced state, if fresh
	server bool      // in ModeUnbalanced: whether we serve
}

// agreeMode sends our distinct set size to peer, with whether we can
// serve the unbalanced mode (we have a Store), reads the peer's, and
// returns the mode both sides pick (pickMode). Our set is counted as OT
// takes it (digests under the step's tag, repeats removed), and returned
// for OT to use, so a large set is not deduplicated twice; a set whose
// unbalanced state is prepared and fresh is counted from it instead,
// which costs one pass of SHA-256 rather than a map of every element.
func agreeMode(ctx context.Context, net Network, peer string, cfg Config, elems [][]byte) (*agreed, error) {
	ag := &agreed{}
	var err error
	if ag.cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	serves := cfg.Store != nil && len(elems) >= UnbalancedMinServer
	if serves {
		if ag.up, err = cfg.Store.loadServer(elems); err != nil {
			return nil, err
		}
	}
	var n int
	if ag.up != nil {
		n = ag.up.key.N
	} else {
		if ag.set, err = otSetup(net, peer, cfg, elems); err != nil {
			return nil, err
		}
		n = len(ag.set.uniq)
	}
	if err := sendBody(ctx, net, peer, TypeSize, &sizeBody{Size: n, Serves: serves}); err != nil {
		return nil, err
	}
	b, err := receive(ctx, net, peer, TypeSize)
	if err != nil {
		return nil, err
	}
	theirs, err := decodeSize(b, ag.cfg.MaxElements)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", TypeSize, peer, err)
	}
	ag.mode = pickMode(n, serves, theirs.Size, theirs.Serves)
	ag.server = ag.mode == ModeUnbalanced && n > theirs.Size
	if ag.mode != ModeUnbalanced && theirs.Size > ag.cfg.MaxElements {
		return nil, fmt.Errorf("%s from %s: %w: %w: the peer announces %d distinct elements, limit %d", TypeSize, peer, ErrPeer, ErrTooLarge, theirs.Size, ag.cfg.MaxElements)
	}
	return ag, nil
}

// pickMode is the mode Auto runs for sets of n and m distinct elements,
// the same on both sides since both know both sizes and who serves:
// unbalanced when the larger set is at least UnbalancedMinServer and
// UnbalancedRatio times the smaller, at most UnbalancedMaxServer, and its
// holder can serve; else autoMode.
func pickMode(n int, nServes bool, m int, mServes bool) Mode {
	big, small, serves := n, m, nServes
	if m > n {
		big, small, serves = m, n, mServes
	}
	if serves && big >= UnbalancedMinServer && big <= UnbalancedMaxServer && big >= UnbalancedRatio*small {
		return ModeUnbalanced
	}
	return autoMode(n, m)
}

// sizeBody is the body of TypeSize.
type sizeBody struct {
	Size int `msgpack:"n"`
	// Serves says the sender keeps a Store and so can serve the
	// unbalanced mode.
	Serves bool `msgpack:"u,omitempty"`
}

// decodeSize decodes a TypeSize body strictly: a size in [0, max], or up
// to UnbalancedMaxServer from a peer that can serve the unbalanced mode
// (its set is checked against max again if another mode is picked).
func decodeSize(b []byte, limit int) (sizeBody, error) {
	var body sizeBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return body, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if body.Size < 0 {
		return body, fmt.Errorf("%w: %w: set size %d", ErrPeer, wire.ErrMalformed, body.Size)
	}
	if body.Serves {
		limit = max(limit, UnbalancedMaxServer)
	}
	if body.Size > limit {
		return body, fmt.Errorf("%w: %w: the peer announces %d distinct elements, limit %d", ErrPeer, ErrTooLarge, body.Size, limit)
	}
	return body, nil
}
