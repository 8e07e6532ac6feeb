package secureagg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
)

// paillierAgg is one party's state for one aggregation on the Paillier
// backend: the schedule it runs on, the key, the packing and the digests
// that vet the total.
type paillierAgg struct {
	*schedule
	*paillierScheme
	keys *Keys
	ask  int    // how many parties are asked for shares up front
	own  []byte // as a child of the root: the digest of the product it sent up
}

// precompute builds the key's encryption table (once per process and key,
// 0.3 s at 2048 bits) before the schedule's clock starts, so a node's first
// round is not judged late. The build cannot be interrupted, but the caller
// stops waiting when ctx ends: a superseded attempt returns at once and the
// table, shared by every later use of the key, finishes in the background.
func precompute(ctx context.Context, keys *Keys) error {
	if keys == nil || keys.Public() == nil {
		return nil // newPaillierAgg reports the missing key
	}
	built := make(chan struct{})
	go func() {
		defer close(built)
		keys.Public().Precompute()
	}()
	select {
	case <-built:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("secureagg: building the encryption table: %w", ctx.Err())
	}
}

func newPaillierAgg(net Network, step job.Step, cfg Config, n int) (*paillierAgg, error) {
	if err := cfg.Keys.Check(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("secureagg: empty input vector")
	}
	enc, err := planEncoding(len(step.Parties), cfg)
	if err != nil {
		return nil, err
	}
	if self := net.Self(); cfg.Keys.Members[cfg.Keys.Share.Index-1] != self {
		return nil, fmt.Errorf("%w: %s holds the share of %s", ErrKeys, self, cfg.Keys.Members[cfg.Keys.Share.Index-1])
	}
	sch, err := newSchedule(net, step, cfg, 0)
	if err != nil {
		return nil, err
	}
	s := &paillierAgg{schedule: sch, keys: cfg.Keys}
	if s.paillierScheme, err = newPaillierScheme(cfg.Keys.Public(), enc, n, len(sch.parties)); err != nil {
		return nil, err
	}
	for _, q := range s.parties {
		if cfg.Keys.Index(q) == 0 {
			return nil, fmt.Errorf("secureagg: party %s holds no share of the consortium key", q)
		}
	}
	if len(s.parties) < s.pk.Threshold+1 {
		return nil, fmt.Errorf("%w: %d parties cannot reach the %d shares needed to decrypt", ErrTooFewShares, len(s.parties), s.pk.Threshold+1)
	}
	s.ask = cfg.Decryptors
	if s.ask == 0 || s.ask > len(s.parties) {
		s.ask = len(s.parties)
	}
	if s.ask < s.pk.Threshold+1 {
		return nil, fmt.Errorf("secureagg: %d decryptors cannot reach the %d shares needed", s.ask, s.pk.Threshold+1)
	}
	s.shape = fmt.Sprintf("v1 n=%d frac=%d bits=%d fanout=%d decryptors=%d noise=%s", n, cfg.FracBits, cfg.ValueBits, s.tree.k, s.ask, s.noiseDesc)
	return s, nil
}

// The Paillier backend's stages (backend, run by runTree): a subtree's
// sum is the product of its ciphertexts, every party forms the total
// itself from the root's components (its own input and each child's
// subtree product), vetted by the children's digests.

var _ backend[[]*paillier.Ciphertext, []*paillier.Ciphertext] = (*paillierAgg)(nil)

func (s *paillierAgg) component(own []*paillier.Ciphertext) ([]byte, error) { return s.marshal(own) }

// sendTotal sends the total's components down; the root decrypts the
// product it formed.
func (s *paillierAgg) sendTotal(ctx context.Context, own []byte, acc []*paillier.Ciphertext, parts [][]*paillier.Ciphertext) ([]*paillier.Ciphertext, error) {
	body, err := s.components(own, parts)
	if err != nil {
		return nil, err
	}
	s.sendAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, body, protocol.DiscloseCiphertext)
	return acc, nil
}

