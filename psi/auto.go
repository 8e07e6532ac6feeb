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

// autoMode is the protocol ModeAuto runs for sets of n and m distinct
// elements: the same on both sides, since both know both sizes.
func autoMode(n, m int) Mode {
	if n+m >= AutoOTMin {
		return ModeOT
	}
	return ModeECDH
}

// Auto exchanges set sizes with the peer (TypeSize) and then runs ECDH
// for small sets and OT for the rest (autoMode), so a small join edge
// does not pay OT's base OTs and a large one does not pay ECDH's scalar
// multiplications. Its zero value uses the default Config.
type Auto struct {
	Config Config
}

var _ Intersector = Auto{}

// Run agrees the protocol with peer and runs it.
func (a Auto) Run(ctx context.Context, net Network, peer string, role Role, elems [][]byte) (*Result, error) {
	mode, set, err := agreeMode(ctx, net, peer, a.Config, elems)
	if err != nil {
		return nil, err
	}
	if mode == ModeECDH {
		return ECDH{Config: a.Config}.Run(ctx, net, peer, role, elems)
	}
	return OT{Config: a.Config}.intersect(ctx, net, peer, role, set)
}

// agreeMode sends our distinct set size to peer, reads the peer's, and
// returns autoMode of the two. Our set is counted as OT takes it (digests
// under the step's tag, repeats removed), and returned for OT to use, so
// a large set is not deduplicated twice.
func agreeMode(ctx context.Context, net Network, peer string, cfg Config, elems [][]byte) (Mode, *otSet, error) {
	set, err := otSetup(net, peer, cfg, elems)
	if err != nil {
		return 0, nil, err
	}
	n := len(set.uniq)
	body, err := wire.Marshal(&sizeBody{Size: n})
	if err != nil {
		return 0, nil, fmt.Errorf("psi: encode %s: %w", TypeSize, err)
	}
	if err := net.Send(ctx, peer, TypeSize, body); err != nil {
		return 0, nil, fmt.Errorf("psi: send %s to %s: %w", TypeSize, peer, err)
	}
	msg, err := net.Receive(ctx, peer, TypeSize)
	if err != nil {
		return 0, nil, fmt.Errorf("psi: receive %s from %s: %w", TypeSize, peer, err)
	}
	m, err := decodeSize(msg, set.cfg.MaxElements)
	if err != nil {
		return 0, nil, fmt.Errorf("%s from %s: %w", TypeSize, peer, err)
	}
	return autoMode(n, m), set, nil
}

// sizeBody is the body of TypeSize.
type sizeBody struct {
	Size int `msgpack:"n"`
}

// decodeSize decodes a TypeSize body strictly: a size in [0, max].
func decodeSize(b []byte, max int) (int, error) {
	var body sizeBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if body.Size < 0 {
		return 0, fmt.Errorf("%w: %w: set size %d", ErrPeer, wire.ErrMalformed, body.Size)
	}
	if body.Size > max {
		return 0, fmt.Errorf("%w: %w: the peer announces %d distinct elements, limit %d", ErrPeer, ErrTooLarge, body.Size, max)
	}
	return body.Size, nil
}
