package secureagg

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// Message types. Each travels inside a wire.Message that carries the
// step's job, phase, round and attempt, so messages of different steps or
// attempts never match each other's receives.
const (
	// TypeUp carries a subtree's product of ciphertexts to the parent, or
	// the names of parties missing from it (disclosure "ciphertext").
	TypeUp = "secureagg/up"
	// TypeDown carries the total ciphertext from the root down the tree, or
	// an abort naming the missing parties (disclosure "ciphertext").
	TypeDown = "secureagg/down"
	// TypeShare carries a party's decryption share and its proof to the
	// root (disclosure "decryption-share").
	TypeShare = "secureagg/share"
	// TypeShareRequest asks a party for its decryption share (Decryption):
	// one not asked up front, after some of the first ones failed
	// (disclosure control), or one that does not hold the ciphertexts,
	// which the request carries (ciphertext); or releases it (control).
	TypeShareRequest = "secureagg/share-request"
	// TypeResult carries the decrypted sum, or why there is none, down the
	// tree (disclosure "public-result").
	TypeResult = "secureagg/result"
	// TypeDigest carries a child of the root's digest of the subtree
	// product it sent up, to every other party but the root, so that each
	// can check the total it is asked to decrypt (disclosure control: a
	// hash of ciphertexts). Paillier backend only: the lattice backend
	// checks by sketches (TypeSketch).
	TypeDigest = "secureagg/digest"
	// TypeCommit carries the root's digest of its own input to each of its
	// children, who wait for it before they send their subtrees up, so the
	// root fixes its own part of the total before it can see any other
	// (disclosure control: a hash of ciphertexts). An empty one says the
	// root withdrew.
	TypeCommit = "secureagg/commit"
	// TypeFormed tells every other party of the step whether this party
	// made a decryption share of the step's total (as the share leaves),
	// or ended the attempt without one (formed.go): disclosure control,
	// one flag.
	TypeFormed = "secureagg/formed"
)

// Bounds on decoded text, so a hostile peer cannot make us keep or log
// megabytes of it.
const (
	maxReason = 512
)

// ciphertextBody is the body of up and down messages: a subtree's product
// (up) or the total's components (down: the root's own input, then each
// of its children's subtree products, in tree order), or, to end the
// attempt early, the parties known to be missing.
type ciphertextBody struct {
	Shape       string   `msgpack:"shape"` // the config every party must share; see Config.shape
	Ciphertexts []byte   `msgpack:"c"`
	Components  [][]byte `msgpack:"parts"`
	Missing     []string `msgpack:"missing"`
}

// digestBody is the body of digest and commit messages: a digest, and in a
// digest message the root's commitment to its own input as the child of
// the root that sends it received it before sending its subtree up.
type digestBody struct {
	D    []byte `msgpack:"d"`
	Root []byte `msgpack:"root,omitempty"`
}

type shareBody struct {
	Share []byte `msgpack:"s"`
}

// resultBody is the root's public result: the sum as the combined packed
// plaintexts (half the size of the decoded floats, and every party unpacks
// and range-checks it itself), or an error, or the missing parties.
type resultBody struct {
	Plain    [][]byte          `msgpack:"plain"`
	Included []string          `msgpack:"included"`
	Excluded map[string]string `msgpack:"excluded"`
	Noise    *NoiseReport      `msgpack:"noise"`
	Missing  []string          `msgpack:"missing"`
	Error    string            `msgpack:"error"`

	err error // the root's own error behind Error, not sent
}

// checkNames checks that names are sorted, unique and all in allowed.
func checkNames(field string, names []string, allowed []string) error {
	if !slices.IsSorted(names) {
		return fmt.Errorf("%w: %s not sorted", wire.ErrMalformed, field)
	}
	for i, n := range names {
		if i > 0 && names[i-1] == n {
			return fmt.Errorf("%w: %s repeats %q", wire.ErrMalformed, field, n)
		}
		if !slices.Contains(allowed, n) {
			return fmt.Errorf("%w: %s names %q, not allowed here", wire.ErrMalformed, field, n)
		}
	}
	return nil
}

