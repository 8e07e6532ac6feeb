package psi

import (
	"crypto/rand"
	"fmt"

	"github.com/cloudflare/circl/group"
	"github.com/cloudflare/circl/ot/simot"

	"github.com/cohortdm/cohort/wire"
)

// The k base OTs of the extension, with circl's Simplest OT (Chou and
// Orlandi, LATINCRYPT 2015) over ristretto255: one OT per column, batched
// into one message per round. The OPRF receiver is the base-OT sender of
// two random 16-byte PRG seeds per column; the OPRF sender is the
// base-OT receiver with its secret choice vector s.

// baseSender is the base-OT sender's state between its two rounds.
type baseSender struct {
	ot     []simot.Sender
	k0, k1 [][]byte
}

// newBaseSender draws the seeds k0_j, k1_j of width OTs (otWidth for
// KKRT, voleWidth for the VOLE mode's IKNP) and returns the first message
// A_j of every OT. On every core.
func newBaseSender(width int) (*baseSender, []group.Element) {
	s := &baseSender{ot: make([]simot.Sender, width), k0: make([][]byte, width), k1: make([][]byte, width)}
	seeds := make([]byte, 2*width*16)
	rand.Read(seeds) // crypto/rand.Read never fails (Go ≥ 1.24)
	a := make([]group.Element, width)
	_ = parallel(width, func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			s.k0[j] = seeds[32*j : 32*j+16]
			s.k1[j] = seeds[32*j+16 : 32*j+32]
			a[j] = s.ot[j].InitSender(group.Ristretto255, s.k0[j], s.k1[j], j)
		}
		return nil
	})
	return s, a
}

// finish answers the receiver's B_j with both encryptions of each OT's
// seeds: e0_j ‖ e1_j for every j, otCipherLen bytes each.
func (s *baseSender) finish(b []group.Element) []byte {
	out := make([]byte, 2*len(s.ot)*otCipherLen)
	_ = parallel(len(s.ot), func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			e0, e1 := s.ot[j].Round2Sender(b[j])
			if len(e0) != otCipherLen || len(e1) != otCipherLen {
				panic(fmt.Sprintf("psi: internal error: simot ciphertexts of %d and %d bytes", len(e0), len(e1)))
			}
			copy(out[2*j*otCipherLen:], e0)
			copy(out[(2*j+1)*otCipherLen:], e1)
		}
		return nil
	})
	return out
}

// baseReceiver is the base-OT receiver's state between its two rounds.
type baseReceiver struct {
	ot     []simot.Receiver
	choice []int // s_j ∈ {0, 1}
}

// newBaseReceiver draws the secret choice vector s and answers the
// sender's A_j with B_j, one OT per element of a. On every core.
func newBaseReceiver(a []group.Element) (*baseReceiver, []group.Element) {
	width := len(a)
	r := &baseReceiver{ot: make([]simot.Receiver, width), choice: make([]int, width)}
	bits := make([]byte, (width+7)/8)
	rand.Read(bits)
	for j := range r.choice {
		r.choice[j] = int(bits[j/8]>>(j%8)) & 1
	}
	b := make([]group.Element, width)
	_ = parallel(width, func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			b[j] = r.ot[j].Round1Receiver(group.Ristretto255, r.choice[j], j, a[j])
		}
		return nil
	})
	return r, b
}

// finish decrypts the chosen seed k_{s_j} of every OT from the sender's
// ciphertexts; one that fails to decrypt is ErrPeer.
func (r *baseReceiver) finish(cipher []byte) ([][]byte, error) {
	keys := make([][]byte, len(r.ot))
	err := parallel(len(r.ot), func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			e0 := cipher[2*j*otCipherLen : (2*j+1)*otCipherLen]
			e1 := cipher[(2*j+1)*otCipherLen : (2*j+2)*otCipherLen]
			if err := r.ot[j].Round3Receiver(e0, e1, r.choice[j]); err != nil {
				return fmt.Errorf("%w: %w: base OT %d: %w", ErrPeer, wire.ErrMalformed, j, err)
			}
			k := r.ot[j].Returnmc()
			if len(k) != 16 {
				return fmt.Errorf("%w: %w: base OT %d carries a seed of %d bytes", ErrPeer, wire.ErrMalformed, j, len(k))
			}
			keys[j] = k
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}
