package sim

import (
	"crypto/rand"
	"fmt"
	"path/filepath"

	"github.com/cohortdm/cohort/secureagg"
)

// ThresholdKeys returns a cluster Setup that deals the consortium's
// threshold key (trusted dealer, modulus of the given bits, honest-majority
// threshold) and installs each member's share in its data dir. In a
// simulation one operator owns every node, so a dealer is no weaker than the
// setting itself.
func ThresholdKeys(bits int) func(names []string) (func(name, dataDir string) error, error) {
	return func(names []string) (func(name, dataDir string) error, error) {
		_, keys, err := secureagg.Deal(rand.Reader, bits, names, 0)
		if err != nil {
			return nil, fmt.Errorf("sim: deal threshold key: %w", err)
		}
		return func(name, dataDir string) error {
			k, ok := keys[name]
			if !ok {
				return fmt.Errorf("sim: no key share for %s", name)
			}
			return secureagg.SaveKeys(filepath.Clean(dataDir), k)
		}, nil
	}
}
