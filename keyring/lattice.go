package keyring

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
)

// latticeFiles are k's share and public file, share first.
func latticeFiles(k *lattice.Keys) ([]file, error) {
	pub, err := k.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("keyring: marshal lattice public key: %w", err)
	}
	share, err := k.MarshalShare()
	if err != nil {
		return nil, fmt.Errorf("keyring: marshal lattice key share: %w", err)
	}
	return []file{{LatticeShareFile, share, 0o600}, {LatticePublicFile, pub, 0o644}}, nil
}

// SaveLattice stores a member's lattice key under its data dir:
// LatticeShareFile (0600), then LatticePublicFile (0644).
func SaveLattice(dataDir string, k *lattice.Keys) error {
	files, err := latticeFiles(k)
	if err != nil {
		return err
	}
	return writeAll(dirStore(dataDir), files...)
}

// InstallLattice stores a member's lattice key, and its info, through a
// job's Secrets (the keygen job installing the key it generated).
func InstallLattice(s job.Secrets, k *lattice.Keys, info Info) error {
	files, err := latticeFiles(k)
	if err != nil {
		return err
	}
	inf, err := info.file(LatticeInfoFile)
	if err != nil {
		return err
	}
	return writeAll(secretsStore{s}, append(files, inf)...)
}

// LoadLattice reads what SaveLattice stored under dataDir.
func LoadLattice(dataDir string) (*lattice.Keys, error) {
	pub, err := dirStore(dataDir).read(LatticePublicFile)
	if err != nil {
		return nil, err
	}
	share, err := dirStore(dataDir).read(LatticeShareFile)
	if err != nil {
		return nil, err
	}
	k, err := lattice.ParseKeys(pub, share)
	if err != nil {
		return nil, fmt.Errorf("%w: %s and %s: %w", ErrKeys, LatticePublicFile, LatticeShareFile, err)
	}
	return k, nil
}

// ReadLattice reads a member's lattice key through a job's Secrets, parsed
// once for as long as the files are unchanged.
func ReadLattice(s job.Secrets) (*lattice.Keys, error) {
	v, err := s.Parsed([]string{LatticePublicFile, LatticeShareFile}, func(b [][]byte) (any, error) {
		return lattice.ParseKeys(b[0], b[1])
	})
	if err != nil {
		return nil, fmt.Errorf("%w: read %s and %s: %w", ErrKeys, LatticePublicFile, LatticeShareFile, err)
	}
	return v.(*lattice.Keys), nil
}

// StageLattice writes a member's lattice key under dir (slash-separated,
// inside the data dir) through Secrets, for a key that is not installed
// yet (the keygen job's staging area); ReadStagedLattice reads it back.
func StageLattice(s job.Secrets, dir string, k *lattice.Keys) error {
	files, err := latticeFiles(k)
	if err != nil {
		return err
	}
	return stage(s, dir, files)
}

// ReadStagedLattice reads a key StageLattice wrote under dir.
func ReadStagedLattice(s job.Secrets, dir string) (*lattice.Keys, error) {
	pub, share, err := readStaged(s, dir, LatticePublicFile, LatticeShareFile)
	if err != nil {
		return nil, err
	}
	k, err := lattice.ParseKeys(pub, share)
	if err != nil {
		return nil, fmt.Errorf("%w: staged lattice key: %w", ErrKeys, err)
	}
	return k, nil
}

// LatticeInfo describes k, made as said (MadeDealer or MadeDealerless) by
// job (empty for a dealt key).
func LatticeInfo(k *lattice.Keys, made, job string) Info {
	id := k.ID()
	return Info{Made: made, KeyID: hex.EncodeToString(id[:]), Params: k.Params.Name(), Parties: slices.Clone(k.Members),
		Threshold: k.Quorum, Job: job}
}

// DealLattice generates a lattice key for the members (sorted) in one
// process, playing every member's part of mhe's key generation: for tests,
// `cohort sim` and `cohort keys deal --scheme bgv`, where one operator owns
// every node (that process sees every member's secret). quorum <= 0 picks
// lattice.DefaultQuorum. The keygen job generates the key without anyone
// seeing another member's share.
func DealLattice(members []string, quorum int) (map[string]*lattice.Keys, error) {
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	if quorum <= 0 {
		quorum = lattice.DefaultQuorum(len(sorted))
	}
	params, err := lattice.NewParams(lattice.ParamsBGV13)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	kg, err := lattice.NewKeyGen(params, sorted, quorum, nonce)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeys, err)
	}
	var pubFold *lattice.PublicKeyShare
	secretFolds := make([]*lattice.SecretShare, len(sorted))
	for _, m := range sorted {
		pub, secrets, err := kg.GenShares(m)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeys, err)
		}
		if pubFold == nil {
			pubFold = pub
		} else if err := kg.AggregatePublic(pubFold, pub, pubFold); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeys, err)
		}
		for j, s := range secrets {
			if secretFolds[j] == nil {
				secretFolds[j] = s
			} else if err := kg.AggregateSecret(secretFolds[j], s, secretFolds[j]); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrKeys, err)
			}
		}
	}
	out := make(map[string]*lattice.Keys, len(sorted))
	for j, m := range sorted {
		k, err := kg.Finalise(m, pubFold, secretFolds[j])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeys, err)
		}
		out[m] = k
	}
	return out, nil
}
