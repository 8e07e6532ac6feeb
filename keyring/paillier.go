package keyring

import (
	"encoding/hex"
	"fmt"
	"io"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// Paillier is what a node holds of the consortium's threshold Paillier key:
// its own share (whose Public field is the consortium's public key) and the
// member list fixed at key generation. Members is sorted and Members[i-1]
// holds the share with index i; the mapping is stored with the public key
// rather than derived from the current membership, so a job over a subset
// of the members, or a later membership change, cannot shift it.
type Paillier struct {
	Members []string
	Share   *paillier.KeyShare
}

// Public returns the consortium's threshold public key.
func (k *Paillier) Public() *paillier.ThresholdPublicKey { return k.Share.Public }

// Index returns the share index of a member, or 0 if name is not a member.
func (k *Paillier) Index(name string) int {
	i, ok := slices.BinarySearch(k.Members, name)
	if !ok {
		return 0
	}
	return i + 1
}

// Check validates the invariants every user of the key relies on.
func (k *Paillier) Check() error {
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
// returns the public key and each member's key. threshold <= 0 picks the
// honest-majority default ⌊(N−1)/2⌋ (Phoenix needs a majority of honest
// parties to decrypt), except for two members: ⌊1/2⌋ = 0 would let either
// share decrypt alone (and paillier refuses its equal verification keys),
// so two members get a 2-of-2 key. Neither can then decrypt alone, but an
// honest majority is impossible with two: either member can block every
// decryption, so a bad share cannot be excluded and fails the aggregation
// instead. The dealer sees every share: it is for tests and
// single-operator setups; the keygen job generates the key without one.
func Deal(random io.Reader, bits int, members []string, threshold int) (*paillier.ThresholdPublicKey, map[string]*Paillier, error) {
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
		return nil, nil, fmt.Errorf("keyring: deal threshold key: %w", err)
	}
	keys, err := AssignShares(sorted, shares)
	if err != nil {
		return nil, nil, err
	}
	return pk, keys, nil
}

// AssignShares gives share i to the i-th of the sorted members.
func AssignShares(sorted []string, shares []*paillier.KeyShare) (map[string]*Paillier, error) {
	out := make(map[string]*Paillier, len(sorted))
	for _, s := range shares {
		if s.Index < 1 || s.Index > len(sorted) {
			return nil, fmt.Errorf("%w: dealt share index %d", ErrKeys, s.Index)
		}
		out[sorted[s.Index-1]] = &Paillier{Members: sorted, Share: s}
	}
	if len(out) != len(sorted) {
		return nil, fmt.Errorf("%w: dealer returned %d shares for %d members", ErrKeys, len(out), len(sorted))
	}
	return out, nil
}

type paillierPublic struct {
	Members []string `msgpack:"members"`
	Key     []byte   `msgpack:"key"`
}

// MarshalPublic encodes the public half of k (public key and member list),
// the content of PaillierPublicFile.
func (k *Paillier) MarshalPublic() ([]byte, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	key, err := k.Share.Public.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("keyring: marshal public key: %w", err)
	}
	return wire.Marshal(paillierPublic{Members: k.Members, Key: key})
}

// ParsePaillier rebuilds a key from the contents of PaillierPublicFile and
// PaillierShareFile, checking that the share belongs to the public key and
// matches its verification key.
func ParsePaillier(public, share []byte) (*Paillier, error) {
	var pf paillierPublic
	if err := wire.Unmarshal(public, &pf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeys, PaillierPublicFile, err)
	}
	pk, err := paillier.UnmarshalThresholdPublicKey(pf.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeys, PaillierPublicFile, err)
	}
	ks, err := paillier.UnmarshalKeyShare(share)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeys, PaillierShareFile, err)
	}
	if ks.Public == nil {
		ks.Public = pk
	} else if ks.Public.KeyID != pk.KeyID {
		return nil, fmt.Errorf("%w: the share belongs to another key than %s", ErrKeys, PaillierPublicFile)
	}
	k := &Paillier{Members: pf.Members, Share: ks}
	if err := k.Check(); err != nil {
		return nil, err
	}
	return k, nil
}

