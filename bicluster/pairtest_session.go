package bicluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// Message types of the pair test (phase test); each names its disclosure.
// The decryption's requests and shares are secureagg's (Decryption).
const (
	// TypeReps carries A's encrypted representatives to B (ciphertext).
	TypeReps = "bicluster/reps"
	// TypeBlinded carries B's blinded encrypted test values to A
	// (ciphertext).
	TypeBlinded = "bicluster/blinded"
	// TypePacked carries A's packed, twice-blinded test values to the
	// root (ciphertext).
	TypePacked = "bicluster/packed"
	// TypeDigest carries the digest of the packed values a party sends
	// the root (secureagg.Digest) to every other party, so that each can
	// check what the root asks it to decrypt (control: a hash of
	// ciphertexts).
	TypeDigest = "bicluster/digest"
)

// defaultTestTimeout bounds the pair test when the step has no timeout.
const defaultTestTimeout = time.Minute

// ctBody is the body of reps, blinded and packed messages.
type ctBody struct {
	C []byte `msgpack:"c"`
}

// digestBody is the body of a digest message.
type digestBody struct {
	D []byte `msgpack:"d"`
}

// decodeCts decodes a ctBody of exactly count ciphertexts of pk.
func decodeCts(b []byte, pk *paillier.PublicKey, count int) ([]*paillier.Ciphertext, error) {
	var body ctBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	if len(body.C) > 2*count*pk.CiphertextSize()+64 {
		return nil, fmt.Errorf("%w: %d bytes for %d ciphertexts", wire.ErrMalformed, len(body.C), count)
	}
	cts, err := pk.UnmarshalCiphertexts(body.C)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", wire.ErrMalformed, err)
	}
	if len(cts) != count {
		return nil, fmt.Errorf("%w: %d ciphertexts, expected %d", wire.ErrMalformed, len(cts), count)
	}
	return cts, nil
}

// pairRun is one party's run of the pair test.
type pairRun struct {
	p      job.Participant
	step   job.Step
	pairs  []pairDesc
	keys   *secureagg.Keys
	pk     *paillier.ThresholdPublicKey
	pc     *pairCode
	mine   []Local
	self   int // index into step.Parties
	names  []string
	random io.Reader
	heard  []bool // the round's bits, once the root read them or sent them
}

func (r *pairRun) send(ctx context.Context, to int, typ string, body any, d wire.Disclosure) error {
	b, err := wire.Marshal(body)
	if err != nil {
		return fmt.Errorf("bicluster: encode %s: %w", typ, err)
	}
	if err := r.p.Send(ctx, r.names[to], r.step.Message(r.p.Self(), typ, b), d); err != nil {
		return fmt.Errorf("bicluster: send %s to %s: %w", typ, r.names[to], err)
	}
	return nil
}

func (r *pairRun) receive(ctx context.Context, from int, typ string) ([]byte, error) {
	m, err := r.p.Receive(ctx, r.names[from], r.step.Key(typ))
	if err != nil {
		return nil, fmt.Errorf("bicluster: waiting for %s from %s: %w", typ, r.names[from], err)
	}
	return m.Body, nil
}

func (r *pairRun) marshal(cts []*paillier.Ciphertext) (ctBody, error) {
	b, err := r.pk.MarshalCiphertexts(cts)
	if err != nil {
		return ctBody{}, fmt.Errorf("bicluster: marshal ciphertexts: %w", err)
	}
	return ctBody{C: b}, nil
}

// between lists the pairs of parties a and b (a as A), in Args order.
func (r *pairRun) between(a, b int) []int {
	var out []int
	for i, p := range r.pairs {
		if p.A.Party == a && p.B.Party == b {
			out = append(out, i)
		}
	}
	return out
}

// asA lists the pairs in which party a is A, in Args order.
func (r *pairRun) asA(a int) []int {
	var out []int
	for i, p := range r.pairs {
		if p.A.Party == a {
			out = append(out, i)
		}
	}
	return out
}

