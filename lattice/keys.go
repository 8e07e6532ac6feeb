package lattice

import (
	"fmt"
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/cohortdm/cohort/wire"
)

// Format tags of the encodings, checked on decoding.
const (
	formatPublic = "cohort-mhe-public/1"
	formatShare  = "cohort-mhe-share/1"
)

// DefaultQuorum is the number of decryption shares a key of n members needs
// by default: ⌊(n−1)/2⌋+1, so that any ⌊(n−1)/2⌋ colluders (a minority)
// cannot decrypt, as Paillier's threshold t = ⌊(n−1)/2⌋ needs t+1 shares;
// two members get 2 (neither decrypts alone).
func DefaultQuorum(n int) int {
	if n == 2 {
		return 2
	}
	return (n-1)/2 + 1
}

// PublicKey is the consortium's collective encryption key with what every
// member needs to use it: the parameter set, the sorted member list
// (Members[i-1] holds Shamir point i, fixed at key generation like the
// Paillier key's share indices) and the quorum, the number of decryption
// shares that decrypt (Lattigo's threshold t: any Quorum members suffice,
// Quorum−1 learn nothing).
type PublicKey struct {
	Params  Params
	Members []string
	Quorum  int
	key     *rlwe.PublicKey
	id      KeyID
}

// ID is the key's id, bound into every Context.
func (pk *PublicKey) ID() KeyID { return pk.id }

// Point returns a member's Shamir point (1..N), or 0 for a non-member.
func (pk *PublicKey) Point(name string) int {
	i, ok := slices.BinarySearch(pk.Members, name)
	if !ok {
		return 0
	}
	return i + 1
}

// newPublicKey checks the public fields and derives the key id.
func newPublicKey(params Params, members []string, quorum int, key *rlwe.PublicKey) (*PublicKey, error) {
	if len(members) == 0 || len(members) > MaxMembers || !slices.IsSorted(members) ||
		len(slices.Compact(slices.Clone(members))) != len(members) || members[0] == "" {
		return nil, fmt.Errorf("%w: members must be 1..%d sorted, unique, named", ErrParams, MaxMembers)
	}
	for _, m := range members {
		if len(m) > maxName {
			return nil, fmt.Errorf("%w: member names of at most %d bytes", ErrParams, maxName)
		}
	}
	if quorum < min(2, len(members)) || quorum > len(members) {
		// A quorum of one among several would hand every member the whole
		// collective secret.
		return nil, fmt.Errorf("%w: quorum must be in %d..%d", ErrParams, min(2, len(members)), len(members))
	}
	pk := &PublicKey{Params: params, Members: slices.Clone(members), Quorum: quorum, key: key}
	h := newHasher("cohort/mhe/key-id/1")
	h.roster(params, quorum, members)
	h.polys([]ring.Poly{key.Value[0].Q, key.Value[1].Q})
	d := h.sum()
	copy(pk.id[:], d[:])
	return pk, nil
}

type publicFile struct {
	Format  string   `msgpack:"format"`
	Params  string   `msgpack:"params"`
	Members []string `msgpack:"members"`
	Quorum  int      `msgpack:"quorum"`
	Key     []byte   `msgpack:"key"`
}

// MarshalBinary encodes the public key, the content of
// keyring.LatticePublicFile (package keyring owns the key files; this
// package only encodes).
func (pk *PublicKey) MarshalBinary() ([]byte, error) {
	return wire.Marshal(publicFile{Format: formatPublic, Params: pk.Params.Name(), Members: pk.Members,
		Quorum: pk.Quorum, Key: appendPolys(nil, []ring.Poly{pk.key.Value[0].Q, pk.key.Value[1].Q})})
}

// ParsePublicKey decodes what MarshalBinary wrote. It checks the encoding,
// the member list, the quorum and that the key's coefficients are reduced;
// it cannot check that the key was generated honestly.
func ParsePublicKey(b []byte) (*PublicKey, error) {
	var f publicFile
	if err := wire.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: public key: %w", ErrMalformed, err)
	}
	if f.Format != formatPublic {
		return nil, fmt.Errorf("%w: public key: format %.64q, expected %s", ErrMalformed, f.Format, formatPublic)
	}
	params, err := NewParams(f.Params)
	if err != nil {
		return nil, err
	}
	polys, err := params.polyShape().decodePolys(f.Key, 2)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	key := rlwe.NewPublicKey(params.bgv)
	key.Value[0].Q, key.Value[1].Q = polys[0], polys[1]
	return newPublicKey(params, f.Members, f.Quorum, key)
}

// Keys is one member's part of the collective key: the public key and its
// own Shamir share of the collective secret (its threshold secret key).
type Keys struct {
	*PublicKey
	// Self is this member's Shamir point; Members[Self-1] is its name.
	Self  int
	share multiparty.ShamirSecretShare
}

// Name is this member's name.
func (k *Keys) Name() string { return k.Members[k.Self-1] }

type shareFile struct {
	Format string `msgpack:"format"`
	KeyID  []byte `msgpack:"key_id"`
	Self   int    `msgpack:"self"`
	Share  []byte `msgpack:"share"`
}

// MarshalShare encodes this member's secret share, the content of
// keyring.LatticeShareFile (to be stored with mode 0600: it is the member's decryption capability).
func (k *Keys) MarshalShare() ([]byte, error) {
	return wire.Marshal(shareFile{Format: formatShare, KeyID: k.id[:], Self: k.Self,
		Share: appendPolys(nil, []ring.Poly{k.share.Q})})
}

// ParseKeys rebuilds Keys from the contents of keyring.LatticePublicFile
// and keyring.LatticeShareFile, checking that the share belongs to this public key. A share that is
// well-formed but wrong (not the member's Shamir share) is not detected
// here; decryptions with it disagree (see Verdict).
func ParseKeys(public, share []byte) (*Keys, error) {
	pk, err := ParsePublicKey(public)
	if err != nil {
		return nil, err
	}
	var f shareFile
	if err := wire.Unmarshal(share, &f); err != nil {
		return nil, fmt.Errorf("%w: key share: %w", ErrMalformed, err)
	}
	if f.Format != formatShare {
		return nil, fmt.Errorf("%w: key share: format %.64q, expected %s", ErrMalformed, f.Format, formatShare)
	}
	if string(f.KeyID) != string(pk.id[:]) {
		return nil, fmt.Errorf("%w: the key share belongs to another key", ErrMismatch)
	}
	if f.Self < 1 || f.Self > len(pk.Members) {
		return nil, fmt.Errorf("%w: key share of point %d, members 1..%d", ErrMalformed, f.Self, len(pk.Members))
	}
	polys, err := pk.Params.polyShape().decodePolys(f.Share, 1)
	if err != nil {
		return nil, fmt.Errorf("key share: %w", err)
	}
	s := multiparty.ShamirSecretShare{Poly: pk.Params.bgv.RingQP().NewPoly()}
	s.Q = polys[0]
	return &Keys{PublicKey: pk, Self: f.Self, share: s}, nil
}
