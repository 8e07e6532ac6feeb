package hamdist

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/protocol"
)

// Message types of one exchange.
const (
	TypeKey     = "hamming/key"     // holder → comparer: the run's public key (control)
	TypeCts     = "hamming/cts"     // holder → comparer: E(g^{a_i}) (distance)
	TypeBlinded = "hamming/blinded" // comparer → holder: the permuted e″ (distance)
)

// ChunkSize is the number of ciphertexts per message (128 KiB of them).
const ChunkSize = 2048

// Network carries one exchange's messages: job.StepNet (on a step's
// sub-channel) is one, and a test can write one in memory.
type Network interface {
	Self() string
	Send(ctx context.Context, to, typ string, body []byte, d protocol.Disclosure) error
	Receive(ctx context.Context, from, typ string) ([]byte, error)
}

// RunHolder is the key holder's (Alice's) side of Fig. 2 over net with
// peer: it draws a fresh key, sends E(g^{a_i}) for each position, and
// returns how many of the peer's n·width blinded comparisons decrypt to 1
// (positions whose values meet). The distance is len(a) minus it.
func RunHolder(ctx context.Context, net Network, peer string, a []Value, width int) (int, error) {
	k := GenerateKey()
	pub := k.Public()
	key, err := EncodeKey(pub, len(a))
	if err != nil {
		return 0, err
	}
	if err := net.Send(ctx, peer, TypeKey, key, protocol.DiscloseControl); err != nil {
		return 0, fmt.Errorf("hamdist: send key: %w", err)
	}
	if err := sendVector(ctx, net, peer, TypeCts, pub, k.Encrypt(a)); err != nil {
		return 0, err
	}
	back, err := receiveVector(ctx, net, peer, TypeBlinded, pub, len(a)*width)
	if err != nil {
		return 0, err
	}
	return k.CountOnes(back), nil
}

// RunComparer is the comparer's (Bob's) side: it receives the holder's
// key and ciphertexts, one per window, and returns Compare's permuted
// blinded comparisons. It learns nothing (it sees only ciphertexts).
func RunComparer(ctx context.Context, net Network, peer string, win Windows) error {
	raw, err := net.Receive(ctx, peer, TypeKey)
	if err != nil {
		return fmt.Errorf("hamdist: receive key: %w", err)
	}
	pub, err := DecodeKey(raw, len(win))
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
	return sendVector(ctx, net, peer, TypeBlinded, pub, out)
}

func sendVector(ctx context.Context, net Network, peer, typ string, pub PublicKey, cts []Ciphertext) error {
	for i := range numChunks(len(cts), ChunkSize) {
		b, err := EncodeChunk(pub, cts, i, ChunkSize)
		if err != nil {
			return err
		}
		if err := net.Send(ctx, peer, typ, b, protocol.DiscloseDistance); err != nil {
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