// decodeCiphertexts decodes an up or down body. A body naming missing
// parties must name only parties in allowed and carry no ciphertexts;
// otherwise it must carry exactly count ciphertexts under pk, and its shape
// must equal ours.
func decodeCiphertexts(b []byte, pk *paillier.PublicKey, shape string, count int, allowed []string) (cts []*paillier.Ciphertext, missing []string, err error) {
	var body ciphertextBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, nil, err
	}
	if len(body.Missing) > 0 {
		if len(body.Ciphertexts) > 0 {
			return nil, nil, fmt.Errorf("%w: both ciphertexts and missing parties", wire.ErrMalformed)
		}
		if err := checkNames("missing", body.Missing, allowed); err != nil {
			return nil, nil, err
		}
		return nil, body.Missing, nil
	}
	if body.Shape != shape {
		return nil, nil, fmt.Errorf("%w: peer aggregates %.100q, we aggregate %q (every party must use the same config and vector length)",
			wire.ErrMalformed, body.Shape, shape)
	}
	if want := count * pk.CiphertextSize(); len(body.Ciphertexts) > 2*want+64 {
		return nil, nil, fmt.Errorf("%w: %d bytes of ciphertexts, expected about %d", wire.ErrMalformed, len(body.Ciphertexts), want)
	}
	cts, err = pk.UnmarshalCiphertexts(body.Ciphertexts)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", wire.ErrMalformed, err)
	}
	if len(cts) != count {
		return nil, nil, fmt.Errorf("%w: %d ciphertexts, expected %d", wire.ErrMalformed, len(cts), count)
	}
	return cts, nil, nil
}

// decodeComponents decodes a down body: n components (each checked when
// the total is formed), or missing parties among allowed.
func decodeComponents(b []byte, shape string, n int, allowed []string) ([][]byte, []string, error) {
	var body ciphertextBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, nil, err
	}
	if len(body.Missing) > 0 {
		if len(body.Components) > 0 || len(body.Ciphertexts) > 0 {
			return nil, nil, fmt.Errorf("%w: both ciphertexts and missing parties", wire.ErrMalformed)
		}
		if err := checkNames("missing", body.Missing, allowed); err != nil {
			return nil, nil, err
		}
		return nil, body.Missing, nil
	}
	if body.Shape != shape {
		return nil, nil, fmt.Errorf("%w: peer aggregates %.100q, we aggregate %q (every party must use the same config and vector length)",
			wire.ErrMalformed, body.Shape, shape)
	}
	if len(body.Components) != n || len(body.Ciphertexts) > 0 {
		return nil, nil, fmt.Errorf("%w: %d components of the total, expected %d", wire.ErrMalformed, len(body.Components), n)
	}
	return body.Components, nil, nil
}

// decodeShare decodes a share body and checks that it is the share of the
// expected index over count ciphertexts. The proof is checked by the caller.
func decodeShare(b []byte, pk *paillier.ThresholdPublicKey, index, count int) (*paillier.DecryptionShare, error) {
	var body shareBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	if want := count * pk.CiphertextSize(); len(body.Share) > 2*want+(1<<16) {
		return nil, fmt.Errorf("%w: share of %d bytes, expected about %d", wire.ErrMalformed, len(body.Share), want)
	}
	sh, err := pk.UnmarshalDecryptionShare(body.Share)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", wire.ErrMalformed, err)
	}
	if sh.Index != index {
		return nil, fmt.Errorf("%w: share has index %d, the sender's is %d", wire.ErrMalformed, sh.Index, index)
	}
	if len(sh.Values) != count {
		return nil, fmt.Errorf("%w: share has %d values, expected %d", wire.ErrMalformed, len(sh.Values), count)
	}
	return sh, nil
}

// decodeResult decodes the root's public result of count plaintexts below
// modulus over parties.
func decodeResult(b []byte, count int, modulus *big.Int, parties []string) (*resultBody, error) {
	var r resultBody
	if err := wire.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	failed, err := checkFailure(r.Error, r.Missing, len(r.Plain) > 0 || len(r.Included) > 0 || len(r.Excluded) > 0 || r.Noise != nil, parties)
	if err != nil {
		return nil, err
	}
	if failed {
		return &r, nil
	}
	if len(r.Plain) != count {
		return nil, fmt.Errorf("%w: sum of %d plaintexts, expected %d", wire.ErrMalformed, len(r.Plain), count)
	}
	size := (modulus.BitLen() + 7) / 8
	for _, p := range r.Plain {
		if len(p) > size || new(big.Int).SetBytes(p).Cmp(modulus) >= 0 {
			return nil, fmt.Errorf("%w: plaintext out of range", wire.ErrMalformed)
		}
	}
	if err := checkReport(r.Included, r.Excluded, r.Noise, parties); err != nil {
		return nil, err
	}
	return &r, nil
}
