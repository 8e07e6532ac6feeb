package secureagg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/wire"
)

// The root's own input is committed before the root can see any other.
//
// Every party checks the total it decrypts against the root's own input
// and each child's subtree, the latter vouched for by the children
// directly (Paillier: digests of the subtrees, which the party re-sums;
// lattice: sketches, lattice_sketch.go). The root's own component has no
// other sender, so without more a root that deviated could send, as "its
// own input", one that cancels the other subtrees but one (it holds them
// all by then) and have a single subtree decrypted. So the root sends each
// child a digest of its own component first (commit), each child waits
// for it before it sends its subtree up, and repeats it in what it sends
// every other party (its digest or its sketches); every party then checks
// the root's component against the commitment all the root's children
// received. A root's own input can still be anything it chooses, but
// chosen blind to everyone else's: it is that party's input.

// errNoCommit is a root that withdrew instead of committing.
var errNoCommit = errors.New("the root withdrew")

// commitOwn is the root's commitment to its own component comp, sent to
// each child before the root waits for their subtrees.
func (s *schedule) commitOwn(ctx context.Context, comp []byte) {
	s.rootCommit = digest(s.step, s.self, comp)
	s.sendAll(ctx, s.upHops, s.tree.children(s.self), TypeCommit, digestBody{D: s.rootCommit}, wire.DiscloseControl)
}

// withdrawCommit tells the children of a root that has no input that no
// commitment comes, so they stop waiting for one at once.
func (s *schedule) withdrawCommit(ctx context.Context) {
	if s.tree.parent(s.self) == "" {
		s.sendAll(ctx, s.upHops, s.tree.children(s.self), TypeCommit, digestBody{}, wire.DiscloseControl)
	}
}

// awaitCommit is a child of the root's wait for the root's commitment,
// before it sends its subtree up; it must come within the time the child
// has to send.
func (s *schedule) awaitCommit(ctx context.Context) error {
	msg, err := s.receive(ctx, s.upHops(s.self), s.tree.root(), TypeCommit)
	var body digestBody
	if err == nil {
		body, err = decodeDigest(msg)
	}
	if err == nil && len(body.D) == 0 {
		err = errNoCommit
	}
	if err != nil {
		return fmt.Errorf("no commitment from the root %s to its own input: %w", s.tree.root(), err)
	}
	s.rootCommit = body.D
	return nil
}

// decodeDigest decodes a digest or commit body: digests of SHA-256's
// size, or none.
func decodeDigest(b []byte) (digestBody, error) {
	var body digestBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return body, err
	}
	for _, d := range [][]byte{body.D, body.Root} {
		if err := checkDigestSize(d); err != nil {
			return body, err
		}
	}
	return body, nil
}

// checkDigestSize accepts a digest of SHA-256's size, or none.
func checkDigestSize(d []byte) error {
	if len(d) != 0 && len(d) != sha256.Size {
		return fmt.Errorf("%w: a digest of %d bytes", wire.ErrMalformed, len(d))
	}
	return nil
}

// checkRootCommit checks the root's component against the commitment the
// root's children received (every one of them the same).
func (s *stage) checkRootCommit(commits [][]byte, comp []byte) error {
	root := s.tree.root()
	for _, c := range commits {
		if len(c) == 0 || !bytes.Equal(c, commits[0]) {
			return fmt.Errorf("%w: the root %s's children did not all receive one commitment to its own input; no decryption share is made",
				ErrTampered, root)
		}
	}
	if len(commits) == 0 || !bytes.Equal(commits[0], digest(s.step, root, comp)) {
		return fmt.Errorf("%w: the total from %s does not hold its own input as it committed to it before the others were sent; no decryption share is made",
			ErrTampered, root)
	}
	return nil
}
