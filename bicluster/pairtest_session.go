package bicluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"math/big"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/secureagg"
)

// Message types of the pair test (phase test); each names its disclosure.
const (
	// TypeReps carries A's encrypted representatives to B (ciphertext).
	TypeReps = "bicluster/reps"
	// TypeBlinded carries B's blinded encrypted test values to A
	// (ciphertext).
	TypeBlinded = "bicluster/blinded"
	// TypePacked carries A's packed, twice-blinded test values to the
	// root (ciphertext).
	TypePacked = "bicluster/packed"
	// TypeAsk is the root's request for decryption shares of every
	// party's packed values (ciphertext), or, empty, its release of a
	// party it does not need (control).
	TypeAsk = "bicluster/ask"
	// TypeShare carries a party's decryption shares of the packed values
	// with their batched proof to the root (decryption-share).
	TypeShare = "bicluster/share"
)

// defaultTestTimeout bounds the pair test when the step has no timeout.
const defaultTestTimeout = time.Minute

// pairDesc is one candidate pair of the merge, public: locals A and B of
// parties A.Party < B.Party whose column sets overlap (Jaccard ≥ 1/2),
// tested on the union of their columns.
type pairDesc struct {
	A    Ref   `msgpack:"a"`
	B    Ref   `msgpack:"b"`
	Cols []int `msgpack:"cols"`
}

type testArgs struct {
	Pairs []pairDesc `msgpack:"pairs"`
}

type testDecision struct {
	Similar  []bool            `msgpack:"similar"` // per pair, in Args order
	Excluded map[string]string `msgpack:"excluded"`
	Error    string            `msgpack:"error"`
}

type testOutput struct {
	Similar  []bool            `msgpack:"similar"` // the root's only
	Excluded map[string]string `msgpack:"excluded"`
	Unusable string            `msgpack:"unusable"`
}

// ctBody is the body of reps, blinded, packed and ask messages.
type ctBody struct {
	C []byte `msgpack:"c"`
}

type pairShareBody struct {
	S []byte `msgpack:"s"`
}

// decodeCts decodes a ctBody of exactly count ciphertexts of pk.
func decodeCts(b []byte, pk *paillier.PublicKey, count int) ([]*paillier.Ciphertext, error) {
	var body ctBody
	if err := protocol.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	if len(body.C) > 2*count*pk.CiphertextSize()+64 {
		return nil, fmt.Errorf("%w: %d bytes for %d ciphertexts", protocol.ErrMalformed, len(body.C), count)
	}
	cts, err := pk.UnmarshalCiphertexts(body.C)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocol.ErrMalformed, err)
	}
	if len(cts) != count {
		return nil, fmt.Errorf("%w: %d ciphertexts, expected %d", protocol.ErrMalformed, len(cts), count)
	}
	return cts, nil
}

// decodePairShare decodes party index's decryption share of count
// ciphertexts.
func decodePairShare(b []byte, pk *paillier.ThresholdPublicKey, index, count int) (*paillier.DecryptionShare, error) {
	var body pairShareBody
	if err := protocol.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	if len(body.S) > 2*count*pk.CiphertextSize()+(1<<16) {
		return nil, fmt.Errorf("%w: share of %d bytes", protocol.ErrMalformed, len(body.S))
	}
	sh, err := pk.UnmarshalDecryptionShare(body.S)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocol.ErrMalformed, err)
	}
	if sh.Index != index || len(sh.Values) != count {
		return nil, fmt.Errorf("%w: share of index %d with %d values, expected %d and %d", protocol.ErrMalformed, sh.Index, len(sh.Values), index, count)
	}
	return sh, nil
}

// pairRun is one party's run of the pair test.
type pairRun struct {
	s      *session
	step   job.Step
	pairs  []pairDesc
	keys   *secureagg.Keys
	pk     *paillier.ThresholdPublicKey
	pc     *pairCode
	mine   []Local
	self   int // index into step.Parties
	names  []string
	random io.Reader
}

func (r *pairRun) send(ctx context.Context, to int, typ string, body any, d protocol.Disclosure) error {
	b, err := encode(body)
	if err != nil {
		return err
	}
	if err := r.s.p.Send(ctx, r.names[to], r.step.Message(r.s.p.Self(), typ, b), d); err != nil {
		return fmt.Errorf("bicluster: send %s to %s: %w", typ, r.names[to], err)
	}
	return nil
}

