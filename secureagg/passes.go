package secureagg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
)

// run is one party's aggregation: encrypt its input, gather its subtree's
// product and send it up (the root forms the total), receive the total's
// components from above and check them, then share and decrypt.
func (s *paillierAgg) run(ctx context.Context, input []float64) (*Result, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	ctx, cancel := s.within(ctx, s.totalHops())
	defer cancel()

	own, err := s.encrypt(ctx, input)
	if err != nil {
		s.abortAll(ctx)
		return nil, err
	}
	var ownComp []byte // at the root: its own component, committed to now
	if parent == "" {
		if ownComp, err = s.pk.MarshalCiphertexts(own); err != nil {
			return nil, fmt.Errorf("secureagg: marshal ciphertexts: %w", err)
		}
		s.commitOwn(ctx, ownComp)
	}
	acc, parts, missing, err := s.gatherUp(ctx, own, children)
	if err != nil {
		return nil, err
	}
	var total []*paillier.Ciphertext
	if parent != "" {
		if total, err = s.upAndDown(ctx, acc, missing); err != nil {
			return nil, err
		}
	} else {
		if len(missing) > 0 {
			s.sendAll(ctx, s.downHops, children, TypeDown, ciphertextBody{Missing: missing}, protocol.DiscloseControl)
			return nil, &MissingError{Parties: missing}
		}
		body, err := s.components(ownComp, parts)
		if err != nil {
			return nil, err
		}
		s.sendAll(ctx, s.downHops, children, TypeDown, body, protocol.DiscloseCiphertext)
		total = acc
	}
	return s.finish(ctx, total)
}

// abortAll tells the parent and the children at once (and, at the root,
// the children waiting for its commitment) that this party has no input,
// so nobody waits for it in vain.
func (s *paillierAgg) abortAll(ctx context.Context) {
	abort := ciphertextBody{Missing: []string{s.self}}
	s.withdrawCommit(ctx)
	if parent := s.tree.parent(s.self); parent != "" {
		_ = s.send(ctx, s.upHops(s.self), parent, TypeUp, abort, protocol.DiscloseControl)
	}
	s.sendAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, abort, protocol.DiscloseControl)
}

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
		if body.Ciphertexts, err = s.pk.MarshalCiphertexts(acc); err != nil {
			return nil, fmt.Errorf("secureagg: marshal ciphertexts: %w", err)
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
		s.sendAll(ctx, s.downHops, children, TypeDown, ciphertextBody{Missing: []string{parent}}, protocol.DiscloseControl)
		return nil, &MissingError{Parties: []string{parent}}
	}
	if parent == s.tree.root() && len(missing) == 0 {
		s.own = digest(s.step, s.self, body.Ciphertexts)
		others := slices.DeleteFunc(slices.Clone(s.tree.order), func(p string) bool { return p == s.self || p == parent })
		s.sendAll(ctx, s.downHops, others, TypeDigest, digestBody{D: s.own, Root: s.rootCommit}, protocol.DiscloseControl)
	}
	wctx, cancel := s.within(ctx, s.downHops(s.self))
	msg, err := s.net.Receive(wctx, parent, TypeDown)
	cancel()
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
		s.sendAll(ctx, s.downHops, children, TypeDown, ciphertextBody{Missing: miss}, protocol.DiscloseControl)
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
		b, err := s.pk.MarshalCiphertexts(cts)
		if err != nil {
			return body, fmt.Errorf("secureagg: marshal ciphertexts: %w", err)
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
	var total []*paillier.Ciphertext
	for _, b := range comps {
		cts, err := s.pk.UnmarshalCiphertexts(b)
		if err != nil || len(cts) != s.count {
			return nil, fmt.Errorf("%w: a component of the total from %s is malformed", ErrTampered, s.tree.root())
		}
		if total == nil {
			total = cts
			continue
		}
		for i := range total {
			total[i] = s.pk.Add(total[i], cts[i])
		}
	}
	return total, nil
}