// abort tells the parent and the children at once (and, at the root, the
// children waiting for its commitment) that the attempt failed for want
// of missing, so nobody waits for this party in vain.
func (s *paillierAgg) abort(ctx context.Context, missing []string) {
	s.withdrawCommit(ctx)
	if parent := s.tree.parent(s.self); parent != "" {
		_ = s.send(ctx, s.upHops(s.self), parent, TypeUp, ciphertextBody{Missing: missing}, protocol.DiscloseControl)
	}
	s.abortDown(ctx, missing)
}

// abortDown passes an abort naming missing to every child.
func (s *paillierAgg) abortDown(ctx context.Context, missing []string) {
	s.sendAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, ciphertextBody{Missing: missing}, protocol.DiscloseControl)
}

func (s *paillierAgg) wait() {}

// upAndDown is a non-root party's middle: send its subtree's product up
// (and, as a child of the root, its digest to every other party), then
// receive the total's components from its parent, pass them down, and
// check them. A parent that does not answer, or answers malformed, is the
// party it names missing, and its subtree learns so too.
func (s *paillierAgg) upAndDown(ctx context.Context, acc []*paillier.Ciphertext, missing []string) ([]*paillier.Ciphertext, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	body := ciphertextBody{Missing: missing}
	d := protocol.DiscloseControl
	if len(missing) == 0 {
		var err error
		if body.Ciphertexts, err = s.marshal(acc); err != nil {
			return nil, err
		}
		body.Shape, d = s.shape, protocol.DiscloseCiphertext
		if parent == s.tree.root() {
			if err := s.awaitCommit(ctx); err != nil {
				return nil, s.rootMissing(ctx, err)
			}
		}
	}
	if err := s.send(ctx, s.upHops(s.self), parent, TypeUp, body, d); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// The parent is unreachable: our subtree's inputs cannot reach
		// the root through it.
		s.abortDown(ctx, []string{parent})
		return nil, &MissingError{Parties: []string{parent}}
	}
	if parent == s.tree.root() && len(missing) == 0 {
		s.own = digest(s.step, s.self, body.Ciphertexts)
		others := slices.DeleteFunc(slices.Clone(s.tree.order), func(p string) bool { return p == s.self || p == parent })
		s.sendAll(ctx, s.downHops, others, TypeDigest, digestBody{D: s.own, Root: s.rootCommit}, protocol.DiscloseControl)
	}
	msg, err := s.receive(ctx, s.downHops(s.self), parent, TypeDown)
	var comps [][]byte
	var miss []string
	if err == nil {
		comps, miss, err = decodeComponents(msg, s.shape, len(s.tree.children(s.tree.root()))+1, s.parties)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("secureagg: waiting for the aggregate from %s: %w", parent, err)
		}
		miss = []string{parent}
	}
	if len(miss) > 0 {
		s.abortDown(ctx, miss)
		return nil, &MissingError{Parties: miss}
	}
	// Pass the components on as they came: every party checks them itself.
	s.sendAll(ctx, s.downHops, children, TypeDown, ciphertextBody{Shape: s.shape, Components: comps}, protocol.DiscloseCiphertext)
	return s.checkTotal(ctx, comps)
}

// components is the root's down message: its own encrypted input (own,
// encoded as committed) and each child's subtree product, from which every
// party forms the total itself.
func (s *paillierAgg) components(own []byte, parts [][]*paillier.Ciphertext) (ciphertextBody, error) {
	body := ciphertextBody{Shape: s.shape, Components: [][]byte{own}}
	for _, cts := range parts {
		b, err := s.marshal(cts)
		if err != nil {
			return body, err
		}
		body.Components = append(body.Components, b)
	}
	return body, nil
}

