package hamdist

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/wire"
)

// Message types of one exchange.
const (
	TypeKey     = "hamming/key"     // holder → comparer: the run's public key and n (control)
	TypeReady   = "hamming/ready"   // comparer → holder: whether it takes part (control)
	TypeDone    = "hamming/done"    // holder → comparer: whether it counted (control)
	TypeCts     = "hamming/cts"     // holder → comparer: E(g^{a_i}) (distance)
	TypeBlinded = "hamming/blinded" // comparer → holder: the permuted e″ (distance)
)

// ChunkSize is the number of ciphertexts per message (128 KiB of them).
const ChunkSize = 2048

// Network carries one exchange's messages: job.StepNet (on a step's
// sub-channel) is one, and a test can write one in memory.
type Network interface {
	Self() string
	Send(ctx context.Context, to, typ string, body []byte, d wire.Disclosure) error
	Receive(ctx context.Context, from, typ string) ([]byte, error)
}

// ErrTooFew is returned, on both sides, when fewer positions are to be
// compared than the job's minimum.
var ErrTooFew = errors.New("hamdist: fewer positions than the job's minimum")

// ErrRefused is returned when the peer did not take part or could not
// take the comparer's answer (its error is its own to report).
var ErrRefused = errors.New("hamdist: the peer refused the comparison")

// readyBody is the comparer's answer to the key: whether it goes on.
type readyBody struct {
	OK bool `msgpack:"ok"`
}

// RunHolder is the key holder's (Alice's) side of Fig. 2 over net with
// peer: it draws a fresh key, sends E(g^{a_i}) for each position, and
// returns how many of the peer's n·width blinded comparisons decrypt to 1
// (positions whose values meet). The distance is len(a) minus it. Both
// sides check that n is the same and at least least before anything is
// encrypted, and both fail when it is not, so neither waits on the other.
func RunHolder(ctx context.Context, net Network, peer string, a []Value, width, least int) (int, error) {
	k := GenerateKey()
	pub := k.Public()
	key, err := EncodeKey(pub, len(a))
	if err != nil {
		return 0, err
	}
	if err := net.Send(ctx, peer, TypeKey, key, wire.DiscloseControl); err != nil {
		return 0, fmt.Errorf("hamdist: send key: %w", err)
	}
	if len(a) < least {
		return 0, ErrTooFew
	}
	raw, err := net.Receive(ctx, peer, TypeReady)
	if err != nil {
		return 0, fmt.Errorf("hamdist: receive ready: %w", err)
	}
	var ready readyBody
	if err := wire.Unmarshal(raw, &ready); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if !ready.OK {
		return 0, ErrRefused
	}
	if err := sendVector(ctx, net, peer, TypeCts, pub, k.Encrypt(a)); err != nil {
		return 0, err
	}
	back, err := receiveVector(ctx, net, peer, TypeBlinded, pub, len(a)*width)
	if derr := sendDone(ctx, net, peer, err == nil); err == nil {
		err = derr
	}
	if err != nil {
		return 0, err
	}
	return k.CountOnes(back), nil
}

// sendDone tells the comparer whether its comparisons were taken, so that
// a comparer with more exchanges to run (one per candidate) stops when the
// holder has failed instead of waiting for a key that will not come.
func sendDone(ctx context.Context, net Network, peer string, ok bool) error {
	b, err := wire.Marshal(&readyBody{OK: ok})
	if err != nil {
		return err
	}
	if err := net.Send(ctx, peer, TypeDone, b, wire.DiscloseControl); err != nil {
		return fmt.Errorf("hamdist: send done: %w", err)
	}
	return nil
}

// RunComparer is the comparer's (Bob's) side: it receives the holder's
// key and ciphertexts, one per window, sends back Compare's permuted
// blinded comparisons, and waits for the holder's receipt (ErrRefused when
// the holder could not take them). It learns nothing (it sees only
// ciphertexts, and whether the holder counted).
func RunComparer(ctx context.Context, net Network, peer string, win Windows, least int) error {
	raw, err := net.Receive(ctx, peer, TypeKey)
	if err != nil {
		return fmt.Errorf("hamdist: receive key: %w", err)
	}
	pub, err := DecodeKey(raw, len(win))
	if err == nil && len(win) < least {
		err = ErrTooFew
	}
	ready, merr := wire.Marshal(&readyBody{OK: err == nil})
	if merr != nil {
		return merr
	}
	if serr := net.Send(ctx, peer, TypeReady, ready, wire.DiscloseControl); serr != nil && err == nil {
		err = fmt.Errorf("hamdist: send ready: %w", serr)
	}
	if err != nil {
		return err
	}
	e, err := receiveVector(ctx, net, peer, TypeCts, pub, len(win))
	if err != nil {
		return err
	}
	out, err := Compare(pub, e, win)
	if err != nil {
		return err
	}
	if err := sendVector(ctx, net, peer, TypeBlinded, pub, out); err != nil {
		return err
	}
	raw, err = net.Receive(ctx, peer, TypeDone)
	if err != nil {
		return fmt.Errorf("hamdist: receive done: %w", err)
	}
	var done readyBody
	if err := wire.Unmarshal(raw, &done); err != nil {
		return fmt.Errorf("%w: %w", ErrPeer, err)
	}
	if !done.OK {
		return ErrRefused
	}
	return nil
}

func sendVector(ctx context.Context, net Network, peer, typ string, pub PublicKey, cts []Ciphertext) error {
	for i := range numChunks(len(cts), ChunkSize) {
		b, err := EncodeChunk(pub, cts, i, ChunkSize)
		if err != nil {
			return err
		}
		if err := net.Send(ctx, peer, typ, b, wire.DiscloseDistance); err != nil {
			return fmt.Errorf("hamdist: send %s: %w", typ, err)
		}
	}
	return nil
}

func receiveVector(ctx context.Context, net Network, peer, typ string, pub PublicKey, total int) ([]Ciphertext, error) {
	out := make([]Ciphertext, 0, total)
	for i := range numChunks(total, ChunkSize) {
		b, err := net.Receive(ctx, peer, typ)
		if err != nil {
			return nil, fmt.Errorf("hamdist: receive %s: %w", typ, err)
		}
		cts, err := DecodeChunk(b, pub, total, i, ChunkSize)
		if err != nil {
			return nil, err
		}
		out = append(out, cts...)
	}
	return out, nil
}