func (r *pairRun) receive(ctx context.Context, from int, typ string) ([]byte, error) {
	m, err := r.s.p.Receive(ctx, r.names[from], r.step.Key(typ))
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

// roundPairs is testRound over the committed locals and the committed
// bits of the earlier merge test rounds.
func (s *session) roundPairs(public [][]LocalDesc, round int) ([]pairDesc, error) {
	var tested []pairDesc
	var similar []bool
	for _, rec := range s.p.History() {
		if rec.Step.Phase != phaseTest || rec.Step.Round >= round {
			continue
		}
		var a testArgs
		if err := decode(rec.Step.Args, &a); err != nil {
			return nil, err
		}
		var d testDecision
		if err := decode(rec.Decision, &d); err != nil {
			return nil, err
		}
		if len(d.Similar) != len(a.Pairs) {
			return nil, fmt.Errorf("bicluster: merge test round %d committed %d bits for %d pairs", rec.Step.Round, len(d.Similar), len(a.Pairs))
		}
		tested = append(tested, a.Pairs...)
		similar = append(similar, d.Similar...)
	}
	return testRound(public, candidatePairs(public), tested, similar, round), nil
}

// test runs the pair test (phase test): see pairtest.go for the rounds.
func (s *session) test(ctx context.Context, step job.Step) ([]byte, error) {
	if s.loadErr != nil {
		return encode(&testOutput{Unusable: s.loadErr.Error()})
	}
	var a testArgs
	if err := decode(step.Args, &a); err != nil {
		return nil, err
	}
	public, err := s.committedLocals()
	if err != nil {
		return nil, err
	}
	// Every party derives the round's pairs itself from the committed
	// locals and earlier bits, so a coordinator cannot have pairs of its
	// choosing tested (and their blinded values decrypted at its node).
	want, err := s.roundPairs(public, step.Round)
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(a.Pairs, want) {
		return nil, fmt.Errorf("bicluster: merge test round %d: the step's pairs are not the ones the committed history gives", step.Round)
	}
	mine, err := s.localBiclusters()
	if err != nil {
		return nil, err
	}
	keys, err := secureagg.ReadKeys(s.p.Secrets())
	if err != nil {
		return nil, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", s.p.Self(), err)
	}
	pk := keys.Public()
	pc, err := newPairCode(&pk.PublicKey, s.cfg.fracBits, s.cfg.valueBits, s.cfg.p.Beta, s.m.Cols)
	if err != nil {
		return nil, err
	}
	if step.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, step.Timeout())
		defer cancel()
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTestTimeout)
		defer cancel()
	}
	r := &pairRun{s: s, step: step, pairs: a.Pairs, keys: keys, pk: pk, pc: pc, mine: mine,
		self: slices.Index(step.Parties, s.p.Self()), names: step.Parties, random: rand.Reader}
	if r.self < 0 || r.self != s.index {
		return nil, fmt.Errorf("bicluster: party %s is not at its place in the step", s.p.Self())
	}
	out, err := r.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("party %s: pair test: %w", s.p.Self(), err)
	}
	return encode(out)
}