// checkTotal forms the total from the root's components after checking
// each child's product against the digest that child sent this party
// directly: so a party decrypts only the step's aggregate of every
// party's input, never a single party's ciphertext the root (or a lying
// coordinator) sends back down. The root's own input is its own.
func (s *paillierAgg) checkTotal(ctx context.Context, comps [][]byte) ([]*paillier.Ciphertext, error) {
	if err := s.checkDigests(ctx, comps); err != nil {
		return nil, err
	}
	return s.form(comps, s.tree.root())
}

// digest binds a subtree's product to the step and its sender.
func digest(step job.Step, from string, cts []byte) []byte {
	h := sha256.New()
	for _, f := range []string{"cohort/secureagg/digest/v1", step.Job, step.Phase, strconv.Itoa(step.Round), strconv.Itoa(step.Attempt), step.Channel, from} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write(cts)
	return h.Sum(nil)
}

// contribute checks, noises, packs and encrypts this party's input.
func (s *paillierAgg) contribute(ctx context.Context, input []float64) ([]*paillier.Ciphertext, error) {
	return s.encrypt(ctx, s.random, input)
}

// gatherUp receives every child's subtree product, each within the hops its
// subtree may take, and multiplies them into own; it also returns the
// children's products in order. Children that fail are returned as
// missing, together with any parties they report missing.
func (s *paillierAgg) gatherUp(ctx context.Context, own []*paillier.Ciphertext, children []string) ([]*paillier.Ciphertext, [][]*paillier.Ciphertext, []string, error) {
	type got struct {
		cts     []*paillier.Ciphertext
		missing []string
	}
	results := make([]got, len(children))
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Go(func() {
			msg, err := s.receive(ctx, s.upHops(c), c, TypeUp)
			if err != nil {
				results[i].missing = []string{c}
				return
			}
			cts, miss, err := decodeCiphertexts(msg, &s.pk.PublicKey, s.shape, s.count, s.tree.subtree(c))
			if err != nil {
				results[i].missing = []string{c}
				return
			}
			results[i] = got{cts: cts, missing: miss}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("secureagg: %w", err)
	}
	acc := own
	var missing []string
	var parts [][]*paillier.Ciphertext
	for _, r := range results {
		if len(r.missing) > 0 {
			missing = append(missing, r.missing...)
			continue
		}
		parts = append(parts, r.cts)
		acc = s.add(acc, r.cts)
	}
	slices.Sort(missing)
	return acc, parts, missing, nil
}

// rootMissing ends the attempt of a child of the root that got no
// commitment from the root: its subtree learns so, and the root is named
// missing.
func (s *paillierAgg) rootMissing(ctx context.Context, cause error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("secureagg: %w", cause)
	}
	root := s.tree.root()
	s.abortDown(ctx, []string{root})
	return &MissingError{Parties: []string{root}}
}

// checkDigests checks each child of the root's component of the total
// (comps[1+j] for the j-th child) against the digest that child sent this
// party directly (its own, if this party is that child): the root cannot
// swap a subtree's sum for anything else; and the root's own component
// (comps[0]) against the commitment those children received before they
// sent their subtrees up (commit.go). The Paillier backend's check; the
// lattice backend checks by sketches (lattice_sketch.go).
func (s *paillierAgg) checkDigests(ctx context.Context, comps [][]byte) error {
	root := s.tree.root()
	var commits [][]byte
	for j, c := range s.tree.children(root) {
		want, commit := s.own, s.rootCommit
		if c != s.self {
			msg, err := s.receive(ctx, s.downHops(s.self), c, TypeDigest)
			var body digestBody
			if err == nil {
				body, err = decodeDigest(msg)
			}
			if err != nil {
				return fmt.Errorf("%w: no digest from %s: %w", ErrTampered, c, err)
			}
			want, commit = body.D, body.Root
		}
		commits = append(commits, commit)
		if !bytes.Equal(want, digest(s.step, c, comps[1+j])) {
			return fmt.Errorf("%w: the total from %s does not hold %s's subtree as %s sent it (coordinator %s); no decryption share is made",
				ErrTampered, root, c, c, s.step.Coordinator)
		}
	}
	return s.checkRootCommit(commits, comps[0])
}