// test runs the pair test (phase test; pairtest.go has the rounds), once
// this party has checked that the step's pairs are those the committed
// history gives: so a coordinator cannot have pairs of its choosing
// tested.
func (s *session) test(ctx context.Context, step job.Step, a testArgs) (testOutput, error) {
	if s.loadErr != nil {
		return testOutput{}, s.loadErr
	}
	public, err := committedLocals(s.p.History())
	if err != nil {
		return testOutput{}, err
	}
	if err := s.checkBits(step); err != nil {
		return testOutput{}, err
	}
	want, err := roundPairs(s.p.History(), public, step.Round)
	if err != nil {
		return testOutput{}, err
	}
	if len(want) == 0 || !sameArgs(step, testArgs{Pairs: want}) {
		return testOutput{}, s.refuse(step, "pairs")
	}
	mine, err := s.localBiclusters(step)
	if err != nil {
		return testOutput{}, err
	}
	keys, err := keyring.ReadPaillier(s.p.Secrets())
	if err != nil {
		return testOutput{}, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", s.p.Self(), err)
	}
	pk := keys.Public()
	pc, err := newPairCode(&pk.PublicKey, s.cfg.fracBits, s.cfg.valueBits, s.cfg.p.Beta, s.m.Cols)
	if err != nil {
		return testOutput{}, err
	}
	timeout := defaultTestTimeout
	if step.TimeoutMS > 0 {
		timeout = step.Timeout()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := &pairRun{p: s.p, step: step, pairs: a.Pairs, keys: keys, pk: pk, pc: pc, mine: mine,
		self: slices.Index(step.Parties, s.p.Self()), names: step.Parties, random: rand.Reader}
	if r.self < 0 || r.self != s.index {
		return testOutput{}, fmt.Errorf("bicluster: party %s is not at its place in the step", s.p.Self())
	}
	out, err := r.run(ctx)
	if err != nil {
		return testOutput{}, fmt.Errorf("party %s: pair test: %w", s.p.Self(), err)
	}
	if err := s.keepBits(step, r.heard); err != nil {
		return testOutput{}, err
	}
	return out, nil
}

// run is the party's pair test: its rounds as A and as B, then the
// decryption of every party's packed values at the root, which sends
// every other party the bits it read (bits.go).
func (r *pairRun) run(ctx context.Context) (testOutput, error) {
	// Round 1, as A: encrypt each of its locals' V_j once, and ΣV² and
	// S_V² once per (local, U), for all its pairs (one EncryptMany).
	if err := r.encryptReps(ctx); err != nil {
		return testOutput{}, err
	}
	// Round 2, as B: evaluate and blind every pair A sent.
	for a := range r.names {
		if err := r.evaluateFrom(ctx, a); err != nil {
			return testOutput{}, err
		}
	}
	// Round 3, as A: blind again and pack, in Args order, for the root.
	packed, err := r.blindAndPack(ctx)
	if err != nil {
		return testOutput{}, err
	}
	own, err := r.pk.MarshalCiphertexts(packed)
	if err != nil {
		return testOutput{}, fmt.Errorf("bicluster: marshal ciphertexts: %w", err)
	}
	root := slices.Index(r.names, secureagg.Root(r.step))
	if err := r.sendPacked(ctx, root, packed, own); err != nil {
		return testOutput{}, err
	}
	// Round 4: the root decrypts every party's packed values jointly;
	// the others make a share only of what matches their producers'
	// digests.
	d := r.decryption(ctx, root)
	if r.self != root {
		if err := d.Share(ctx, nil, func(cts []*paillier.Ciphertext) error { return r.vet(ctx, cts, own) }); err != nil {
			return testOutput{}, err
		}
		r.heard, err = r.awaitBits(ctx, root)
		return testOutput{}, err
	}
	out, err := r.decrypt(ctx, d, packed)
	r.heard = out.Similar
	return out, r.announce(ctx, out, err)
}

// evaluateFrom is round 2 at B for the pairs of party a as A: receive its
// representatives, evaluate and blind, and send the values back.
func (r *pairRun) evaluateFrom(ctx context.Context, a int) error {
	idx := r.between(a, r.self)
	if len(idx) == 0 {
		return nil
	}
	want := 0
	for _, i := range idx {
		want += pairCiphertexts(len(r.pairs[i].Cols))
	}
	raw, err := r.receive(ctx, a, TypeReps)
	if err != nil {
		return err
	}
	cts, err := decodeCts(raw, &r.pk.PublicKey, want)
	if err != nil {
		return fmt.Errorf("representatives from %s: %w", r.names[a], err)
	}
	ys, err := r.evaluate(idx, cts)
	if err != nil {
		return err
	}
	body, err := r.marshal(ys)
	if err != nil {
		return err
	}
	return r.send(ctx, a, TypeBlinded, body, wire.DiscloseCiphertext)
}

// blindAndPack is round 3 at A: blind every value its Bs sent back, and
// pack its pairs' values, in Args order.
func (r *pairRun) blindAndPack(ctx context.Context) ([]*paillier.Ciphertext, error) {
	zs := make([][]*paillier.Ciphertext, len(r.pairs)) // two per pair
	for b := range r.names {
		idx := r.between(r.self, b)
		if len(idx) == 0 {
			continue
		}
		raw, err := r.receive(ctx, b, TypeBlinded)
		if err != nil {
			return nil, err
		}
		ys, err := decodeCts(raw, &r.pk.PublicKey, 2*len(idx))
		if err != nil {
			return nil, fmt.Errorf("blinded values from %s: %w", r.names[b], err)
		}
		blinded, err := pairBlind(&r.pk.PublicKey, r.random, ys)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			zs[i] = blinded[2*k : 2*k+2]
		}
	}
	var mine []*paillier.Ciphertext
	for _, i := range r.asA(r.self) {
		mine = append(mine, zs[i]...)
	}
	return r.pc.pairPack(&r.pk.PublicKey, mine), nil
}

