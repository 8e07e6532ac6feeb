package secureagg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/internal/atomicfile"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
)

// Files of the consortium's threshold key under a node's data dir. The
// public file holds the public key and the member list; the share file holds
// only this node's secret share and is written with mode 0600.
const (
	PublicKeyFile = "keys/threshold.pub"
	ShareFile     = "keys/threshold.share"
)

// ErrKeys wraps every problem with stored or dealt key material.
var ErrKeys = errors.New("secureagg: bad threshold keys")

// Keys is what a node holds of the consortium's threshold key: its own share
// (whose Public field is the consortium's public key) and the member list
// fixed at key generation. Members is sorted and Members[i-1] holds the
// share with index i; the mapping is stored with the public key rather than
// derived from the current membership, so a job over a subset of the
// members, or a later membership change, cannot shift it.
type Keys struct {
	Members []string
	Share   *paillier.KeyShare
}

// Public returns the consortium's threshold public key.
func (k *Keys) Public() *paillier.ThresholdPublicKey { return k.Share.Public }

// Index returns the share index of a member, or 0 if name is not a member.
func (k *Keys) Index(name string) int {
	i, ok := slices.BinarySearch(k.Members, name)
	if !ok {
		return 0
	}
	return i + 1
}

// check validates the invariants every other function relies on.
func (k *Keys) check() error {
	if k == nil || k.Share == nil || k.Share.Public == nil {
		return fmt.Errorf("%w: missing share or public key", ErrKeys)
	}
	if !slices.IsSorted(k.Members) || len(slices.Compact(slices.Clone(k.Members))) != len(k.Members) ||
		(len(k.Members) > 0 && k.Members[0] == "") {
		return fmt.Errorf("%w: member list not sorted, unique and named", ErrKeys)
	}
	pk := k.Share.Public
	if pk.Parties != len(k.Members) {
		return fmt.Errorf("%w: key has %d parties, member list %d", ErrKeys, pk.Parties, len(k.Members))
	}
	if k.Share.Index < 1 || k.Share.Index > len(k.Members) {
		return fmt.Errorf("%w: share index %d outside 1..%d", ErrKeys, k.Share.Index, len(k.Members))
	}
	return nil
}

// Deal is the trusted-dealer key generation: it deals a (threshold+1)-of-N
// threshold key over the members (sorted; member i gets share index i+1) and
// returns the public key and each member's Keys. threshold <= 0 picks the
// honest-majority default ⌊(N−1)/2⌋ (Phoenix needs a majority of honest parties to decrypt),
// except for two members: ⌊1/2⌋ = 0 would let either share decrypt alone
// (and paillier refuses its equal verification keys), so two members get a
// 2-of-2 key. Neither can then decrypt alone, but an honest majority is
// impossible with two: either member can block every decryption, so a bad
// share cannot be excluded and fails the aggregation instead.
// The dealer sees every share: it is for tests and single-operator setups
// until dealerless generation exists.
func Deal(random io.Reader, bits int, members []string, threshold int) (*paillier.ThresholdPublicKey, map[string]*Keys, error) {
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	if len(sorted) == 0 || len(slices.Compact(slices.Clone(sorted))) != len(sorted) || sorted[0] == "" {
		return nil, nil, fmt.Errorf("%w: members must be non-empty, named and unique", ErrKeys)
	}
	if threshold <= 0 {
		threshold = (len(sorted) - 1) / 2
		if len(sorted) == 2 {
			threshold = 1
		}
	}
	pk, shares, err := paillier.DealThreshold(random, bits, len(sorted), threshold)
	if err != nil {
		return nil, nil, fmt.Errorf("secureagg: deal threshold key: %w", err)
	}
	keys, err := assignShares(sorted, shares)
	if err != nil {
		return nil, nil, err
	}
	return pk, keys, nil
}

// assignShares gives share i to the i-th of the sorted members.
func assignShares(sorted []string, shares []*paillier.KeyShare) (map[string]*Keys, error) {
	out := make(map[string]*Keys, len(sorted))
	for _, s := range shares {
		if s.Index < 1 || s.Index > len(sorted) {
			return nil, fmt.Errorf("%w: dealt share index %d", ErrKeys, s.Index)
		}
		out[sorted[s.Index-1]] = &Keys{Members: sorted, Share: s}
	}
	if len(out) != len(sorted) {
		return nil, fmt.Errorf("%w: dealer returned %d shares for %d members", ErrKeys, len(out), len(sorted))
	}
	return out, nil
}

type publicFile struct {
	Members []string `msgpack:"members"`
	Key     []byte   `msgpack:"key"`
}

// MarshalPublic encodes the public half of k (public key and member list),
// the content of PublicKeyFile.
func (k *Keys) MarshalPublic() ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	key, err := k.Share.Public.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("secureagg: marshal public key: %w", err)
	}
	return protocol.Marshal(publicFile{Members: k.Members, Key: key})
}

// ParseKeys rebuilds Keys from the contents of PublicKeyFile and ShareFile,
// checking that the share belongs to the public key.
func ParseKeys(public, share []byte) (*Keys, error) {
	var pf publicFile
	if err := protocol.Unmarshal(public, &pf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeys, PublicKeyFile, err)
	}
	pk, err := paillier.UnmarshalThresholdPublicKey(pf.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeys, PublicKeyFile, err)
	}
	ks, err := paillier.UnmarshalKeyShare(share)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeys, ShareFile, err)
	}
	if ks.Public == nil {
		ks.Public = pk
	} else if ks.Public.KeyID != pk.KeyID {
		return nil, fmt.Errorf("%w: the share belongs to another key than %s", ErrKeys, PublicKeyFile)
	}
	k := &Keys{Members: pf.Members, Share: ks}
	if err := k.check(); err != nil {
		return nil, err
	}
	return k, nil
}

// SaveKeys stores k under a node's data dir: PublicKeyFile world-readable,
// ShareFile 0600, each written to a temporary file and renamed so a crash
// never leaves a torn key behind.
func SaveKeys(dir string, k *Keys) error {
	pub, err := k.MarshalPublic()
	if err != nil {
		return err
	}
	share, err := k.Share.MarshalBinary()
	if err != nil {
		return fmt.Errorf("secureagg: marshal key share: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, ShareFile), share, 0o600); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, PublicKeyFile), pub, 0o644)
}

// LoadKeys reads what SaveKeys stored under dir.
func LoadKeys(dir string) (*Keys, error) {
	pub, err := os.ReadFile(filepath.Join(dir, PublicKeyFile))
	if err != nil {
		return nil, fmt.Errorf("secureagg: load keys: %w", err)
	}
	share, err := os.ReadFile(filepath.Join(dir, ShareFile))
	if err != nil {
		return nil, fmt.Errorf("secureagg: load keys: %w", err)
	}
	return ParseKeys(pub, share)
}

// ReadKeys loads the keys through a job's Secrets (the node's data dir), so
// a job package never needs to know where the data dir is.
func ReadKeys(s job.Secrets) (*Keys, error) {
	v, err := s.Parsed([]string{PublicKeyFile, ShareFile}, func(b [][]byte) (any, error) {
		return ParseKeys(b[0], b[1])
	})
	if err != nil {
		return nil, fmt.Errorf("secureagg: read %s and %s: %w", PublicKeyFile, ShareFile, err)
	}
	return v.(*Keys), nil
}

func writeAtomic(path string, b []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("secureagg: save keys: %w", err)
	}
	if err := atomicfile.Write(path, b, mode); err != nil {
		return fmt.Errorf("secureagg: save keys: %w", err)
	}
	return nil
}
