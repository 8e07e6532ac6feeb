package sim

import (
	"crypto/rand"
	"fmt"
	"path/filepath"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// ThresholdKeys returns a cluster Setup that gives the consortium its two
// keys and installs each member's shares in its data dir: the threshold
// Paillier key (dealt by a trusted dealer, modulus of the given bits,
// honest-majority threshold) and the lattice key of secure aggregation's
// lattice backend (generated in this process, default quorum), so that a
// job may use either backend. In a simulation one operator owns every
// node, so a dealer is no weaker than the setting itself. The lattice key
// is left out for more members than it takes (lattice.MaxMembers).
func ThresholdKeys(bits int) func(names []string) (func(name, dataDir string) error, error) {
	return func(names []string) (func(name, dataDir string) error, error) {
		_, keys, err := keyring.Deal(rand.Reader, bits, names, 0)
		if err != nil {
			return nil, fmt.Errorf("sim: deal threshold key: %w", err)
		}
		var latticeKeys map[string]*lattice.Keys
		if len(names) <= lattice.MaxMembers {
			if latticeKeys, err = keyring.DealLattice(names, 0); err != nil {
				return nil, fmt.Errorf("sim: deal lattice key: %w", err)
			}
		}
		return func(name, dataDir string) error {
			k, ok := keys[name]
			if !ok {
				return fmt.Errorf("sim: no key share for %s", name)
			}
			if err := keyring.SavePaillier(filepath.Clean(dataDir), k); err != nil {
				return err
			}
			if l, ok := latticeKeys[name]; ok {
				return keyring.SaveLattice(filepath.Clean(dataDir), l)
			}
			return nil
		}, nil
	}
}
