package psi

import (
	"errors"

	"github.com/cohortdm/cohort/wire"
)

// Errors callers may tell apart with errors.Is.
var (
	// ErrKey is returned for a join value or key that cannot be encoded,
	// or bytes that are not a canonical encoded key.
	ErrKey = errors.New("psi: bad join key")
	// ErrPeer is returned when a peer's message is malformed: a
	// non-canonical or identity point, a wrong count, a repeated element,
	// chunks out of order. Every error that wraps it is also
	// wire.ErrMalformed, as the runtime tells a peer's fault from ours.
	ErrPeer error = peerError{}
	// ErrTooLarge is returned when a set (ours or the peer's) exceeds
	// Config.MaxElements.
	ErrTooLarge = errors.New("psi: set too large")
	// ErrRestarted is returned when a message belongs to another run of
	// the same exchange: the peer (or this party) restarted mid-exchange,
	// so secrets of two runs would mix and the intersection would be
	// silently wrong. The step has to be run again, from the start, by
	// both parties.
	ErrRestarted = errors.New("psi: the exchange was restarted mid-way by one side")
	// ErrConfig is returned for an unusable Config or arguments (an empty
	// peer name, a hub that is not a party).
	ErrConfig = errors.New("psi: bad configuration")
)

// peerError is ErrPeer: one value that is also wire.ErrMalformed under
// errors.Is, so that no site of the package has to wrap both.
type peerError struct{}

func (peerError) Error() string { return "psi: malformed message from peer" }

func (peerError) Is(target error) bool { return target == wire.ErrMalformed }
