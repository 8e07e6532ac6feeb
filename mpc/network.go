package mpc

import (
	"context"
	"fmt"
)

// Network carries one party's rounds. The job layer implements it over
// its messages; the protocols here do no I/O of their own, so a test
// runs them over a network in memory.
//
// One call is one synchronous round: out[j] is the vector for party j
// (index 0..N-1; out[Self] is never sent), and in[j] is what party j
// sent this party in the same round. Every party calls Exchange with
// the same round numbers in the same order, and every vector may be
// empty; the Party checks each length against what the protocol
// expects, so an implementation only has to deliver what it was given,
// bound to its round, and wait for it under ctx. It must not modify
// out's vectors (Open passes one vector for every peer); the vectors
// it returns belong to the caller.
type Network interface {
	Exchange(ctx context.Context, round uint32, out [][]Elem) (in [][]Elem, err error)
}

// Stats counts one party's traffic: the rounds it took part in, the
// bytes it sent to other parties (16 per element; the encoding's
// 4-byte count per vector and the transport's framing are not counted)
// and the elements opened to every party (what the protocols reveal by
// design, counted so a test can hold them to their profile).
type Stats struct {
	Rounds int
	Sent   int64
	Opened int64
}

// exchange runs one round: it sends out[j] to every j != Self and
// checks that party j sent exactly want[j] elements. Its errors name
// the round and the party, and the lengths, never an element.
func (p *Party) exchange(ctx context.Context, out [][]Elem, want []int) ([][]Elem, error) {
	p.round++
	r := p.round
	for j := range out {
		if j != p.Self {
			p.stats.Sent += int64(len(out[j])) * ElemSize
		}
	}
	p.stats.Rounds++
	in, err := p.Net.Exchange(ctx, r, out)
	if err != nil {
		return nil, fmt.Errorf("mpc: round %d: %w", r, err)
	}
	if len(in) != p.N {
		return nil, fmt.Errorf("mpc: round %d: %d vectors from the network, want %d", r, len(in), p.N)
	}
	in[p.Self] = out[p.Self]
	for j, w := range want {
		if j == p.Self {
			continue
		}
		if in[j] == nil && w > 0 {
			return nil, fmt.Errorf("mpc: round %d: party %d sent nothing, want %d elements", r, j, w)
		}
		if len(in[j]) != w {
			return nil, fmt.Errorf("mpc: round %d: party %d sent %d elements, want %d elements", r, j, len(in[j]), w)
		}
	}
	return in, nil
}