// paillierFiles are k's share and public file, share first.
func paillierFiles(k *Paillier) ([]file, error) {
	pub, err := k.MarshalPublic()
	if err != nil {
		return nil, err
	}
	share, err := k.Share.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("keyring: marshal key share: %w", err)
	}
	return []file{{PaillierShareFile, share, 0o600}, {PaillierPublicFile, pub, 0o644}}, nil
}

// SavePaillier stores k under a node's data dir: PaillierShareFile (0600),
// then PaillierPublicFile (0644), each replaced whole.
func SavePaillier(dataDir string, k *Paillier) error {
	files, err := paillierFiles(k)
	if err != nil {
		return err
	}
	return writeAll(dirStore(dataDir), files...)
}

// InstallPaillier stores k, and its info, through a job's Secrets (the
// keygen job installing the key it generated). A node that keeps a pool of
// randomisers (RandomizerSource) starts the new key's at once.
func InstallPaillier(s job.Secrets, k *Paillier, info Info) error {
	files, err := paillierFiles(k)
	if err != nil {
		return err
	}
	inf, err := info.file(PaillierInfoFile)
	if err != nil {
		return err
	}
	if err := writeAll(secretsStore{s}, append(files, inf)...); err != nil {
		return err
	}
	PaillierRandomizers(s, k)
	return nil
}

// StagePaillier writes k's share and public file under dir
// (slash-separated, inside the data dir) through Secrets, for a key that is
// not installed yet (the keygen job's staging area); ReadStagedPaillier
// reads it back.
func StagePaillier(s job.Secrets, dir string, k *Paillier) error {
	files, err := paillierFiles(k)
	if err != nil {
		return err
	}
	return stage(s, dir, files)
}

// ReadStagedPaillier reads a key StagePaillier wrote under dir.
func ReadStagedPaillier(s job.Secrets, dir string) (*Paillier, error) {
	pub, share, err := readStaged(s, dir, PaillierPublicFile, PaillierShareFile)
	if err != nil {
		return nil, err
	}
	return ParsePaillier(pub, share)
}

// PaillierInfo describes k, made as said (MadeDealer or MadeDealerless) by
// job (empty for a dealt key).
func PaillierInfo(k *Paillier, made, job string) Info {
	pk := k.Public()
	return Info{Made: made, KeyID: hex.EncodeToString(pk.KeyID[:]), Bits: pk.N.BitLen(), Parties: slices.Clone(k.Members),
		Threshold: pk.Threshold + 1, Job: job}
}

// LoadPaillier reads what SavePaillier stored under dataDir.
func LoadPaillier(dataDir string) (*Paillier, error) {
	return loadPaillier(dirStore(dataDir))
}

func loadPaillier(st store) (*Paillier, error) {
	pub, err := st.read(PaillierPublicFile)
	if err != nil {
		return nil, err
	}
	share, err := st.read(PaillierShareFile)
	if err != nil {
		return nil, err
	}
	return ParsePaillier(pub, share)
}

// ReadPaillier reads the key through a job's Secrets, parsed once for as
// long as the files are unchanged (validating a share costs a full-size
// exponentiation), so a job package never needs to know where the data dir
// is.
func ReadPaillier(s job.Secrets) (*Paillier, error) {
	v, err := s.Parsed([]string{PaillierPublicFile, PaillierShareFile}, func(b [][]byte) (any, error) {
		return ParsePaillier(b[0], b[1])
	})
	if err != nil {
		return nil, fmt.Errorf("%w: read %s and %s: %w", ErrKeys, PaillierPublicFile, PaillierShareFile, err)
	}
	return v.(*Paillier), nil
}