// sendPacked sends the party's packed values (encoded: own) to the root,
// and their digest to every other party directly, so that each can check
// that the root asks it to decrypt these values and no others.
func (r *pairRun) sendPacked(ctx context.Context, root int, packed []*paillier.Ciphertext, own []byte) error {
	if len(packed) == 0 {
		return nil
	}
	digest := digestBody{D: secureagg.Digest(r.step, r.names[r.self], own)}
	for q := range r.names {
		if q == r.self || q == root {
			continue
		}
		if err := r.send(ctx, q, TypeDigest, digest, wire.DiscloseControl); err != nil {
			return err
		}
	}
	if r.self == root {
		return nil
	}
	return r.send(ctx, root, TypePacked, ctBody{C: own}, wire.DiscloseCiphertext)
}

// decryption is the pair test's joint decryption: rooted at the step's
// secureagg.Root, never the coordinator; the root asks t of the others
// (the coordinator last), the rest only when shares fail, and releases
// them otherwise. Every party derives it from the committed step.
func (r *pairRun) decryption(ctx context.Context, root int) *secureagg.Decryption {
	var others []string
	for q, name := range r.names {
		if q != root && name != r.step.Coordinator {
			others = append(others, name)
		}
	}
	if r.step.Coordinator != r.names[root] && slices.Contains(r.names, r.step.Coordinator) {
		others = append(others, r.step.Coordinator)
	}
	count := 0
	for _, c := range r.total() {
		count += c
	}
	// The first shares are due halfway to the step's end, so the root
	// has time to ask the others.
	var first time.Time
	if end, ok := ctx.Deadline(); ok {
		first = time.Now().Add(time.Until(end) / 2)
	}
	return &secureagg.Decryption{Net: secureagg.StepNetwork(r.p, r.step), Step: r.step, Keys: r.keys, Root: r.names[root], Decryptors: others,
		Ask: min(r.pk.Threshold, len(others)), Count: count, Release: true, First: first, Random: r.random}
}

// vet is a decryptor's check of the root's request: every party's
// segment of the values to decrypt must be, byte for byte, what that
// party sent the root, as the digest it sent this party directly says
// (own: this party's own). So a root (or a coordinator lying about who
// coordinates) cannot have a representative A sent to B decrypted, nor
// anything but the step's packed values.
func (r *pairRun) vet(ctx context.Context, cts []*paillier.Ciphertext, own []byte) error {
	root := secureagg.Root(r.step)
	for a, c := range r.total() {
		seg := cts[:c]
		cts = cts[c:]
		if c == 0 {
			continue
		}
		b, err := r.pk.MarshalCiphertexts(seg)
		if err != nil {
			return fmt.Errorf("bicluster: marshal ciphertexts: %w", err)
		}
		want := secureagg.Digest(r.step, r.names[a], own)
		if a != r.self {
			raw, err := r.receive(ctx, a, TypeDigest)
			var body digestBody
			if err == nil {
				err = wire.Unmarshal(raw, &body)
			}
			if err != nil {
				return fmt.Errorf("%w: no digest from %s, so nothing %s asks is decrypted: %w", secureagg.ErrTampered, r.names[a], root, err)
			}
			want = body.D
		}
		if !bytes.Equal(want, secureagg.Digest(r.step, r.names[a], b)) {
			return fmt.Errorf("%w: party %s refuses to decrypt: root %s asks values that are not those %s sent it (coordinator %s)",
				secureagg.ErrTampered, r.p.Self(), root, r.names[a], r.step.Coordinator)
		}
	}
	return nil
}