// finish decrypts (at the root) or shares and waits (elsewhere), passes
// the result down and decodes it.
func (s *paillierAgg) finish(ctx context.Context, total []*paillier.Ciphertext) (*Result, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	var res *resultBody
	if parent == "" {
		res = s.decrypt(ctx, total)
	} else {
		var err error
		if res, err = s.shareAndWait(ctx, total); err != nil {
			return nil, err
		}
	}
	s.sendAll(ctx, s.resultHops, children, TypeResult, res, protocol.DisclosePublicResult)
	switch {
	case len(res.Missing) > 0:
		return nil, &MissingError{Parties: res.Missing, Formed: true}
	case res.Error != "":
		if parent == "" {
			return nil, res.err
		}
		return nil, fmt.Errorf("%w: %s", ErrRoot, res.Error)
	}
	plain := make([]*big.Int, len(res.Plain))
	for i, p := range res.Plain {
		plain[i] = new(big.Int).SetBytes(p)
	}
	sum, err := s.decodeSum(plain)
	if err != nil {
		return nil, fmt.Errorf("%w: the root's result: %w", ErrRoot, err)
	}
	return &Result{Sum: sum, Included: res.Included, Excluded: res.Excluded, Noise: res.Noise}, nil
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

// encrypt checks, noises, packs and encrypts this party's input.
func (s *paillierAgg) encrypt(ctx context.Context, input []float64) ([]*paillier.Ciphertext, error) {
	var sampler *noiseSampler
	if s.noise != nil {
		var err error
		if sampler, err = newNoiseSampler(s.noise, s.random); err != nil {
			return nil, err
		}
	}
	enc := make([]*big.Int, len(input))
	for i, x := range input {
		v, err := s.fp.Encode(x)
		if err != nil {
			return nil, fmt.Errorf("%w: input[%d] is not a finite number within the fixed point's range", ErrRange, i)
		}
		if new(big.Int).Abs(v).Cmp(s.inBound) >= 0 {
			// The value itself stays here: the error reaches the coordinator.
			return nil, fmt.Errorf("%w: input[%d] exceeds 2^%d at 2^-%d precision", ErrRange, i, s.inBound.BitLen()-1, s.fp.FracBits)
		}
		if sampler != nil {
			if v, err = s.fp.Encode(x + sampler.sample()); err != nil {
				return nil, fmt.Errorf("%w: noisy input[%d] is outside the fixed point's range", ErrRange, i)
			}
			if new(big.Int).Abs(v).Cmp(s.bound) >= 0 {
				return nil, fmt.Errorf("%w: noisy input[%d] beyond its bound", ErrRange, i)
			}
		}
		enc[i] = v
	}
	plain, err := s.packing.Pack(enc)
	if err != nil {
		return nil, fmt.Errorf("secureagg: pack: %w", err)
	}
	if len(plain) != s.count {
		return nil, fmt.Errorf("secureagg: packing gave %d plaintexts, expected %d", len(plain), s.count)
	}
	// Encrypt in chunks and stop when ctx ends: a superseded attempt must
	// not keep the cores busy for seconds (10,000 values are about 140
	// ciphertexts) while the next attempt and Raft need them.
	cts := make([]*paillier.Ciphertext, 0, len(plain))
	for len(plain) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("secureagg: encrypt: %w", err)
		}
		chunk := plain[:min(encryptChunk, len(plain))]
		plain = plain[len(chunk):]
		c, err := s.pk.EncryptMany(s.random, chunk)
		if err != nil {
			return nil, fmt.Errorf("secureagg: encrypt: %w", err)
		}
		cts = append(cts, c...)
	}
	return cts, nil
}

// encryptChunk is how many plaintexts are encrypted between two checks of
// the context: about 25 ms of CPU at 2048 bits, enough to keep all cores busy.
const encryptChunk = 16

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
			wctx, cancel := s.within(ctx, s.upHops(c))
			defer cancel()
			msg, err := s.net.Receive(wctx, c, TypeUp)
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
		next := make([]*paillier.Ciphertext, len(acc))
		for j := range acc {
			next[j] = s.pk.Add(acc[j], r.cts[j])
		}
		acc = next
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
	s.sendAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, ciphertextBody{Missing: []string{root}}, protocol.DiscloseControl)
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
			wctx, cancel := s.within(ctx, s.downHops(s.self))
			msg, err := s.net.Receive(wctx, c, TypeDigest)
			cancel()
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
