package secureagg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// paillierAgg is one party's state for one aggregation on the Paillier
// backend: its stage of the schedule, the key, the packing and the digests
// that vet the total.
type paillierAgg struct {
	*stage
	*paillierScheme
	keys *Keys
	ask  int    // how many parties are asked for shares up front
	own  []byte // as a child of the root: the digest of the product it sent up
}

// precompute builds the key's encryption table (once per process and key)
// before the schedule's clock starts, so a node's first round is not
// judged late: the wide table (0.3 s at 2048 bits) when the aggregation's
// n ciphertexts alone would pay for it, else the small one (paillier's
// tables grow with use). n counts packed ciphertexts, not values: a few
// dozen ciphertexts must not build a 57 MiB table that only hundreds of
// encryptions pay for. The build cannot be interrupted, but the caller
// stops waiting when ctx ends: a superseded attempt returns at once and the
// table, shared by every later use of the key, finishes in the background.
func precompute(ctx context.Context, keys *Keys, n int) error {
	if keys == nil || keys.Public() == nil {
		return nil // newPaillierAgg reports the missing key
	}
	built := make(chan struct{})
	go func() {
		defer close(built)
		keys.Public().PrecomputeFor(n)
	}()
	select {
	case <-built:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("secureagg: building the encryption table: %w", ctx.Err())
	}
}