// decrypt is the root's part: gather every party's packed values, decrypt
// them jointly and read the signs.
func (r *pairRun) decrypt(ctx context.Context, d *secureagg.Decryption, ownPacked []*paillier.Ciphertext) (testOutput, error) {
	counts := r.total()
	per := make([][]*paillier.Ciphertext, len(r.names))
	per[r.self] = ownPacked
	for a, c := range counts {
		if a == r.self || c == 0 {
			continue
		}
		raw, err := r.receive(ctx, a, TypePacked)
		if err != nil {
			return testOutput{}, err
		}
		if per[a], err = decodeCts(raw, &r.pk.PublicKey, c); err != nil {
			return testOutput{}, fmt.Errorf("packed values from %s: %w", r.names[a], err)
		}
	}
	plain, excluded, err := d.Decrypt(ctx, slices.Concat(per...))
	if err != nil {
		return testOutput{}, err
	}
	out := testOutput{Similar: make([]bool, len(r.pairs))}
	off := 0
	for a, c := range counts {
		idx := r.asA(a)
		signs, err := r.pc.pairSigns(plain[off:off+c], 2*len(idx))
		if err != nil {
			return testOutput{}, fmt.Errorf("party %s's pair tests: %w", r.names[a], err)
		}
		off += c
		for k, similar := range pairSimilar(signs) {
			out.Similar[idx[k]] = similar
		}
	}
	if len(excluded) > 0 {
		out.Excluded = excluded
	}
	return out, nil
}

// evaluate is round 2 at B for A's pairs idx, whose ciphertexts are cts
// in order: two blinded results per pair, the pairs spread over the cores
// (each is a dozen exponentiations).
func (r *pairRun) evaluate(idx []int, cts []*paillier.Ciphertext) ([]*paillier.Ciphertext, error) {
	enc := make([][]*paillier.Ciphertext, len(idx))
	for k, i := range idx {
		n := pairCiphertexts(len(r.pairs[i].Cols))
		enc[k], cts = cts[:n], cts[n:]
	}
	ys := make([]*paillier.Ciphertext, 2*len(idx))
	err := forEach(len(idx), func(k int) error {
		p := r.pairs[idx[k]]
		m, err := r.pc.encode(r.mine[p.B.Local].Rep, p.Cols)
		if err != nil {
			return err
		}
		y, err := r.pc.pairEvaluate(&r.pk.PublicKey, r.random, enc[k], m)
		ys[2*k], ys[2*k+1] = y[0], y[1]
		return err
	})
	return ys, err
}

// forEach runs f(0) … f(n−1) on up to GOMAXPROCS goroutines, which it
// waits for, and returns the first error by index.
func forEach(n int, f func(k int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for k := range next {
				errs[k] = f(k)
			}
		})
	}
	for k := range n {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// encryptReps is round 1 at A: one message to each B with, per pair in
// Args order, the pairCiphertexts of A's local on the pair's columns.
func (r *pairRun) encryptReps(ctx context.Context) error {
	type key struct {
		local int
		cols  string
	}
	colAt := map[[2]int]int{} // (local, column) → index into plain
	sumAt := map[key]int{}    // → index of ΣV²; S_V² follows
	var plain []*big.Int
	for _, i := range r.asA(r.self) {
		p := r.pairs[i]
		v, err := r.pc.encode(r.mine[p.A.Local].Rep, p.Cols)
		if err != nil {
			return err
		}
		for k, j := range p.Cols {
			if _, ok := colAt[[2]int{p.A.Local, j}]; !ok {
				e, err := r.pk.EncodeSigned(v[k])
				if err != nil {
					return fmt.Errorf("bicluster: encode a representative: %w", err)
				}
				colAt[[2]int{p.A.Local, j}] = len(plain)
				plain = append(plain, e)
			}
		}
		kk := key{p.A.Local, fmt.Sprint(p.Cols)}
		if _, ok := sumAt[kk]; !ok {
			sq, s2 := pairSums(v)
			sumAt[kk] = len(plain)
			plain = append(plain, sq, s2)
		}
	}
	if len(plain) == 0 {
		return nil
	}
	cts, err := r.pk.EncryptMany(r.random, plain)
	if err != nil {
		return fmt.Errorf("bicluster: encrypt representatives: %w", err)
	}
	for b := range r.names {
		idx := r.between(r.self, b)
		if len(idx) == 0 {
			continue
		}
		var out []*paillier.Ciphertext
		for _, i := range idx {
			p := r.pairs[i]
			for _, j := range p.Cols {
				out = append(out, cts[colAt[[2]int{p.A.Local, j}]])
			}
			at := sumAt[key{p.A.Local, fmt.Sprint(p.Cols)}]
			out = append(out, cts[at], cts[at+1])
		}
		body, err := r.marshal(out)
		if err != nil {
			return err
		}
		if err := r.send(ctx, b, TypeReps, body, wire.DiscloseCiphertext); err != nil {
			return err
		}
	}
	return nil
}

// total is how many packed ciphertexts every party's pairs make, in
// party order.
func (r *pairRun) total() []int {
	out := make([]int, len(r.names))
	for a := range r.names {
		out[a] = r.pc.packedCount(2 * len(r.asA(a)))
	}
	return out
}