func (r *pairRun) run(ctx context.Context) (*testOutput, error) {
	n := len(r.names)
	// Round 1, as A: encrypt each of its locals' V_j once, and ΣV² and
	// S_V² once per (local, U), for all its pairs (one EncryptMany).
	if err := r.encryptReps(ctx); err != nil {
		return nil, err
	}
	// Round 2, as B: evaluate and blind every pair A sent.
	for a := range n {
		idx := r.between(a, r.self)
		if len(idx) == 0 {
			continue
		}
		want := 0
		for _, i := range idx {
			want += pairCiphertexts(len(r.pairs[i].Cols))
		}
		raw, err := r.receive(ctx, a, TypeReps)
		if err != nil {
			return nil, err
		}
		cts, err := decodeCts(raw, &r.pk.PublicKey, want)
		if err != nil {
			return nil, fmt.Errorf("representatives from %s: %w", r.names[a], err)
		}
		ys, err := r.evaluate(idx, cts)
		if err != nil {
			return nil, err
		}
		body, err := r.marshal(ys)
		if err != nil {
			return nil, err
		}
		if err := r.send(ctx, a, TypeBlinded, body, protocol.DiscloseCiphertext); err != nil {
			return nil, err
		}
	}
	// Round 3, as A: blind again and pack, in Args order.
	own := r.asA(r.self)
	zs := make([][]*paillier.Ciphertext, len(r.pairs)) // two per pair
	for b := range n {
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
	var mineZ []*paillier.Ciphertext
	for _, i := range own {
		mineZ = append(mineZ, zs[i]...)
	}
	packed := r.pc.pairPack(&r.pk.PublicKey, mineZ)
	root := slices.Index(r.names, secureagg.Root(r.step))
	if r.self != root {
		if len(packed) > 0 {
			body, err := r.marshal(packed)
			if err != nil {
				return nil, err
			}
			if err := r.send(ctx, root, TypePacked, body, protocol.DiscloseCiphertext); err != nil {
				return nil, err
			}
		}
		return &testOutput{}, r.share(ctx, root)
	}
	return r.decrypt(ctx, packed)
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
		if err := r.send(ctx, b, TypeReps, body, protocol.DiscloseCiphertext); err != nil {
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

func (r *pairRun) proofContext() paillier.ProofContext {
	return paillier.ProofContext{Job: r.step.Job, Phase: r.step.Phase, Round: r.step.Round, Attempt: r.step.Attempt}
}

// share is a non-root party's last round: wait for the root's request and
// send its decryption shares, or its release.
func (r *pairRun) share(ctx context.Context, root int) error {
	raw, err := r.receive(ctx, root, TypeAsk)
	if err != nil {
		return err
	}
	count := 0
	for _, c := range r.total() {
		count += c
	}
	var body ctBody
	if err := protocol.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("request from %s: %w", r.names[root], err)
	}
	if len(body.C) == 0 {
		return nil // released: the root has enough shares
	}
	cts, err := decodeCts(raw, &r.pk.PublicKey, count)
	if err != nil {
		return fmt.Errorf("request from %s: %w", r.names[root], err)
	}
	sh, err := r.keys.Share.DecryptShare(r.random, cts, r.proofContext())
	if err != nil {
		return fmt.Errorf("bicluster: decryption share: %w", err)
	}
	b, err := sh.MarshalBinary()
	if err != nil {
		return fmt.Errorf("bicluster: marshal share: %w", err)
	}
	return r.send(ctx, root, TypeShare, pairShareBody{S: b}, protocol.DiscloseDecryptionShare)
}

// decrypt is the root's part: gather every party's packed values, ask t
// parties (besides itself) for decryption shares, then the others if some
// fail their proofs, combine t+1 valid shares and read the signs.
func (r *pairRun) decrypt(ctx context.Context, ownPacked []*paillier.Ciphertext) (*testOutput, error) {
	counts := r.total()
	per := make([][]*paillier.Ciphertext, len(r.names))
	per[r.self] = ownPacked
	for a, c := range counts {
		if a == r.self || c == 0 {
			continue
		}
		raw, err := r.receive(ctx, a, TypePacked)
		if err != nil {
			return nil, err
		}
		if per[a], err = decodeCts(raw, &r.pk.PublicKey, c); err != nil {
			return nil, fmt.Errorf("packed values from %s: %w", r.names[a], err)
		}
	}
	all := slices.Concat(per...)
	body, err := r.marshal(all)
	if err != nil {
		return nil, err
	}
	var others []int
	for q := range r.names {
		if q != r.self {
			others = append(others, q)
		}
	}
	need := r.pk.Threshold + 1
	first, rest := others[:min(need-1, len(others))], others[min(need-1, len(others)):]
	for _, q := range first {
		if err := r.send(ctx, q, TypeAsk, body, protocol.DiscloseCiphertext); err != nil {
			return nil, err
		}
	}
	var own *paillier.DecryptionShare
	var ownErr error
	var wg sync.WaitGroup
	wg.Go(func() { own, ownErr = r.keys.Share.DecryptShare(r.random, all, r.proofContext()) })
	excluded := map[string]string{}
	valid := r.collect(ctx, all, first, excluded)
	wg.Wait()
	if ownErr != nil {
		return nil, fmt.Errorf("bicluster: decryption share: %w", ownErr)
	}
	valid = append([]*paillier.DecryptionShare{own}, valid...)
	if len(valid) < need && len(rest) > 0 {
		for _, q := range rest {
			if err := r.send(ctx, q, TypeAsk, body, protocol.DiscloseCiphertext); err != nil {
				excluded[r.names[q]] = "unreachable for its decryption share"
			}
		}
		valid = append(valid, r.collect(ctx, all, rest, excluded)...)
	} else {
		for _, q := range rest {
			_ = r.send(ctx, q, TypeAsk, ctBody{}, protocol.DiscloseControl)
		}
	}
	if len(valid) < need {
		return nil, fmt.Errorf("too few valid decryption shares (%d of %d); excluded %s", len(valid), need,
			strings.Join(slices.Sorted(maps.Keys(excluded)), ", "))
	}
	plain, err := r.pk.Combine(all, valid[:need])
	if err != nil {
		return nil, fmt.Errorf("bicluster: combine shares: %w", err)
	}
	out := &testOutput{Similar: make([]bool, len(r.pairs))}
	off := 0
	for a, c := range counts {
		idx := r.asA(a)
		signs, err := r.pc.pairSigns(plain[off:off+c], 2*len(idx))
		if err != nil {
			return nil, fmt.Errorf("party %s's pair tests: %w", r.names[a], err)
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

// collect receives and verifies the shares of from, naming the invalid or
// missing ones in excluded.
func (r *pairRun) collect(ctx context.Context, cts []*paillier.Ciphertext, from []int, excluded map[string]string) []*paillier.DecryptionShare {
	shares := make([]*paillier.DecryptionShare, len(from))
	why := make([]string, len(from))
	var wg sync.WaitGroup
	for k, q := range from {
		wg.Go(func() {
			raw, err := r.receive(ctx, q, TypeShare)
			if err != nil {
				why[k] = "no decryption share in time"
				return
			}
			sh, err := decodePairShare(raw, r.pk, r.keys.Index(r.names[q]), len(cts))
			if err != nil {
				why[k] = "malformed decryption share: " + err.Error()
				return
			}
			if err := r.pk.VerifyShare(cts, sh, r.proofContext()); err != nil {
				why[k] = "invalid decryption share: " + err.Error()
				return
			}
			shares[k] = sh
		})
	}
	wg.Wait()
	var out []*paillier.DecryptionShare
	for k, sh := range shares {
		if sh == nil {
			excluded[r.names[from[k]]] = why[k]
		} else {
			out = append(out, sh)
		}
	}
	return out
}
