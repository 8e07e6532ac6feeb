package secureagg

import (
	"crypto/rand"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// The lattice backend checks the total by sketches (package lattice's sketch check)
// instead of re-summing the root's components: the root sends down only
// the total's mask and its own, two masks instead of one per child of the
// root plus its own, so the round's largest sends shrink by that factor.
//
//  1. At the start every party but the root draws a secret sketch key and
//     sends it (seed) to each child of the root but itself. The root never
//     sees a key.
//  2. A child of the root, once it has sent its subtree's sum up, sends
//     each party the sketch of that sum under the party's key (sketch),
//     with the root's commitment to its own input as it received it.
//  3. A party that gets the total and the root's own mask checks the
//     root's mask against the commitment, and the total against its own
//     mask plus the sketches (lattice.Decryptor.TargetFromSketches): the root
//     fixed the total before it could know any key, so a total that is
//     not the sum of the committed inputs passes with probability below
//     2^-119, and is refused (ErrTampered) like a total that does not
//     re-sum.
//
// A child of the root that dies after sending up has already sent its
// sketches (they need only its subtree and the keys, which arrive at the
// start), so a decryption that re-plans around it is not held up.

// Message types of the sketch check.
const (
	// TypeSeed carries a party's sketch key to a child of the root
	// (disclosure control: random bytes).
	TypeSeed = "secureagg/seed"
	// TypeSketch carries a child of the root's sketch of its subtree's sum
	// under the recipient's key, with the root's commitment as that child
	// received it (disclosure ciphertext: a few linear combinations of
	// ciphertext coefficients).
	TypeSketch = "secureagg/sketch"
)

type seedBody struct {
	Key []byte `msgpack:"key"`
}

type sketchBody struct {
	Sketch []byte `msgpack:"sketch"`
	Root   []byte `msgpack:"root"`
}

// sketchHops is when party p stops waiting for the sketches: when the
// total reaches it, and no sooner than one hop after it reaches the
// root's children.
func (s *latticeAgg) sketchHops(p string) int { return max(s.downHops(p), s.h+3) }

// seed draws this party's sketch key, which runTree sends every child of
// the root but itself.
func (s *latticeAgg) seed() (any, error) {
	key, err := lattice.NewSketchKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("secureagg: %w", err)
	}
	s.sketchKey = key
	return seedBody{Key: key[:]}, nil
}

// vouching: a child of the root sends each party the sketch of its
// subtree's sum under that party's key, once the key has come.
func (s *latticeAgg) vouching() vouching {
	return vouching{typ: TypeSketch, keyed: true, hops: s.sketchHops, disclosure: wire.DiscloseCiphertext}
}

// vouchers is step 2 for one recipient, given the seed message it sent:
// the sketch of acc under its key, with the root's commitment.
func (s *latticeAgg) vouchers(acc *lattice.Aggregate) (func([]byte) (any, error), error) {
	return func(seed []byte) (any, error) {
		key, err := decodeSeed(seed)
		if err != nil {
			return nil, err // the sender's check fails without a sketch, and it names us
		}
		b, err := acc.Sketch(key).MarshalBinary()
		if err != nil {
			return nil, err
		}
		return sketchBody{Sketch: b, Root: s.rootCommit}, nil
	}, nil
}

func (s *latticeAgg) noVoucher(c string, err error) error {
	return fmt.Errorf("%w: no sketch of its subtree from %s: %w", ErrTampered, c, err)
}

// check checks the total (comps[0], the mask the root sent down) against
// the root's own mask (comps[1], checked against the commitment the root's
// children received) and the sketches of the root's children (vouchers,
// but this party's own, whose subtree's sum is ownSubtree), and returns
// the target this party makes shares of: the sum of every party's input,
// its own among them, or nothing (ErrTampered). So a party decrypts only
// the step's aggregate, never a single party's ciphertext that the root
// (or a lying coordinator) sends back down.
func (s *latticeAgg) check(comps [][]byte, ownSubtree *lattice.Aggregate, vouchers map[string][]byte) (latticeTotal, error) {
	root := s.tree.root()
	var commits [][]byte
	var sketches []*lattice.Sketch
	for _, c := range s.tree.children(root) {
		if c == s.self {
			commits = append(commits, s.rootCommit)
			sketches = append(sketches, ownSubtree.Sketch(s.sketchKey))
			continue
		}
		sk, commit, err := s.decodeSketch(vouchers[c], c)
		if err != nil {
			return latticeTotal{}, s.noVoucher(c, err)
		}
		commits = append(commits, commit)
		sketches = append(sketches, sk)
	}
	if err := s.checkRootCommit(commits, comps[1]); err != nil {
		return latticeTotal{}, err
	}
	total, own := s.agg.AllocateMask(), s.agg.AllocateMask()
	if err := own.UnmarshalBinary(comps[1]); err != nil || !slices.Equal(inputParties(own.Inputs), s.pointsOf([]string{root})) {
		return latticeTotal{}, fmt.Errorf("%w: the root %s's own input is malformed or holds other inputs", ErrTampered, root)
	}
	if err := total.UnmarshalBinary(comps[0]); err != nil {
		return latticeTotal{}, fmt.Errorf("%w: the total from %s is malformed", ErrTampered, root)
	}
	inputs := slices.Clone(own.Inputs)
	for _, sk := range sketches {
		inputs = append(inputs, sk.Inputs...)
	}
	slices.SortFunc(inputs, func(a, b lattice.Input) int { return a.Party - b.Party })
	expect := lattice.Expect{Context: s.mctx, Shape: s.layout.Shape(), Committed: inputs, MinInputs: len(s.parties), Own: s.ownDigest}
	t, err := s.dec.TargetFromSketches(total, []*lattice.Mask{own}, sketches, s.sketchKey, expect)
	if err != nil {
		return latticeTotal{}, fmt.Errorf("%w: the total from %s (coordinator %s): %w; no decryption share is made", ErrTampered, root, s.step.Coordinator, err)
	}
	return latticeTotal{target: t}, nil
}

// decodeSketch decodes child c of the root's sketch of its subtree, which
// must hold exactly that subtree's inputs, and the root's commitment as c
// received it.
func (s *latticeAgg) decodeSketch(msg []byte, c string) (*lattice.Sketch, []byte, error) {
	body, err := decodeSketchBody(msg)
	if err != nil {
		return nil, nil, err
	}
	sk, err := lattice.ParseSketch(body.Sketch, s.keys.Params, len(s.keys.Members))
	if err != nil {
		return nil, nil, err
	}
	if !slices.Equal(inputParties(sk.Inputs), s.pointsOf(s.tree.subtree(c))) {
		return nil, nil, fmt.Errorf("%w: a sketch of other inputs than %s's subtree", wire.ErrMalformed, c)
	}
	return sk, body.Root, nil
}

// decodeSeed decodes a seed message's body: a key of the right size.
func decodeSeed(b []byte) (lattice.SketchKey, error) {
	var body seedBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return lattice.SketchKey{}, err
	}
	if len(body.Key) != len(lattice.SketchKey{}) {
		return lattice.SketchKey{}, fmt.Errorf("%w: a sketch key of %d bytes", wire.ErrMalformed, len(body.Key))
	}
	return lattice.SketchKey(body.Key), nil
}

// decodeSketchBody decodes a sketch message's body; the sketch itself is
// package lattice's to decode.
func decodeSketchBody(b []byte) (sketchBody, error) {
	var body sketchBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return body, err
	}
	return body, checkDigestSize(body.Root)
}