// newPaillierAgg checks cfg's key and fixed point against the step of
// st, and plans the packing of n values.
func newPaillierAgg(st *stage, cfg Config, n int) (*paillierAgg, error) {
	if err := cfg.Keys.Check(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("secureagg: empty input vector")
	}
	enc, err := planEncoding(len(st.parties), cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Keys.Members[cfg.Keys.Share.Index-1] != st.self {
		return nil, fmt.Errorf("%w: %s holds the share of %s", ErrKeys, st.self, cfg.Keys.Members[cfg.Keys.Share.Index-1])
	}
	s := &paillierAgg{stage: st, keys: cfg.Keys}
	if s.paillierScheme, err = newPaillierScheme(cfg.Keys.Public(), enc, n, len(st.parties)); err != nil {
		return nil, err
	}
	if p := cfg.Randomizers; cfg.Random == nil && p != nil && p.Serves(&cfg.Keys.Public().PublicKey) {
		s.pool = p // a deterministic Random (tests) keeps every draw its own
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

// The Paillier backend's rounds (backend, run by runTree): a subtree's
// sum is the product of its ciphertexts, every party forms the total
// itself from the root's components (its own input and each child's
// subtree product), vetted by the digests the root's children send every
// party directly.

var _ backend[[]*paillier.Ciphertext, []*paillier.Ciphertext] = (*paillierAgg)(nil)

// seed is none: a digest needs no key of its recipient.
func (s *paillierAgg) seed() (any, error) { return nil, nil }

// contribute checks, noises, packs and encrypts this party's input.
func (s *paillierAgg) contribute(ctx context.Context, input []float64) ([]*paillier.Ciphertext, error) {
	return s.encrypt(ctx, s.random, input)
}

func (s *paillierAgg) component(own []*paillier.Ciphertext) ([]byte, error) { return s.marshal(own) }

// frame encodes one message body as it travels: one part.
func frame(body any) (frames, error) {
	b, err := wire.Marshal(body)
	if err != nil {
		return nil, err
	}
	return frames{b}, nil
}

// up is a subtree's product as it travels up.
func (s *paillierAgg) up(acc []*paillier.Ciphertext) (frames, error) {
	cts, err := s.marshal(acc)
	if err != nil {
		return nil, err
	}
	return frame(ciphertextBody{Shape: s.shape, Ciphertexts: cts})
}

func (s *paillierAgg) aborted(missing []string) (frames, error) {
	return frame(ciphertextBody{Missing: missing})
}

// oneBody is a message of one part; the body names missing parties itself.
type oneBody struct{ body []byte }

func (r *oneBody) part(_ int, body []byte) (int, error) { r.body = body; return 1, nil }
func (r *oneBody) message() ([]byte, []string)          { return r.body, nil }

func (s *paillierAgg) reader(string) reader { return &oneBody{} } // up, down, result

// child decodes child c's subtree product, which must name only parties
// of the step missing, or hold the vector's ciphertexts.
func (s *paillierAgg) child(data []byte, _ []string, c string) ([]*paillier.Ciphertext, []string, error) {
	return decodeCiphertexts(data, &s.pk.PublicKey, s.shape, s.count, s.tree.subtree(c))
}

// addChild multiplies a child's product into acc, keeping it for the down
// message.
func (s *paillierAgg) addChild(acc []*paillier.Ciphertext, parts [][]*paillier.Ciphertext, sum []*paillier.Ciphertext) ([]*paillier.Ciphertext, [][]*paillier.Ciphertext, error) {
	return s.add(acc, sum), append(parts, sum), nil
}

// total is the root's down message: its own encrypted input (own, encoded
// as committed) and each child's subtree product, from which every party
// forms the total itself; the root decrypts the product it formed.
func (s *paillierAgg) total(own []byte, acc []*paillier.Ciphertext, parts [][]*paillier.Ciphertext) (frames, func() ([]*paillier.Ciphertext, error), error) {
	body := ciphertextBody{Shape: s.shape, Components: [][]byte{own}}
	for _, cts := range parts {
		b, err := s.marshal(cts)
		if err != nil {
			return nil, nil, err
		}
		body.Components = append(body.Components, b)
	}
	f, err := frame(body)
	return f, func() ([]*paillier.Ciphertext, error) { return acc, nil }, err
}

func (s *paillierAgg) components(data []byte, _ []string) ([][]byte, []string, error) {
	return decodeComponents(data, s.shape, len(s.tree.children(s.tree.root()))+1, s.parties)
}

func (s *paillierAgg) relay(_ []byte, comps [][]byte) (frames, error) {
	return frame(ciphertextBody{Shape: s.shape, Components: comps})
}

func (s *paillierAgg) vouching() vouching {
	return vouching{typ: TypeDigest, hops: s.downHops, disclosure: wire.DiscloseControl}
}

// vouchers is a child of the root's digest of the product it sent up,
// with the root's commitment as it received it: the same for every party.
func (s *paillierAgg) vouchers(acc []*paillier.Ciphertext) (func([]byte) (any, error), error) {
	cts, err := s.marshal(acc)
	if err != nil {
		return nil, err
	}
	body := digestBody{D: digest(s.step, s.self, cts), Root: s.rootCommit}
	return func([]byte) (any, error) { return body, nil }, nil
}

func (s *paillierAgg) noVoucher(c string, err error) error {
	return fmt.Errorf("%w: no digest from %s: %w", ErrTampered, c, err)
}

// check forms the total from the root's components after checking each
// child's product against the digest that child sent this party directly
// (its own, if this party is that child): so a party decrypts only the
// step's aggregate of every party's input, never a single party's
// ciphertext the root (or a lying coordinator) sends back down; and the
// root's own component (comps[0]) against the commitment those children
// received before they sent their subtrees up (commit.go).
func (s *paillierAgg) check(comps [][]byte, acc []*paillier.Ciphertext, vouchers map[string][]byte) ([]*paillier.Ciphertext, error) {
	root := s.tree.root()
	var commits [][]byte
	for j, c := range s.tree.children(root) {
		var want, commit []byte
		if c == s.self {
			cts, err := s.marshal(acc)
			if err != nil {
				return nil, err
			}
			want, commit = digest(s.step, s.self, cts), s.rootCommit
		} else {
			body, err := decodeDigest(vouchers[c])
			if err != nil {
				return nil, s.noVoucher(c, err)
			}
			want, commit = body.D, body.Root
		}
		commits = append(commits, commit)
		if !bytes.Equal(want, digest(s.step, c, comps[1+j])) {
			return nil, fmt.Errorf("%w: the total from %s does not hold %s's subtree as %s sent it (coordinator %s); no decryption share is made",
				ErrTampered, root, c, c, s.step.Coordinator)
		}
	}
	if err := s.checkRootCommit(commits, comps[0]); err != nil {
		return nil, err
	}
	return s.form(comps, root)
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
