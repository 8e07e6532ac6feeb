package psi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"sync"

	"github.com/cloudflare/circl/group"
)

// PointLen is the length of an encoded ristretto255 element (RFC 9496 §4.3.2).
const PointLen = 32

// Point is an encoded ristretto255 element.
type Point [PointLen]byte

// suite names the hash-to-group suite of RFC 9380 Appendix B that circl's
// Ristretto255.HashToElement implements.
const suite = "ristretto255_XMD:SHA-512_R255MAP_RO_"

// DomainTag returns the hash-to-group domain separation tag for one PSI:
// the protocol, its version, the suite, and a hash of the job, phase,
// round, channel and edge, each length-prefixed. Both parties derive it
// from the committed step, so it binds the blinded values to this job and
// edge: a blinded value from one job is useless in another. The tag is 64
// + 43 bytes, within the 255 bytes expand_message_xmd allows.
func DomainTag(job, phase string, round int, channel, edge string) []byte {
	h := sha256.New()
	for _, s := range []string{job, phase, fmt.Sprint(round), channel, edge} {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(s)))
		h.Write(l[:])
		h.Write([]byte(s))
	}
	return []byte("cohort-psi-v1:" + suite + ":" + hex.EncodeToString(h.Sum(nil)))
}

// Secret is one party's blinding exponent for one PSI run: a uniformly
// random non-zero scalar mod ℓ (the group order), never reused across runs.
type Secret struct{ k group.Scalar }

// NewSecret draws a fresh secret from crypto/rand (circl's ristretto255
// scalars always come from crypto/rand).
func NewSecret() *Secret {
	return &Secret{k: group.Ristretto255.RandomNonZeroScalar(rand.Reader)}
}

// secretFromBytes makes a fixed secret for known-answer tests: the scalar
// HashToScalar(seed) per circl (RFC 9497 §4.1 style).
func secretFromBytes(seed []byte) *Secret {
	return &Secret{k: group.Ristretto255.HashToScalar(seed, []byte("cohort-psi-v1:test-secret"))}
}

// parallel runs f over [0, n) split into one contiguous range per core
// (runtime.GOMAXPROCS), and returns the first error.
func parallel(n int, f func(lo, hi int) error) error {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		if n == 0 {
			return nil
		}
		return f(0, n)
	}
	var wg sync.WaitGroup
	errs := make([]error, w)
	for i := range w {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(lo, hi)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// HashBlind returns H(x)^k for every x in elems, in order: H is
// hash-to-group (RFC 9380 hash_to_curve with the ristretto255 suite of
// its Appendix B) under domain tag dst, and ^k is scalar multiplication
// (the group is written multiplicatively here, as in the PSI literature).
// It spreads the work over every core.
func HashBlind(elems [][]byte, dst []byte, s *Secret) []Point {
	g := group.Ristretto255
	out := make([]Point, len(elems))
	_ = parallel(len(elems), func(lo, hi int) error {
		y := g.NewElement()
		for i := lo; i < hi; i++ {
			h := g.HashToElement(elems[i], dst) // h = H(x)
			y.Mul(h, s.k)                       // y = H(x)^k
			encode(&out[i], y)
		}
		return nil
	})
	return out
}

// encode writes the canonical encoding of y to p.
func encode(p *Point, y group.Element) {
	b, err := y.MarshalBinary()
	if err != nil || len(b) != PointLen { // cannot happen: ristretto255 encodes every element in 32 bytes
		panic("psi: internal error: ristretto255 encoding failed")
	}
	copy(p[:], b)
}

// DoubleBlind returns y^k for every encoded y in peer, in order. It is the
// strict decoder of the peer's blinded values: an encoding that is not a
// canonical ristretto255 element (RFC 9496 §4.3.1 decoding fails) or that
// is the identity is ErrPeer, naming its position. It spreads the work
// over every core.
func DoubleBlind(peer []Point, s *Secret) ([]Point, error) {
	g := group.Ristretto255
	out := make([]Point, len(peer))
	err := parallel(len(peer), func(lo, hi int) error {
		y, z := g.NewElement(), g.NewElement()
		for i := lo; i < hi; i++ {
			if !canonicalField(&peer[i]) || y.UnmarshalBinary(peer[i][:]) != nil {
				return fmt.Errorf("%w: element %d is not a canonical ristretto255 encoding", ErrPeer, i)
			}
			// H(x)^k is never the identity for k ≠ 0: ristretto255 has
			// prime order. A peer that sends it is cheating or broken.
			if y.IsIdentity() {
				return fmt.Errorf("%w: element %d is the identity", ErrPeer, i)
			}
			z.Mul(y, s.k) // z = y^k = H(x)^(k_peer·k)
			encode(&out[i], z)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// canonicalField reports whether p, read as a little-endian integer s,
// satisfies s < 2^255 − 19 = 𝑝: RFC 9496 §4.3.1 step 1 requires decoding
// to reject a non-canonical field element. circl's own test skips two of
// RFC 9496 A.2's non-canonical vectors (edff…ff7f, s = 𝑝, and f3ff…ff7f)
// with a note that its backend accepts them; go-ristretto v1.2.4, which
// circl v1.6.5 uses, does reject them (TestDoubleBlindRejects), but a
// point that two peers could encode two ways would slip past the repeat
// check, so psi checks this itself rather than trust the backend's
// version. The check is on public data and is not constant time.
func canonicalField(p *Point) bool {
	if p[31] > 0x7f {
		return false // bit 255 set: s ≥ 2^255
	}
	if p[31] < 0x7f {
		return true
	}
	for i := 30; i >= 1; i-- {
		if p[i] != 0xff {
			return true
		}
	}
	return p[0] < 0xed // s < 2^255 − 19 iff its low byte is below 0xed when all others are maximal
}

// Match returns the positions i, ascending, at which mine[i] is one of
// theirs. mine are our own elements double-blinded (returned by the
// peer), theirs the peer's elements double-blinded (by us). Equal
// elements have equal encodings (ristretto255 encodings are canonical), so
// comparing bytes compares elements.
func Match(mine, theirs []Point) []int {
	set := make(map[Point]struct{}, len(theirs))
	for _, p := range theirs {
		set[p] = struct{}{}
	}
	var out []int
	for i, p := range mine {
		if _, ok := set[p]; ok {
			out = append(out, i)
		}
	}
	return out
}

// distinct returns the distinct elements of elems in first-seen order and,
// for each position in elems, the index of its element in uniq. (One
// slice of ints, not a slice of positions per element: a million small
// slices cost more in allocation and GC than the map itself.)
func distinct(elems [][]byte) (uniq [][]byte, of []int) {
	seen := make(map[string]int, len(elems))
	of = make([]int, len(elems))
	for i, e := range elems {
		u, ok := seen[string(e)]
		if !ok {
			u = len(uniq)
			seen[string(e)] = u
			uniq = append(uniq, e)
		}
		of[i] = u
	}
	return uniq, of
}

// permutation returns a uniformly random permutation of [0, n), drawn
// with a ChaCha8 generator seeded from crypto/rand, so the order of what
// a party sends says nothing about the order of its table.
func permutation(n int) []int {
	var seed [32]byte
	rand.Read(seed[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return mrand.New(mrand.NewChaCha8(seed)).Perm(n)
}
