package secureagg

import (
	"io"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
)

// Keys is this party's share of the consortium's threshold Paillier key
// (package keyring owns it, its files and their encodings).
type Keys = keyring.Paillier

// ErrKeys wraps every problem with stored or dealt key material.
var ErrKeys = keyring.ErrKeys

// The names below forward to package keyring, which owns the key files.
// They stay while other packages (bicluster, the keygen job's Paillier
// steps) still name them here.
const (
	// Deprecated: use keyring.PaillierPublicFile.
	PublicKeyFile = keyring.PaillierPublicFile
	// Deprecated: use keyring.PaillierShareFile.
	ShareFile = keyring.PaillierShareFile
)

// Deal deals a threshold Paillier key over members.
//
// Deprecated: use keyring.Deal.
func Deal(random io.Reader, bits int, members []string, threshold int) (*paillier.ThresholdPublicKey, map[string]*Keys, error) {
	return keyring.Deal(random, bits, members, threshold)
}

// SaveKeys stores k under a node's data dir.
//
// Deprecated: use keyring.SavePaillier.
func SaveKeys(dir string, k *Keys) error { return keyring.SavePaillier(dir, k) }

// ReadKeys reads the key through a job's Secrets.
//
// Deprecated: use keyring.ReadPaillier.
func ReadKeys(s job.Secrets) (*Keys, error) { return keyring.ReadPaillier(s) }

// ParseKeys parses the key files' contents.
//
// Deprecated: use keyring.ParsePaillier.
func ParseKeys(public, share []byte) (*Keys, error) { return keyring.ParsePaillier(public, share) }

// LoadKeys reads the key from a node's data dir.
//
// Deprecated: use keyring.LoadPaillier.
func LoadKeys(dir string) (*Keys, error) { return keyring.LoadPaillier(dir) }
